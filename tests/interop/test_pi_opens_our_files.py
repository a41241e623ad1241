"""pi 0.73.1 and pi 1.5.2 open and continue every kind of session file pi-tui writes (issues 11
and 27).

Each case writes a session through one of pi-tui's real entry points (the ``pi-tui`` console
script in print, json or rpc mode, the Textual app driven by pilot, the agent API for what has no
command), checks that the file holds the case it is about, then :func:`check_pi_continues`:
pi's ``-p next`` exits 0, pi's interactive mode draws the chat, /session and /tree and exits 0,
and pi's request holds the same messages as pi-tui's for the same file. Each file is written once
and checked with every pi of :data:`PI_VERSIONS`.

The cases written by a pi-tui subprocess (``write_*`` below, listed in :data:`CASES`) run side by
side in one module fixture to keep the folder fast; each still passes or fails on its own.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.interop.continuation import (
    CRASH,
    MODEL,
    PROVIDER,
    Outcome,
    Workspace,
    check_with_every_pi,
    entries,
    messages_of,
    open_in_pi,
    raise_first_failure,
    require_node,
    serving,
)
from tests.support.bedrock_server import BedrockServer, load_script
from tests.support.model_server import HttpError, RawStream, Scripted, ToolCallSpec
from tests.support.real_pi import PI_VERSIONS
from tests.support.waiting import poll_until, wait_until

pytestmark = pytest.mark.pi_interop

PNG_2X2_RED = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


@pytest.fixture(autouse=True, scope="module")
def real_pi() -> None:
    for version in PI_VERSIONS:
        require_node(version)


def check_every_pi_continues(workspace: Workspace, session: Path) -> None:
    raise_first_failure(check_with_every_pi(workspace, session))


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "case")


def last_assistant(path: Path) -> dict:
    return messages_of(path, "assistant")[-1]


def write_error_reply_after_retries(workspace: Workspace) -> None:
    with serving(workspace, *[HttpError(500)] * 4) as server:
        result = workspace.pi_tui("-p", "hello")
        assert result.returncode == 1 and len(server.requests) == 4, result.stderr
    failed = last_assistant(workspace.session_file())
    assert failed["stopReason"] == "error" and failed["content"] == []


def test_the_check_catches_the_crash_it_was_built_for(workspace: Workspace) -> None:
    """An assistant message saved with ``"usage": {}`` (as pi-tui once did for an aborted reply)
    passes pi's print mode but kills its interactive mode: the check must see that."""
    with serving(workspace, *[HttpError(500)] * 4):
        workspace.pi_tui("-p", "hello")
    session = workspace.session_file()
    lines = []
    for entry in entries(session):
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant":
            entry["message"]["usage"] = {}
        lines.append(json.dumps(entry))
    broken = workspace.root / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    shown = open_in_pi(workspace, broken, workspace.root / "interactive")
    assert shown.returncode != 0 and CRASH.search(shown.screen), shown.screen[-2000:]


def write_overloaded_error_in_json_mode(workspace: Workspace) -> None:
    with serving(workspace, *[HttpError(529, message="Overloaded")] * 4):
        result = workspace.pi_tui("--mode", "json", "-p", "hello")
        assert result.returncode == 1, result.stderr
        assert any(json.loads(line)["type"] == "agent_end" for line in result.stdout.splitlines())
    session = workspace.session_file()
    assert last_assistant(session)["stopReason"] == "error"


def write_aborted_stream(workspace: Workspace) -> None:
    story = Scripted(text="Once upon a time " * 100, event_delay=0.02)
    with serving(workspace, story), workspace.rpc() as rpc:
        rpc.call({"type": "prompt", "message": "tell me a story"})
        rpc.wait_for(lambda r: r.get("assistantMessageEvent", {}).get("type") == "text_delta")
        rpc.call({"type": "abort"})  # answered once the run has ended
        rpc.wait_for(lambda r: r.get("type") == "agent_end", seen=True)
    aborted = last_assistant(workspace.session_file())
    assert aborted["stopReason"] == "aborted" and aborted["content"][0]["text"].startswith("Once")


def write_abort_before_the_first_byte(workspace: Workspace) -> None:
    with serving(workspace, Scripted(text="late", first_byte_delay=5)) as server, workspace.rpc() as rpc:
        rpc.call({"type": "prompt", "message": "are you there?"})
        poll_until(lambda: server.requests, "the prompt's request")
        rpc.call({"type": "abort"})  # answered once the run has ended
        rpc.wait_for(lambda r: r.get("type") == "agent_end", seen=True)
    aborted = last_assistant(workspace.session_file())
    assert aborted["stopReason"] == "aborted" and aborted["content"] == []


def write_tool_errors(workspace: Workspace) -> None:
    replies = [
        Scripted(text="Reading.", tool_calls=[ToolCallSpec("read", {"path": "MISSING.md"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "echo oops >&2; exit 3"})]),
        Scripted(tool_calls=[ToolCallSpec("no_such_tool", {"x": 1})]),
        Scripted(text="Nothing worked."),
    ]
    with serving(workspace, *replies):
        result = workspace.pi_tui("--mode", "json", "-p", "inspect")
        assert result.returncode == 0, result.stderr
    results = messages_of(workspace.session_file(), "toolResult")
    assert [r["isError"] for r in results] == [True, True, True]


def write_aborted_tool_and_user_bash(workspace: Workspace) -> None:
    long_call = Scripted(tool_calls=[ToolCallSpec("bash", {"command": "sleep 30"})])
    with serving(workspace, long_call), workspace.rpc() as rpc:
        rpc.call({"type": "bash", "command": "echo hello from the user; exit 4"})
        rpc.call({"type": "prompt", "message": "wait a while"})
        rpc.wait_for(lambda r: r.get("type") == "tool_execution_start")
        rpc.call({"type": "abort"})  # answered once the run has ended
        rpc.wait_for(lambda r: r.get("type") == "agent_end", seen=True)
    session = workspace.session_file()
    (result,) = messages_of(session, "toolResult")
    assert result["isError"] and result["toolName"] == "bash"
    assert messages_of(session, "bashExecution")[0]["exitCode"] == 4


def write_compaction_and_session_name(workspace: Workspace) -> None:
    with serving(workspace) as server, workspace.rpc() as rpc:
        for prompt in ("Let's plan the demo project.", "What does the README say?", "x" * 300):
            rpc.prompt(prompt)
        summary = Scripted(text="## Goal\nPlan the demo project.")
        server.queue(summary, summary)  # the history, and the start of a turn cut in two
        response = rpc.call({"type": "compact", "customInstructions": "keep the goal"})
        assert "## Goal\nPlan the demo project." in response["data"]["summary"]
        rpc.call({"type": "set_session_name", "name": "Interop demo"})
        rpc.prompt("Continue please")
    kinds = [entry["type"] for entry in entries(workspace.session_file())]
    assert "compaction" in kinds and "session_info" in kinds


def write_chosen_id_and_name(workspace: Workspace) -> None:
    """pi 1.x's ``--session-id`` and ``-n``: a header id that is no UUID, a session_info first."""
    with serving(workspace):
        result = workspace.pi_tui("--session-id", "release-2.0", "-n", "Release notes", "-p", "hello")
        assert result.returncode == 0, result.stderr
    header, first, *_ = entries(workspace.session_file())
    assert header["id"] == "release-2.0" and first == {
        **first,
        "type": "session_info",
        "name": "Release notes",
    }


def write_bash_left_out_of_context(workspace: Workspace) -> None:
    """rpc ``bash`` with pi 1.x's ``excludeFromContext``, then a turn."""
    with serving(workspace), workspace.rpc() as rpc:
        rpc.call({"type": "bash", "command": "echo kept out", "excludeFromContext": True})
        rpc.prompt("hello after the command")
    (run,) = messages_of(workspace.session_file(), "bashExecution")
    assert run["excludeFromContext"] is True


def write_fork_with_model_and_thinking_changes(workspace: Workspace) -> None:
    with serving(workspace), workspace.rpc() as rpc:
        rpc.prompt("Tell me about apples")
        rpc.call({"type": "set_thinking_level", "level": "high"})
        rpc.prompt("Tell me about bananas")
        rpc.prompt("Tell me about cherries")
        forks = rpc.call({"type": "get_fork_messages"})["data"]["messages"]
        rpc.call({"type": "fork", "entryId": forks[1]["entryId"]})  # at "bananas"
        rpc.call({"type": "set_thinking_level", "level": "off"})
        rpc.prompt("Tell me about blueberries")
    fork = workspace.session_file()
    assert "parentSession" in entries(fork)[0]
    texts = [json.dumps(m["content"]) for m in messages_of(fork, "user")]
    assert "apples" in texts[0] and "blueberries" in texts[-1] and not any("bananas" in t for t in texts)


def write_ttsr_injection(workspace: Workspace) -> None:
    rules = workspace.project / ".agent" / "rules"
    rules.mkdir(parents=True)
    (rules / "no-print.md").write_text("---\ncondition: print\\(\nscope: text\n---\nUse the logger.\n")
    replies = [
        Scripted(text="Debug with print(x) then more words follow here", event_delay=0.03),
        Scripted(text="Use logger.debug(x)."),
    ]
    with serving(workspace, *replies):
        result = workspace.pi_tui("-p", "how to debug?")
        assert result.returncode == 0 and result.stdout == "Use logger.debug(x).\n", result.stderr
    kinds = [entry["type"] for entry in entries(workspace.session_file())]
    assert "ttsr_injection" in kinds and "custom_message" in kinds


def write_thinking_with_signatures(workspace: Workspace) -> None:
    replies = [
        Scripted(
            thinking="The user wants the README; read it.",
            thinking_signature="c2lnbmF0dXJlLW9uZQ==",
            text="Reading it.",
            tool_calls=[ToolCallSpec("read", {"path": "README.md"})],
        ),
        Scripted(thinking="It is a demo.", thinking_signature="c2lnbmF0dXJlLXR3bw==", text="A tiny demo."),
    ]
    with serving(workspace, *replies):
        result = workspace.pi_tui("--thinking", "high", "-p", "What does the README say?")
        assert result.returncode == 0, result.stderr
    thinking = [
        block
        for message in messages_of(workspace.session_file(), "assistant")
        for block in message["content"]
        if block["type"] == "thinking"
    ]
    signatures = [block["thinkingSignature"] for block in thinking]
    assert len(signatures) == 2  # Responses keeps the whole reasoning item, as pi does
    assert "c2lnbmF0dXJlLW9uZQ==" in signatures[0] and "c2lnbmF0dXJlLXR3bw==" in signatures[1]


def write_image_attachment(workspace: Workspace) -> None:
    (workspace.project / "red.png").write_bytes(PNG_2X2_RED)
    with serving(workspace, Scripted(text="A red square.")):
        result = workspace.pi_tui("-p", "@red.png", "What is in this image?")
        assert result.returncode == 0, result.stderr
    (user,) = messages_of(workspace.session_file(), "user")
    assert [block["type"] for block in user["content"]] == ["text", "image"]


def test_custom_entries_and_messages_through_the_agent(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi-tui has no command for these (pi's extensions write them); the agent's manager does."""
    from pi_tui.ai.http import close_shared_client
    from pi_tui.startup import StartOptions, start

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(workspace.agent))
    with serving(workspace, Scripted(text="Noted.")):
        started = start(StartOptions(cwd=str(workspace.project), provider=PROVIDER, model=MODEL))
        agent = started.agent
        agent.manager.append_custom_entry("interop-state", {"step": 1, "files": ["README.md"]})
        agent.manager.append_custom_message_entry("deploy-note", "Deployed build 42.", True, {"build": 42})
        agent.manager.append_custom_message_entry("hidden-note", "Only the model sees this.", False)

        async def run() -> None:
            try:
                await agent.prompt("What happened?")
            finally:
                await close_shared_client()

        asyncio.run(run())
        agent.manager.close()
    kinds = [entry["type"] for entry in entries(workspace.session_file())]
    assert kinds.count("custom_message") == 2 and "custom" in kinds
    check_every_pi_continues(workspace, workspace.session_file())


async def test_labels_name_and_branch_summary_through_the_app(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.ai.http import close_shared_client
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.transcript import SummaryItem
    from tests.tui.conftest import make_app, screen_text, settle
    from tests.tui.test_tree import open_tree

    monkeypatch.setattr(PiApp, "CURSOR_BLINK", False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(workspace.agent))
    with serving(workspace) as server:
        app = make_app(workspace.project, provider=PROVIDER, model=MODEL)
        async with app.run_test(size=(110, 44)) as pilot:
            server.queue(Scripted(text="Answer one."), Scripted(text="Answer two."))
            for prompt in (
                "first question",
                "!echo shown to the model",
                "!!echo kept from it",
                "second question",
            ):
                await pilot.press(*prompt, "enter")
                await settle(pilot, app)
            await open_tree(pilot, app)
            await pilot.press("up", "up", "up", "up", "L")  # past two bash rows to: assistant: Answer one
            await pilot.pause()
            await pilot.press(*"milestone", "enter", "escape")
            await pilot.pause()
            await open_tree(pilot, app)
            server.queue(Scripted(text="Tried the second question; it went nowhere."))
            await pilot.press("up", "enter", "down", "enter")  # user: second question -> Summarize
            await settle(pilot, app, timeout=15)
            await wait_until(
                pilot,
                lambda: any(isinstance(item, SummaryItem) for item in app.chat.items),
                "the summary item",
            )
            await pilot.press("ctrl+c", *"go on", "enter")
            await settle(pilot, app)
            app.run_slash("label", "checkpoint-1")
            await wait_until(pilot, lambda: "checkpoint-1" in screen_text(app), "the label on screen")
            app.run_slash("name", "Interop demo")
            await wait_until(
                pilot, lambda: app.agent.manager.get_session_name() == "Interop demo", "the name"
            )
            await close_shared_client()
    kinds = [entry["type"] for entry in entries(workspace.session_file())]
    assert kinds.count("label") == 2 and "branch_summary" in kinds and kinds[-1] == "session_info", kinds
    written = entries(workspace.session_file())
    labels = {e["label"]: e["targetId"] for e in written if e["type"] == "label"}
    (answer_one,) = [e["id"] for e in written if "Answer one." in json.dumps(e.get("message", {}))]
    assert labels["milestone"] == answer_one
    excluded = [m["excludeFromContext"] for m in messages_of(workspace.session_file(), "bashExecution")]
    assert excluded == [False, True]
    await asyncio.to_thread(check_every_pi_continues, workspace, workspace.session_file())


def write_every_tool_with_details_and_cut_output(workspace: Workspace) -> None:
    """pi draws a tool result with its own renderer, which reads the tool's ``details``
    (diff, truncation, full output path, limits): each of pi-tui's shapes must be one pi draws."""
    workspace.tools = "read,bash,edit,write,grep,find,ls"
    (workspace.project / "src").mkdir()
    (workspace.project / "src" / "app.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    (workspace.project / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
    for n in range(120):
        (workspace.project / "src" / f"mod_{n:03}.py").write_text(f"VALUE_{n} = {n}\n")
    calls = [
        ToolCallSpec("read", {"path": "long.txt"}),
        ToolCallSpec("read", {"path": "src/app.py", "offset": 2, "limit": 1}),
        ToolCallSpec("bash", {"command": "seq 1 40000"}),
        ToolCallSpec("edit", {"path": "src/app.py", "edits": [{"oldText": "Hello", "newText": "Hi"}]}),
        ToolCallSpec("write", {"path": "NOTES.md", "content": "# Notes\n"}),
        ToolCallSpec("grep", {"pattern": "VALUE", "path": "src", "limit": 5}),
        ToolCallSpec("find", {"pattern": "*.py", "limit": 7}),
        ToolCallSpec("ls", {"path": "src", "limit": 9}),
    ]
    replies = [Scripted(text=f"Step {n}.", tool_calls=[call]) for n, call in enumerate(calls)]
    with serving(workspace, *replies, Scripted(text="All done.")):
        result = workspace.pi_tui("-p", "use every tool")
        assert result.returncode == 0 and result.stdout == "All done.\n", result.stderr
    results = messages_of(workspace.session_file(), "toolResult")
    assert [r["toolName"] for r in results] == [c.name for c in calls]
    assert not any(r["isError"] for r in results), [r["content"] for r in results if r["isError"]]


def write_reply_that_fails_before_any_request(workspace: Workspace) -> None:
    """A model chosen over rpc whose provider has no API key: the reply fails at once, before
    any request, and is still saved as an assistant message pi can draw (usage included)."""
    with serving(workspace, Scripted(text="First answer.")) as server, workspace.rpc() as rpc:
        rpc.prompt("hello")
        rpc.call({"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
        rpc.prompt("and now?")
        assert len(server.requests) == 1
    failed = last_assistant(workspace.session_file())
    assert failed["stopReason"] == "error" and failed["provider"] == "anthropic"
    assert failed["usage"]["cost"]["total"] == 0


CODEX_ACCOUNT = "acct-interop-5e1f"


def _b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


CODEX_TOKEN = ".".join(
    (
        _b64url({"alg": "RS256", "typ": "JWT"}),
        _b64url({"https://api.openai.com/auth": {"chatgpt_account_id": CODEX_ACCOUNT}, "exp": 4102444800}),
        "c2lnbmF0dXJl",
    )
)
"""A ChatGPT login's access token (a JWT whose account claim Codex requests carry)."""


def mistral_stream(*deltas: dict[str, Any], finish: str) -> RawStream:
    """Mistral's chunks (tests/data/mistral_conversations/README.md): thinking and text as
    ``content`` parts, whole tool calls, the finish reason on the last."""
    base = {"id": "5f0c1e2d3b4a", "object": "chat.completion.chunk", "model": "magistral-medium-latest"}
    last = len(deltas) - 1
    chunks: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish if n == last else None}]}
        for n, delta in enumerate(deltas)
    ]
    chunks[-1]["usage"] = {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
    return RawStream("".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n")


def write_new_api_kinds_in_one_session(workspace: Workspace) -> None:
    """One rpc session that switches (``set_model``) from the loopback model to a ChatGPT login
    on ``openai-codex-responses``, to Mistral (``mistral-conversations``) and to Amazon Bedrock
    (``bedrock-converse-stream``, a bearer key), each thinking and/or calling ``read``: the file
    holds assistant messages of the three API kinds pi-tui gained, which pi must replay to the
    model the file is continued with."""
    thought = "The user wants the README; read it."
    codex_turn = Scripted(
        thinking=thought,
        thinking_signature="ZW5jcnlwdGVkLXJlYXNvbmluZw==",
        text="Reading it.",
        tool_calls=[ToolCallSpec("read", {"path": "README.md"})],
    )
    mistral_turn = mistral_stream(
        {"role": "assistant", "content": ""},
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Read it again."}]}]},
        {"content": [{"type": "text", "text": "Checking."}]},
        {
            "tool_calls": [
                {"id": "Rd7mQ2xZa", "function": {"name": "read", "arguments": '{"path": "README.md"}'}}
            ]
        },
        finish="tool_calls",
    )
    with serving(workspace) as server, BedrockServer(bearer="bedrock-key-7c") as bedrock:
        models = json.loads((workspace.agent / "models.json").read_text())
        models["providers"].update(
            {
                "openai-codex": {"baseUrl": server.base_url + "/backend-api"},
                "mistral": {"baseUrl": server.base_url},
                "amazon-bedrock": {"baseUrl": bedrock.base_url},
            }
        )
        (workspace.agent / "models.json").write_text(json.dumps(models))
        login = {"type": "oauth", "access": CODEX_TOKEN, "refresh": "rt-interop", "accountId": CODEX_ACCOUNT}
        auth = {
            "openai-codex": {**login, "expires": 4102444800000},
            "mistral": {"type": "api_key", "key": "mk-interop"},
            "amazon-bedrock": {"type": "api_key", "key": "bedrock-key-7c"},
        }
        (workspace.agent / "auth.json").write_text(json.dumps(auth))
        (workspace.agent / "auth.json").chmod(0o600)
        bedrock.replies += [load_script("tool_call.json"), load_script("text.json")]
        with workspace.rpc() as rpc:
            rpc.prompt("hello")
            rpc.call({"type": "set_model", "provider": "openai-codex", "modelId": "gpt-5.6-sol"})
            rpc.call({"type": "set_thinking_level", "level": "high"})
            server.queue(codex_turn, Scripted(text="A tiny demo, says Codex."))
            rpc.prompt("What does the README say?")
            rpc.call({"type": "set_model", "provider": "mistral", "modelId": "magistral-medium-latest"})
            server.queue(mistral_turn, Scripted(text="Still a tiny demo, says Mistral."))
            rpc.prompt("Check it again")
            rpc.call(
                {
                    "type": "set_model",
                    "provider": "amazon-bedrock",
                    "modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                }
            )
            rpc.prompt("Once more, from Bedrock")
        paths = [request.path for request in server.requests]
    assert paths.count("/backend-api/codex/responses") == 2 and paths.count("/v1/chat/completions") == 2, (
        paths
    )
    assert [r.auth_ok for r in bedrock.requests] == [True, True]
    replies = messages_of(workspace.session_file(), "assistant")
    apis = [(m["api"], m["stopReason"]) for m in replies]
    assert apis == [
        ("openai-completions", "stop"),
        *[("openai-codex-responses", "toolUse"), ("openai-codex-responses", "stop")],
        *[("mistral-conversations", "toolUse"), ("mistral-conversations", "stop")],
        *[("bedrock-converse-stream", "toolUse"), ("bedrock-converse-stream", "stop")],
    ], apis
    kinds = {(m["api"], block["type"]) for m in replies for block in m["content"]}
    for api in ("openai-codex-responses", "mistral-conversations", "bedrock-converse-stream"):
        assert (api, "toolCall") in kinds and (api, "text") in kinds, kinds
    assert ("openai-codex-responses", "thinking") in kinds and ("mistral-conversations", "thinking") in kinds
    assert not any(r["isError"] for r in messages_of(workspace.session_file(), "toolResult"))


# --- the subprocess cases, written and checked side by side ------------------------------------

CASES: dict[str, tuple[Callable[[Workspace], None], dict[str, Any]]] = {
    "error-500-after-retries (-p)": (write_error_reply_after_retries, {}),
    "error-529-after-retries (--mode json)": (write_overloaded_error_in_json_mode, {}),
    "aborted-stream (rpc abort)": (write_aborted_stream, {}),
    "aborted-before-first-byte (rpc abort)": (write_abort_before_the_first_byte, {}),
    "failed-before-any-request (rpc set_model, no key)": (write_reply_that_fails_before_any_request, {}),
    "tool-errors (--mode json)": (write_tool_errors, {}),
    "aborted-tool + user bash (rpc)": (write_aborted_tool_and_user_bash, {}),
    "every-tool-details-and-cut-output (-p)": (write_every_tool_with_details_and_cut_output, {}),
    "compaction + session name (rpc)": (write_compaction_and_session_name, {}),
    "chosen session id + name (-p --session-id -n)": (write_chosen_id_and_name, {}),
    "bash excludeFromContext (rpc)": (write_bash_left_out_of_context, {}),
    "ttsr-injection (-p)": (write_ttsr_injection, {}),
    "fork + thinking-level changes (rpc)": (write_fork_with_model_and_thinking_changes, {"reasoning": True}),
    "thinking-signatures (anthropic, -p)": (
        write_thinking_with_signatures,
        {"api": "anthropic-messages", "reasoning": True},
    ),
    "thinking-signatures (openai-responses, -p)": (
        write_thinking_with_signatures,
        {"api": "openai-responses", "reasoning": True},
    ),
    "thinking-signatures (google, -p)": (
        write_thinking_with_signatures,
        {"api": "google-generative-ai", "reasoning": True},
    ),
    "image-attachment (-p @red.png)": (write_image_attachment, {}),
    "codex + mistral + bedrock replies (rpc set_model)": (
        write_new_api_kinds_in_one_session,
        {"other_replay": ("0.73.1",)},
    ),
}
PARALLEL = 4
"""Cases run side by side: each waits mostly on its processes, and one pi run takes a second."""


Outcomes = dict[str, Outcome | BaseException]
"""One case's outcome per pi version (a failure kept for its own test to raise)."""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcomes]:
    """Every case written by pi-tui once and checked with each pi, concurrently; a failure is
    kept for its own test to raise."""
    root = tmp_path_factory.mktemp("cases")

    def run(index: int, name: str) -> Outcomes:
        write, options = CASES[name]
        workspace = Workspace(root / f"case-{index:02}", **options)
        write(workspace)
        return check_with_every_pi(workspace, workspace.session_file())

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {name: pool.submit(run, index, name) for index, name in enumerate(CASES)}
        return {name: _settled(future) for name, future in futures.items()}


def _settled(future: Future[Outcomes]) -> Outcomes:
    """A case's outcomes; a failure to write the file fails it for every pi."""
    failure = future.exception()
    return future.result() if failure is None else dict.fromkeys(PI_VERSIONS, failure)


@pytest.mark.xdist_group("pi-opens-our-files")  # one worker runs the fixture (tests/conftest.py)
@pytest.mark.parametrize("pi", PI_VERSIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_pi_continues_the_file(outcomes: dict[str, Outcomes], case: str, pi: str) -> None:
    outcome = outcomes[case][pi]
    if isinstance(outcome, BaseException):
        raise outcome
    assert outcome.pi.returncode == 0 and outcome.interactive.returncode == 0
