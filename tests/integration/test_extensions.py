"""Python extensions driving the real agent over loopback HTTP: events, hooks, registrations,
actions, failures. Extensions are real files imported by the real loader."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.types import StreamOptions
from pi_tui.config.extension_sources import ExtensionSource
from pi_tui.config.settings import Settings
from pi_tui.extensions.runner import ExtensionRunner
from pi_tui.session import SessionManager
from pi_tui.tools.base import ToolContext, ToolResult
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec, text_reply


@pytest.fixture(autouse=True)
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Extension failures write a log: into the test's folder, not the user's."""
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))
    return tmp_path / "logs"


class EchoTool:
    name = "echo"
    label = "Echo"
    description = "Echo the given text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(dict(args))
        return ToolResult.text(f"echoed {args.get('text')}")


class Harness:
    """An agent on a real session file, a runner, and the lines the runner reported."""

    def __init__(self, server: ModelServer, tmp_path: Path, tools: list[Any] | None = None) -> None:
        self.tmp_path = tmp_path
        self.echo = EchoTool()
        manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        self.agent = AgentSession(
            manager,
            server.model(),
            cwd=tmp_path,
            tools=[self.echo, *(tools or [])],
            system_prompt="base prompt",
            settings=Settings(),
            request_options=lambda _model: StreamOptions(api_key="k", base_delay=0.01),
        )
        self.reported: list[str] = []
        self.runner = ExtensionRunner(self.agent, report=self.reported.append)

    def load(self, name: str, source: str, *, clean: bool = True) -> None:
        folder = self.tmp_path / "extensions"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        self.load_file(path, clean=clean)

    def load_file(self, path: Path, *, clean: bool = True) -> None:
        """Load one extension; ``clean``: it must load without a problem."""
        self.runner.load([ExtensionSource(path, "cli")])
        assert not clean or not self.reported, self.reported

    def messages(self, role: str) -> list[dict[str, Any]]:
        """The saved messages of ``role``, in order."""
        return [e["message"] for e in self.entries() if e.get("message", {}).get("role") == role]

    def entries(self) -> list[dict[str, Any]]:
        self.agent.manager.sync()
        path = self.agent.manager.session_file
        assert path is not None
        return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def run(harness: Harness, *prompts: str) -> None:
    async def main() -> None:
        try:
            await harness.runner.finish_activation()
            await harness.runner.session_start("startup")
            for prompt in prompts:
                await harness.agent.prompt(prompt)
                await harness.runner.settle()
        finally:
            await close_shared_client()

    asyncio.run(main())


def request_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every chat-completions message of a request body."""
    out = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        out.append((message["role"], content or ""))
    return out


def test_notifications_arrive_in_order_to_sync_and_async_handlers(tmp_path: Path) -> None:
    with ModelServer(text_reply("hello")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "watcher",
            """
            import asyncio
            SEEN = []

            def activate(pi):
                pi.on("session_start", lambda event: SEEN.append(("start", event.reason)))
                for name in ("agent_start", "turn_start", "turn_end"):
                    pi.on(name, lambda event, ctx: SEEN.append(event.type))

                async def slow_end(event, ctx):
                    await asyncio.sleep(0.05)  # the run waits for its end to be seen
                    SEEN.append(("agent_end", len(event.messages), ctx.is_idle()))
                pi.on("agent_end", slow_end)
            """,
        )
        run(harness, "hi")
        module = harness.runner.extensions[0].module
        assert module.SEEN == [
            ("start", "startup"),
            "agent_start",
            "turn_start",
            "turn_end",
            ("agent_end", 2, False),
        ]
        assert harness.reported == []


def test_a_tool_call_gate_blocks_or_rewrites_the_call(tmp_path: Path) -> None:
    replies = [
        Scripted(
            tool_calls=[ToolCallSpec("echo", {"text": "rm -rf /"}), ToolCallSpec("echo", {"text": "ok"})]
        ),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "gate",
            """
            def activate(pi):
                def gate(event, ctx):
                    if "rm -rf" in event.input["text"]:
                        return {"block": True, "reason": "destructive"}
                    event.input["text"] = event.input["text"].upper()
                pi.on("tool_call", gate)
            """,
        )
        run(harness, "go")
        assert harness.echo.calls == [{"text": "OK"}]  # the blocked call never ran
        results = harness.messages("toolResult")
        assert results[0]["content"][0]["text"] == "Blocked: destructive" and results[0]["isError"] is True
        assert results[1]["content"][0]["text"] == "echoed OK"
        calls = harness.messages("assistant")[0]
        assert calls["content"][1]["arguments"] == {"text": "ok"}  # the saved call is what the model sent


def test_a_failing_gate_blocks_and_is_reported_once_with_its_file(tmp_path: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("echo", {"text": "a"}), ToolCallSpec("echo", {"text": "b"})]),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "broken",
            """
            def activate(pi):
                def gate(event):
                    raise ValueError("gate exploded")
                pi.on("tool_call", gate)
            """,
        )
        run(harness, "go")
        assert harness.echo.calls == []
        assert len(harness.reported) == 1
        line = harness.reported[0]
        assert "extension broken" in line and "broken.py" in line and "tool_call" in line
        assert "ValueError: gate exploded" in line
        log = (tmp_path / "logs" / "extensions.log").read_text()
        assert "Traceback" in log and "gate exploded" in log
        assert oct((tmp_path / "logs" / "extensions.log").stat().st_mode & 0o777) == "0o600"
        assert harness.entries()[-1]["message"]["content"][0]["text"] == "done"  # the run went on


def test_tool_results_can_be_patched(tmp_path: Path) -> None:
    replies = [Scripted(tool_calls=[ToolCallSpec("echo", {"text": "x"})]), text_reply("done")]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "patch",
            """
            def activate(pi):
                def patch(event):
                    text = event.content[0].text
                    return {"content": [{"type": "text", "text": text + " (checked)"}], "details": {"ok": 1}}
                pi.on("tool_result", patch)
            """,
        )
        run(harness, "go")
        result = harness.messages("toolResult")[0]
        assert result["content"][0]["text"] == "echoed x (checked)"
        assert result["details"] == {"ok": 1}
        second = request_texts(server.requests[1].body)
        assert ("tool", "echoed x (checked)") in second


def test_before_agent_start_adds_a_message_and_changes_the_system_prompt(tmp_path: Path) -> None:
    with ModelServer(text_reply("one"), text_reply("two")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "inject",
            """
            def activate(pi):
                def start(event):
                    return {
                        "message": {
                            "custom_type": "note", "content": "remember: " + event.prompt, "display": False
                        },
                        "system_prompt": event.system_prompt + "\\nBe brief.",
                    }
                pi.on("before_agent_start", start)
            """,
        )
        run(harness, "first", "second")
        first = request_texts(server.requests[0].body)
        assert first[0] == ("system", "base prompt\nBe brief.")
        assert first[1:] == [("user", "first"), ("user", "remember: first")]
        customs = [e for e in harness.entries() if e["type"] == "custom_message"]
        assert [(c["customType"], c["content"], c["display"]) for c in customs] == [
            ("note", "remember: first", False),
            ("note", "remember: second", False),
        ]
        assert harness.agent.system_prompt == "base prompt"  # the change was for the run only


def test_context_and_payload_hooks_change_the_request_not_the_session(tmp_path: Path) -> None:
    with ModelServer(text_reply("one"), text_reply("two")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "prune",
            """
            STATUS = []

            def activate(pi):
                def context(event):
                    return {"messages": [m for m in event.messages if "secret" not in str(m.content)]}
                def payload(event):
                    body = dict(event.payload)
                    body["temperature"] = 0
                    return body
                pi.on("context", context)
                pi.on("before_provider_request", payload)
                pi.on("after_provider_response", lambda event: STATUS.append(event.status))
            """,
        )
        run(harness, "a secret", "and then")
        second = server.requests[1].body
        assert second["temperature"] == 0
        assert [text for _role, text in request_texts(second)] == ["base prompt", "one", "and then"]
        users = harness.messages("user")
        assert users[0]["content"][0]["text"] == "a secret"  # still in the session
        assert harness.runner.extensions[0].module.STATUS == [200, 200]


def test_message_end_may_replace_a_message_of_the_same_role(tmp_path: Path) -> None:
    with ModelServer(text_reply("original")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "rewrite",
            """
            def activate(pi):
                def end(event):
                    message = event.message
                    if message.role == "assistant":
                        new = [{"type": "text", "text": "rewritten"}]
                        return {"message": message.model_copy(update={"content": new})}
                    if message.role == "user":
                        return {"message": {"role": "assistant", "content": []}}  # refused: another role
                pi.on("message_end", end)
            """,
        )
        run(harness, "hi")
        messages = [e["message"] for e in harness.entries() if e["type"] == "message"]
        assert messages[-1]["content"] == [{"type": "text", "text": "rewritten"}]
        assert messages[0]["role"] == "user"
        assert any("cannot become" in line for line in harness.reported)


def test_input_can_transform_or_answer_what_the_user_typed(tmp_path: Path) -> None:
    with ModelServer(text_reply("ok")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "shortcuts",
            """
            ANSWERED = []

            def activate(pi):
                def typed(event, ctx):
                    if event.text == "ping":
                        ANSWERED.append(event.source)
                        return {"action": "handled"}
                    if event.text.startswith("?q "):
                        return {"action": "transform", "text": "Answer briefly: " + event.text[3:]}
                pi.on("input", typed)
            """,
        )
        run(harness, "ping", "?q why")
        assert len(server.requests) == 1
        assert request_texts(server.requests[0].body)[-1] == ("user", "Answer briefly: why")
        assert harness.runner.extensions[0].module.ANSWERED == ["interactive"]


def test_a_registered_tool_with_a_pydantic_model_streams_and_validates(tmp_path: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("count", {"upto": "many"})]),
        Scripted(tool_calls=[ToolCallSpec("count", {"upto": 3})]),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        updates: list[Any] = []
        harness.agent.subscribe(
            lambda e: (
                updates.append(e["partialResult"]["content"][0].text)
                if e.type == "tool_execution_update"
                else None
            )
        )
        harness.load(
            "counter",
            """
            from pydantic import BaseModel

            class Args(BaseModel):
                upto: int

            def activate(pi):
                async def count(call_id, params, ctx):
                    for n in range(1, params.upto + 1):
                        ctx.update(f"at {n}")
                    text = f"counted to {params.upto}"
                    return {"content": [{"type": "text", "text": text}], "details": {"n": params.upto}}
                pi.register_tool("count", label="Count", description="Count up",
                                 parameters=Args, execute=count)
            """,
        )
        run(harness, "count")
        tools = server.requests[0].body["tools"]
        count = next(tool["function"] for tool in tools if tool["function"]["name"] == "count")
        assert count["parameters"]["properties"]["upto"]["type"] == "integer"
        results = harness.messages("toolResult")
        assert results[0]["isError"] is True
        assert results[0]["content"][0]["text"].startswith('Validation failed for tool "count":\n  - upto: ')
        assert results[1]["content"][0]["text"] == "counted to 3" and results[1]["details"] == {"n": 3}
        assert updates == ["at 1", "at 2", "at 3"]


def test_a_sync_tool_runs_in_a_thread_and_its_exception_is_the_error_text(tmp_path: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("lookup", {"key": "a"}), ToolCallSpec("lookup", {"key": "zz"})]),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "lookup",
            """
            import threading

            def activate(pi):
                def lookup(params):
                    if params["key"] == "zz":
                        raise KeyError("no such key: zz")
                    worker = threading.current_thread() is not threading.main_thread()
                    return "value of a from " + ("worker" if worker else "main")
                pi.register_tool("lookup", description="Look a key up", execute=lookup,
                                 parameters={"type": "object", "properties": {"key": {"type": "string"}}})
            """,
        )
        run(harness, "look")
        results = harness.messages("toolResult")
        assert results[0]["content"][0]["text"] == "value of a from worker"
        assert results[1]["isError"] is True and "no such key: zz" in results[1]["content"][0]["text"]


def test_a_call_breaking_a_json_schema_is_an_error_result_and_the_tool_does_not_run(tmp_path: Path) -> None:
    """pi validates every call against the tool's schema; before, extension schemas were not
    checked at all and ``execute`` ran with whatever the model sent."""
    replies = [
        Scripted(tool_calls=[ToolCallSpec("move", {"steps": "many", "extra": None})]),
        Scripted(tool_calls=[ToolCallSpec("move", {"direction": "up"})]),
        Scripted(tool_calls=[ToolCallSpec("move", {"steps": "3", "tags": "fast", "note": None})]),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "mover",
            """
            CALLS = []

            def activate(pi):
                def move(params):
                    CALLS.append(params)
                    return "moved " + str(params["steps"])
                pi.register_tool("move", description="Move", execute=move, parameters={
                    "type": "object",
                    "properties": {
                        "steps": {"type": "integer", "minimum": 1},
                        "direction": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "note": {"type": "string"},
                    },
                    "required": ["steps"],
                })
            """,
        )
        run(harness, "move")
        results = harness.messages("toolResult")
        assert [result["isError"] for result in results] == [True, True, False]
        first = results[0]["content"][0]["text"]
        assert first.startswith('Validation failed for tool "move":\n  - steps: ')
        assert "'many' is not of type 'integer'" in first
        assert first.endswith('Received arguments:\n{\n  "steps": "many",\n  "extra": null\n}')
        assert "steps: 'steps' is a required property" not in results[1]["content"][0]["text"]
        assert "  - root: 'steps' is a required property" in results[1]["content"][0]["text"]
        assert results[2]["content"][0]["text"] == "moved 3"
        # Only the coerced valid call ran ("3" -> 3, one tag -> a list, a null optional dropped).
        assert harness.runner.extensions[0].module.CALLS == [{"steps": 3, "tags": ["fast"]}]
        # The transcript keeps the arguments as the model sent them.
        calls = [
            block
            for message in harness.messages("assistant")
            for block in message["content"]
            if block["type"] == "toolCall"
        ]
        assert calls[2]["arguments"] == {"steps": "3", "tags": "fast", "note": None}


def test_a_command_sends_a_message_that_starts_a_turn_and_labels_the_tree(tmp_path: Path) -> None:
    with ModelServer(text_reply("reviewed")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "review",
            """
            def activate(pi):
                async def review(args, ctx):
                    pi.send_message(
                        {"custom_type": "review", "content": "Review " + args, "display": True,
                         "details": {"target": args}},
                        trigger_turn=True,
                    )
                    await ctx.wait_for_idle()
                    leaf = ctx.session_manager.get_leaf_id()
                    pi.set_label(leaf, "reviewed")
                    pi.append_entry("review-state", {"done": args})
                    pi.set_session_name("Review of " + args)
                pi.register_command("review", handler=review, description="Ask for a review")
            """,
        )
        run(harness, "/review src/app.py")
        assert request_texts(server.requests[0].body)[-1] == ("user", "Review src/app.py")
        entries = harness.entries()
        custom = next(e for e in entries if e["type"] == "custom_message")
        assert custom["customType"] == "review" and custom["details"] == {"target": "src/app.py"}
        reply = next(e for e in entries if e.get("message", {}).get("role") == "assistant")
        assert {"type": "label", "targetId": reply["id"], "label": "reviewed"}.items() <= next(
            e for e in entries if e["type"] == "label"
        ).items()
        assert next(e for e in entries if e["type"] == "custom")["data"] == {"done": "src/app.py"}
        assert next(e for e in entries if e["type"] == "session_info")["name"] == "Review of src/app.py"
        assert not any(e.get("message", {}).get("role") == "user" for e in entries)  # /review is no prompt


def test_next_turn_messages_wait_for_the_next_prompt(tmp_path: Path) -> None:
    with ModelServer(text_reply("ok")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "later",
            """
            def activate(pi):
                pi.register_command(
                    "note",
                    handler=lambda args: pi.send_message(
                        {"custom_type": "note", "content": args}, deliver_as="next_turn"
                    ),
                )
            """,
        )
        run(harness, "/note use tabs", "format it")
        assert len(server.requests) == 1
        assert request_texts(server.requests[0].body)[1:] == [("user", "format it"), ("user", "use tabs")]


def test_import_errors_and_a_missing_activate_are_one_line_each_and_others_load(tmp_path: Path) -> None:
    with ModelServer(text_reply("ok")) as server:
        harness = Harness(server, tmp_path)
        harness.load("typo", "def activate(pi)\n    pass\n", clean=False)
        harness.load("noentry", "X = 1\n", clean=False)
        fine = "def activate(pi):\n    pi.register_command('fine', handler=print)\n"
        harness.load("fine", fine, clean=False)
        assert [loaded.name for loaded in harness.runner.extensions] == ["fine"]
        assert len(harness.reported) == 2
        assert "typo" in harness.reported[0] and "SyntaxError" in harness.reported[0]
        assert "noentry" in harness.reported[1] and "has no activate(pi) function" in harness.reported[1]
        assert "Traceback" not in "".join(harness.reported)


def test_exec_runs_a_program_and_an_abort_kills_it(tmp_path: Path) -> None:
    with ModelServer() as server:
        harness = Harness(server, tmp_path)
        harness.load("runner", "def activate(pi):\n    global PI\n    PI = pi\n")
        pi = harness.runner.extensions[0].module.PI

        async def main() -> tuple[Any, Any, float]:
            done = await pi.exec("sh", ["-c", "echo out; echo err >&2; exit 3"])
            loop = asyncio.get_running_loop()
            loop.call_later(0.2, harness.agent.abort)
            began = loop.time()
            killed = await pi.exec("sleep", ["30"])
            return done, killed, loop.time() - began

        done, killed, took = asyncio.run(main())
        assert (done.stdout, done.stderr, done.code, done.killed) == ("out\n", "err\n", 3, False)
        assert killed.killed is True and took < 5


def test_user_bash_can_answer_instead_of_running(tmp_path: Path) -> None:
    with ModelServer() as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "remote",
            """
            def activate(pi):
                def bash(event):
                    return {"result": {"output": "remote: " + event.command, "exit_code": 0}}
                pi.on("user_bash", bash)
            """,
        )
        message = asyncio.run(harness.agent.run_bash("touch should-not-exist"))
        assert message.output == "remote: touch should-not-exist" and message.exit_code == 0
        assert not (tmp_path / "should-not-exist").exists()


def test_session_before_tree_can_cancel_and_model_select_is_told(tmp_path: Path) -> None:
    with ModelServer(text_reply("one")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "guard",
            """
            SEEN = []

            def activate(pi):
                pi.on("session_before_tree", lambda event: {"cancel": True})
                def chosen(event):
                    SEEN.append((event.previous_model.id, event.model.id, event.source))
                pi.on("model_select", chosen)
            """,
        )
        run(harness, "hi")
        first = harness.entries()[0]["id"]

        async def main() -> Any:
            result = await harness.agent.navigate_tree(first)
            harness.agent.set_model(server.model(id="other"), source="cycle")
            await harness.runner.settle()
            return result

        result = asyncio.run(main())
        assert result.cancelled_by == "an extension"
        assert harness.agent.manager.get_leaf_id() != first
        assert harness.runner.extensions[0].module.SEEN == [("m", "other", "cycle")]


def test_session_before_compact_can_write_the_summary(tmp_path: Path) -> None:
    with ModelServer(*[text_reply(f"reply {n} " + "x" * 400) for n in range(6)]) as server:
        harness = Harness(server, tmp_path)
        harness.agent.settings = Settings.model_validate({"compaction": {"keepRecentTokens": 50}})
        harness.load(
            "summary",
            """
            AFTER = []

            def activate(pi):
                def before(event):
                    return {"compaction": {"summary": "written by the extension", "details": {"by": "ext"}}}
                pi.on("session_before_compact", before)
                def after(e):
                    AFTER.append((e.compaction_entry.summary, e.from_extension))
                pi.on("session_compact", after)
            """,
        )
        run(harness, *[f"question {n}" for n in range(6)])
        requests_before = len(server.requests)

        async def compact() -> None:
            await harness.agent.compact()
            await harness.runner.settle()

        asyncio.run(compact())
        assert harness.runner.extensions[0].module.AFTER == [("written by the extension", True)]
        assert len(server.requests) == requests_before  # no summary request to the model
        compaction = next(e for e in harness.entries() if e["type"] == "compaction")
        assert compaction["summary"] == "written by the extension"
        assert compaction["fromHook"] is True and compaction["details"] == {"by": "ext"}


@pytest.mark.parametrize("when", ["steer", "follow_up"])
def test_messages_sent_while_the_agent_runs_are_delivered_in_that_run(tmp_path: Path, when: str) -> None:
    replies = [Scripted(tool_calls=[ToolCallSpec("echo", {"text": "a"})]), text_reply("2"), text_reply("3")]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "during",
            f"""
            def activate(pi):
                def started(event):
                    message = {{"custom_type": "ctx", "content": "sent during the run"}}
                    pi.send_message(message, deliver_as="{when}")
                pi.on("tool_execution_start", started)
            """,
        )
        run(harness, "go")
        bodies = [request_texts(request.body) for request in server.requests]
        assert ("user", "sent during the run") in bodies[-1]
        assert ("user", "sent during the run") not in bodies[0]


def test_ttsr_listeners_hear_the_rules_the_scope_and_the_cut_text(tmp_path: Path) -> None:
    from pi_tui.config.settings import TtsrSettings
    from pi_tui.ttsr.coordinator import TtsrCoordinator
    from pi_tui.ttsr.manager import TtsrManager
    from tests.integration.test_ttsr_agent import no_print_rule

    replies = [Scripted(text="Sure, just call print(x) there."), text_reply("Use the logger.")]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        matcher = TtsrManager(TtsrSettings(), tmp_path)
        assert matcher.add_rule(no_print_rule(tmp_path)) is None
        harness.agent.ttsr = TtsrCoordinator(matcher, tmp_path)
        harness.load(
            "listener",
            """
            HITS = []

            def activate(pi):
                def hit(event):
                    HITS.append(([rule.name for rule in event.rules], event.scope, event.cut_text))
                    HITS.append(event.rules[0]["path"])
                pi.on("ttsr_triggered", hit)
            """,
        )
        run(harness, "how do I log?")
        hits = harness.runner.extensions[0].module.HITS
        assert hits[0][0] == ["no-print"] and hits[0][1] == "text"
        assert hits[0][2].startswith("Sure") and "print(" in hits[0][2]
        assert hits[1].endswith("no-print.md")
        assert len(server.requests) == 2  # the stream was cut and tried again with the rule


def test_extensions_clashing_over_a_name_get_numbers_as_in_pi(tmp_path: Path) -> None:
    with ModelServer(text_reply("plain")) as server:
        harness = Harness(server, tmp_path)
        for name in ("first", "second"):
            harness.load(
                name,
                """
                CALLS = []

                def activate(pi):
                    pi.register_command("review", handler=lambda args: CALLS.append(args))
                """,
            )
        harness.reported.clear()
        assert sorted(harness.runner.commands) == ["review:1", "review:2"]
        run(harness, "/review:1 a", "/review:2 b", "/review c")
        first, second = (loaded.module for loaded in harness.runner.extensions)
        assert (first.CALLS, second.CALLS) == (["a"], ["b"])
        assert request_texts(server.requests[0].body)[-1] == ("user", "/review c")  # no command: a prompt


def test_commands_move_the_session_and_extensions_hear_it(tmp_path: Path) -> None:
    with ModelServer(text_reply("one"), text_reply("two")) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "mover",
            """
            MOVES = []

            def activate(pi):
                def started(e):
                    MOVES.append(("start", e.reason, e.get("previous_session_file")))
                pi.on("session_start", started)
                pi.on("session_shutdown", lambda e: MOVES.append(("shutdown", e.reason)))
                pi.on("session_before_fork", lambda e: {"cancel": True} if e.position == "at" else None)

                async def fresh(args, ctx):
                    old = ctx.session_manager.session_file
                    seed = lambda m: m.append_custom_entry("seed", {"from": str(old)})  # noqa: E731
                    moved = await ctx.new_session(setup=seed)
                    MOVES.append(("new", moved.cancelled, moved.session_file != str(old)))

                async def branch(args, ctx):
                    user = next(e for e in ctx.session_manager.get_branch() if getattr(e, "message", None)
                                and e.message.role == "user" and e.message.content[0].text == args)
                    refused = await ctx.fork(user.id, position="at")
                    moved = await ctx.fork(user.id)
                    MOVES.append(("fork", refused.cancelled, moved.cancelled, moved.editor_text))

                async def back(args, ctx):
                    moved = await ctx.switch_session(args)
                    MOVES.append(("switch", moved.session_file == args))

                pi.register_command("fresh", handler=fresh)
                pi.register_command("split", handler=branch)
                pi.register_command("back", handler=back)
            """,
        )
        run(harness, "first", "second")
        first_file = str(harness.agent.manager.session_file)
        run(harness, "/split second")
        forked = harness.agent.manager
        assert str(forked.session_file) != first_file
        assert [e.message.content[0].text for e in forked.get_branch() if e.type == "message"][-2:] == [
            "first",
            "one",
        ]
        run(harness, f"/back {first_file}", "/fresh")
        seeded = [e for e in harness.agent.manager.iter_raw_entries() if e["type"] == "custom"]
        assert seeded[0]["data"] == {"from": first_file}
        moves = harness.runner.extensions[0].module.MOVES
        reasons = [move for move in moves if move[0] in ("start", "shutdown")]
        assert [r[:2] for r in reasons] == [
            ("start", "startup"),  # each run() starts the session once more in this harness
            ("start", "startup"),
            ("shutdown", "fork"),
            ("start", "fork"),
            ("start", "startup"),
            ("shutdown", "resume"),
            ("start", "resume"),
            ("shutdown", "new"),
            ("start", "new"),
        ]
        assert (
            ("fork", True, False, "second") in moves
            and ("switch", True) in moves
            and ("new", False, True) in moves
        )
        # each move names the session it left (a fork too: the branch is a copy, the file stays)
        assert ("start", "fork", first_file) in moves
        assert ("start", "resume", str(forked.session_file)) in moves


def test_the_remaining_notifications_and_api_calls(tmp_path: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("echo", {"text": "x"})]),
        text_reply("done"),
        text_reply("2"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.load(
            "everything",
            """
            SEEN = {}
            HEARD = []

            def note(event):
                SEEN.setdefault(event.type, 0)
                SEEN[event.type] += 1

            def activate(pi):
                for name in ("message_start", "message_update", "tool_execution_update", "tool_execution_end",
                             "thinking_level_select", "session_compact", "session_tree"):
                    pi.on(name, note)
                pi.on("session_before_switch", lambda e: {"cancel": True})
                pi.events.on("ping", HEARD.append)

                async def probe(args, ctx):
                    pi.events.emit("ping", {"from": "probe"})
                    HEARD.append(("tools", pi.get_all_tools(), pi.get_active_tools()))
                    pi.set_active_tools([])
                    HEARD.append(("after", pi.get_active_tools()))
                    prompt = ctx.get_system_prompt()
                    HEARD.append(("usage", sorted(ctx.get_context_usage()), "base prompt" in prompt))
                    HEARD.append(("commands", [c["name"] for c in pi.get_commands()]))
                    moved = await ctx.new_session()
                    HEARD.append(("new", moved.cancelled))
                    pi.set_thinking_level("high")
                    HEARD.append(("level", pi.get_thinking_level()))
                pi.register_command("probe", handler=probe)
            """,
        )
        run(harness, "go", "/probe", "more")
        module = harness.runner.extensions[0].module
        assert module.HEARD == [
            {"from": "probe"},
            ("tools", ["echo"], ["echo"]),
            ("after", []),
            ("usage", ["context_window", "tokens"], True),
            ("commands", ["probe"]),
            ("new", True),
            ("level", "off"),  # the test model does not think: pi 1.x clamps the level to off
        ]
        assert "tools" not in server.requests[-1].body  # no active tool is offered
        first = harness.entries()[0]["id"]
        asyncio.run(harness.agent.navigate_tree(first))
        asyncio.run(harness.runner.settle())
        seen = module.SEEN
        assert seen["message_update"] > 0 and seen["message_start"] >= 6
        assert seen["tool_execution_end"] == 1 and seen["thinking_level_select"] == 1
        assert seen["session_tree"] == 1
