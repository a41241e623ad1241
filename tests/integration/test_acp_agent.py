"""``pi-tui acp`` driven by the official ACP TypeScript SDK's client (tests/support/acp_client.py),
against the loopback model server: every message pi-tui writes is checked against the SDK's
schema, and nothing but the protocol may reach its stdout."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_client import AcpClient, AcpError, Pending
from tests.support.mcp_servers import everything_command
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import PI_TUI, requires

pytestmark = [requires("pi-tui", "node"), pytest.mark.xdist_group("acp")]

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "acp"
FS_AND_TERMINAL = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n")
    (root / "src" / "app.py").write_text('print("hello")\n')
    return root


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        models = [
            {"id": "m", "name": "Test model", "reasoning": True},
            {"id": "other", "name": "Other model"},
        ]
        (agent_dir / "models.json").write_text(json.dumps(model_server.models_json(models=models)))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        yield model_server


def start(project: Path, *flags: str) -> AcpClient:
    return AcpClient.start([PI_TUI, "acp", *flags], cwd=project, env=dict(os.environ))


def open_session(
    client: AcpClient, project: Path, capabilities: dict[str, Any] | None = None, **params: Any
) -> str:
    init = client.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}})
    assert init["protocolVersion"] == 1 and init["agentCapabilities"]["loadSession"] is True
    created = client.request("session/new", {"cwd": str(project), "mcpServers": [], **params})
    session_id: str = created["sessionId"]
    return session_id


def prompt(client: AcpClient, session_id: str, text: str) -> dict[str, Any]:
    answer: dict[str, Any] = prompt_async(client, session_id, text).result()
    return answer


def prompt_async(client: AcpClient, session_id: str, text: str) -> Pending:
    """A prompt sent without waiting for its answer (the test acts while it runs)."""
    return client.request_async(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [update["update"]["sessionUpdate"] for update in updates]


def texts(updates: list[dict[str, Any]], kind: str) -> str:
    return "".join(u["update"]["content"]["text"] for u in updates if u["update"]["sessionUpdate"] == kind)


def calls(updates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as the client knows it after every update (later fields win)."""
    known: dict[str, dict[str, Any]] = {}
    for update in updates:
        body = update["update"]
        if body["sessionUpdate"] in ("tool_call", "tool_call_update"):
            known.setdefault(body["toolCallId"], {}).update(body)
    return known


def find_node(nodes: list[dict[str, Any]], entry_id: str) -> dict[str, Any]:
    """The node of ``entry_id`` in a ``get_tree`` forest."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node["entry"]["id"] == entry_id:
            return node
        stack += node["children"]
    raise AssertionError(f"{entry_id} is not in the tree")


def session_files(agent_dir: Path) -> list[Path]:
    return sorted((agent_dir / "sessions").rglob("*.jsonl"))


def session_file(agent_dir: Path) -> Path:
    files = session_files(agent_dir)
    assert len(files) == 1, files
    return files[0]


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_streamed_answer_with_a_tool_call_ends_the_turn(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    server.queue(
        Scripted(
            thinking="Let me look.",
            text="Reading it.",
            tool_calls=[ToolCallSpec("read", {"path": "README.md"})],
        )
    )
    server.queue(Scripted(text="It is a demo."))
    with start(project) as client:
        session_id = open_session(client, project)
        answer = prompt(client, session_id, "what is this?")
        assert answer == {"stopReason": "end_turn"}
        updates = client.updates(session_id)
        assert texts(updates, "agent_thought_chunk") == "Let me look."
        assert texts(updates, "agent_message_chunk") == "Reading it.It is a demo."
        call = next(iter(calls(updates).values()))
        assert (call["kind"], call["title"], call["status"]) == ("read", "Read README.md", "completed")
        assert call["locations"] == [{"path": str(project / "README.md")}]
        assert "# Demo" in call["content"][0]["content"]["text"]
        order = kinds(updates)
        assert order.index("tool_call") < order.index("agent_message_chunk", order.index("tool_call"))
        commands = next(
            u["update"] for u in updates if u["update"]["sessionUpdate"] == "available_commands_update"
        )
        assert {"tree", "label", "branch"} <= {command["name"] for command in commands["availableCommands"]}
        client.assert_clean()
    # a pi session file on disk, in the project's folder, that pi-tui and pi can open
    saved = entries(session_file(agent_dir))
    assert saved[0]["type"] == "session" and saved[0]["id"] == session_id and saved[0]["cwd"] == str(project)
    roles = [e["message"]["role"] for e in saved if e["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert server.requests[0].body["model"] == "m"  # defaultProvider / defaultModel


def test_cancel_stops_a_slow_reply_within_a_second(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    server.queue(Scripted(text=" ".join(f"word{i}" for i in range(400)), event_delay=0.05))
    with start(project) as client:
        session_id = open_session(client, project)
        turn = prompt_async(client, session_id, "talk")
        client.wait_for(
            lambda: texts(client.updates(session_id), "agent_message_chunk"), what="the first words"
        )
        asked = time.monotonic()
        client.notify("session/cancel", {"sessionId": session_id})
        assert turn.result()["stopReason"] == "cancelled"
        assert time.monotonic() - asked < 1.0
        streamed = texts(client.updates(session_id), "agent_message_chunk")
        assert "word399" not in streamed
        # the session goes on: the next prompt is answered
        assert prompt(client, session_id, "again")["stopReason"] == "end_turn"
        client.assert_clean()
    assert [
        e["message"].get("stopReason") for e in entries(session_file(agent_dir)) if e["type"] == "message"
    ][1] == "aborted"


def test_cancel_stops_a_running_command(server: ModelServer, project: Path) -> None:
    server.queue(Scripted(tool_calls=[ToolCallSpec("bash", {"command": "echo started; sleep 30"})]))
    with start(project) as client:
        session_id = open_session(client, project)
        turn = prompt_async(client, session_id, "run")
        client.wait_for(
            lambda: any(c.get("status") == "in_progress" for c in calls(client.updates(session_id)).values()),
            what="the command running",
        )
        asked = time.monotonic()
        client.notify("session/cancel", {"sessionId": session_id})
        assert turn.result()["stopReason"] == "cancelled"
        assert time.monotonic() - asked < 1.0
        call = next(iter(calls(client.updates(session_id)).values()))
        assert call["status"] == "failed" and call["kind"] == "execute"
        client.assert_clean()


def test_the_clients_mcp_servers_give_the_model_their_tools(server: ModelServer, project: Path) -> None:
    everything = everything_command()
    server.queue(Scripted(tool_calls=[ToolCallSpec("tool_search", {"query": "echo"})]))
    server.queue(Scripted(tool_calls=[ToolCallSpec("mcp__everything__echo", {"message": "from the editor"})]))
    server.queue(Scripted(text="Echoed."))
    servers = [
        {"name": "everything", "command": everything[0], "args": everything[1:], "env": []},
        {"name": "broken", "command": str(project / "no-such-server"), "args": [], "env": []},
    ]
    with start(project) as client:
        session_id = open_session(client, project, mcpServers=servers)
        said = client.wait_for(
            lambda: "'broken' is not available" in texts(client.updates(session_id), "agent_message_chunk"),
            what="the broken server reported",
        )
        assert said
        assert prompt(client, session_id, "echo something")["stopReason"] == "end_turn"
        echoed = [
            c
            for c in calls(client.updates(session_id)).values()
            if c.get("rawInput") == {"message": "from the editor"}
        ]
        assert echoed and echoed[0]["status"] == "completed"
        assert "Echo: from the editor" in echoed[0]["content"][0]["content"]["text"]
        declared = {tool["function"]["name"] for tool in server.requests[2].body["tools"]}
        assert "mcp__everything__echo" in declared
        with pytest.raises(AcpError, match="SSE servers are not supported"):
            client.request(
                "session/new",
                {
                    "cwd": str(project),
                    "mcpServers": [
                        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
                    ],
                },
            )
        client.assert_clean()


def test_a_session_loads_in_a_new_process_with_its_history(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    server.queue(Scripted(text="Listing.", tool_calls=[ToolCallSpec("bash", {"command": "ls src"})]))
    server.queue(Scripted(text="There is app.py."))
    with start(project) as client:
        session_id = open_session(client, project)
        prompt(client, session_id, "what is in src?")
        client.assert_clean()
    with start(project) as client:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        listed = client.request("session/list", {"cwd": str(project)})
        assert [(s["sessionId"], s["title"]) for s in listed["sessions"]] == [(session_id, "what is in src?")]
        loaded = client.request(
            "session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []}
        )
        assert {option["id"] for option in loaded["configOptions"]} == {"mode", "model", "thinking"}
        history = client.updates(session_id)  # all of them came before the answer
        assert kinds(history)[:2] == ["user_message_chunk", "agent_message_chunk"]
        assert texts(history, "user_message_chunk") == "what is in src?"
        assert texts(history, "agent_message_chunk") == "Listing.There is app.py."
        call = next(iter(calls(history).values()))
        assert (call["title"], call["status"], call["kind"]) == ("ls src", "completed", "execute")
        assert "app.py" in call["content"][0]["content"]["text"]
        server.queue(Scripted(text="Still here."))
        assert prompt(client, session_id, "and now?")["stopReason"] == "end_turn"
        assert [m["role"] for m in server.requests[-1].body["messages"]][-5:] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
        ]
        with pytest.raises(AcpError, match="No session nope"):
            client.request("session/load", {"sessionId": "nope", "cwd": str(project), "mcpServers": []})
        client.assert_clean()
    assert len([e for e in entries(session_file(agent_dir)) if e["type"] == "message"]) == 6


def test_the_editors_buffers_files_and_terminal_are_used(server: ModelServer, project: Path) -> None:
    app = project / "src" / "app.py"
    server.queue(Scripted(tool_calls=[ToolCallSpec("read", {"path": "src/app.py"})]))
    server.queue(
        Scripted(
            tool_calls=[
                ToolCallSpec(
                    "edit", {"path": "src/app.py", "edits": [{"oldText": "unsaved", "newText": "saved"}]}
                )
            ]
        )
    )
    server.queue(Scripted(tool_calls=[ToolCallSpec("bash", {"command": "echo from-the-terminal; exit 3"})]))
    server.queue(Scripted(text="Done."))
    with start(project) as client:
        session_id = open_session(client, project, FS_AND_TERMINAL)
        client.set_buffer(app, 'print("unsaved")\n')  # the editor has changes not on disk yet
        assert prompt(client, session_id, "fix it")["stopReason"] == "end_turn"
        by_title = {c["title"]: c for c in calls(client.updates(session_id)).values()}
        assert 'print("unsaved")' in by_title["Read src/app.py"]["content"][0]["content"]["text"]
        assert client.requests("fs/read_text_file")[0]["path"] == str(app)
        written = client.requests("fs/write_text_file")
        assert written == [{"sessionId": session_id, "path": str(app), "content": 'print("saved")\n'}]
        edit = by_title["Edit src/app.py"]
        assert edit["content"][0] == {
            "type": "diff",
            "path": str(app),
            "oldText": 'print("unsaved")\n',
            "newText": 'print("saved")\n',
        }
        terminal = client.requests("terminal/create")[0]
        assert terminal["args"][-1] == "echo from-the-terminal; exit 3" and terminal["cwd"] == str(project)
        shell = by_title["echo from-the-terminal; exit 3"]
        assert shell["status"] == "failed" and shell["content"][0]["type"] == "terminal"
        assert client.requests("terminal/release")  # never left open
        result = server.requests[3].body["messages"][-1]
        assert "from-the-terminal" in str(result["content"]) and "exited with code 3" in str(
            result["content"]
        )
        client.assert_clean()
    assert app.read_text() == 'print("saved")\n'


def test_an_extensions_confirmation_is_the_editors_permission_prompt(
    server: ModelServer, project: Path
) -> None:
    gate = REPO / "examples" / "extensions" / "permission_gate.py"
    for _ in range(2):
        server.queue(Scripted(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf build && echo cleaned"})]))
        server.queue(Scripted(text="ok"))
    with start(project, "-e", str(gate)) as client:
        session_id = open_session(client, project)
        client.set_permission("reject_once")
        prompt(client, session_id, "clean")
        asked = client.requests("session/request_permission")
        assert len(asked) == 1
        assert "rm -rf" in asked[0]["toolCall"]["title"]
        assert {option["kind"] for option in asked[0]["options"]} == {
            "allow_once",
            "allow_always",
            "reject_once",
        }
        first = next(iter(calls(client.updates(session_id)).values()))
        assert first["status"] == "failed" and "did not allow" in first["content"][0]["content"]["text"]
        client.set_permission("allow_once")
        prompt(client, session_id, "clean, I allow it")
        second = list(calls(client.updates(session_id)).values())[1]
        assert second["status"] == "completed" and "cleaned" in second["content"][0]["content"]["text"]
        client.assert_clean()


def test_tree_label_and_branch_from_the_prompt_box(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    server.queue(Scripted(text="First answer."))
    server.queue(Scripted(text="Second answer."))
    with start(project) as client:
        session_id = open_session(client, project)
        prompt(client, session_id, "first question")
        prompt(client, session_id, "second question")
        path = session_file(agent_dir)
        users = [e["id"] for e in entries(path) if e["type"] == "message" and e["message"]["role"] == "user"]

        before = len(client.updates(session_id))
        prompt(client, session_id, "/tree")
        shown = texts(client.updates(session_id)[before:], "agent_message_chunk")
        assert "user: first question" in shown and users[1] in shown
        prompt(client, session_id, f"/label {users[0]} start")
        assert any(
            e["type"] == "label" and e["targetId"] == users[0] and e["label"] == "start"
            for e in entries(path)
        )
        tree = client.request("_pi/get_tree", {"sessionId": session_id})
        assert find_node(tree["tree"], users[0])["label"] == "start"

        # back to before the second question: the next prompt starts a branch beside it
        prompt(client, session_id, f"/tree {users[1]}")
        server.queue(Scripted(text="Other answer."))
        prompt(client, session_id, "another second question")
        sent = server.requests[-1].body["messages"]
        roles = [m["role"] for m in sent if m["role"] not in ("system", "developer")]
        assert roles == ["user", "assistant", "user"]  # the second question is not in it
        parents = {e["id"]: e.get("parentId") for e in entries(path)}
        siblings = [e for e in entries(path) if e["type"] == "message" and e["message"]["role"] == "user"]
        assert parents[siblings[-1]["id"]] == parents[users[1]]

        before = len(client.updates(session_id))
        prompt(client, session_id, f"/branch {users[1][:6]}")  # an id prefix is enough
        said = texts(client.updates(session_id)[before:], "agent_message_chunk")
        assert "new branch" in said and "> second question" in said
        server.queue(Scripted(text="Third answer."))
        prompt(client, session_id, "a third second question")
        sent = [m for m in server.requests[-1].body["messages"] if m["role"] not in ("system", "developer")]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert "a third second question" in json.dumps(sent[-1]) and len(session_files(agent_dir)) == 1
        third = [e for e in entries(path) if e["type"] == "message" and e["message"]["role"] == "user"][-1]
        assert parents[users[1]] == {e["id"]: e.get("parentId") for e in entries(path)}[third["id"]]
        with pytest.raises(AcpError, match="not found"):
            client.request("_pi/navigate_tree", {"sessionId": session_id, "targetId": "nothere"})
        client.assert_clean()


def test_mode_model_and_thinking_are_config_options(server: ModelServer, project: Path) -> None:
    server.queue(Scripted(text="Looking only."))
    with start(project) as client:
        init = client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["agentCapabilities"]["promptCapabilities"] == {
            "image": True,
            "audio": False,
            "embeddedContext": True,
        }
        created = client.request("session/new", {"cwd": str(project), "mcpServers": []})
        session_id = created["sessionId"]
        options = {option["id"]: option for option in created["configOptions"]}
        assert options["model"]["currentValue"] == "test/m"
        assert {o["value"] for o in options["model"]["options"]} >= {"test/m", "test/other"}
        assert [o["value"] for o in options["thinking"]["options"]][:2] == ["off", "minimal"]
        assert created["modes"]["currentModeId"] == "code"

        answer = client.request(
            "session/set_config_option", {"sessionId": session_id, "configId": "thinking", "value": "high"}
        )
        assert {o["id"]: o["currentValue"] for o in answer["configOptions"]}["thinking"] == "high"
        client.request("session/set_mode", {"sessionId": session_id, "modeId": "ask"})
        prompt(client, session_id, "look around")
        offered = {tool["function"]["name"] for tool in server.requests[-1].body["tools"]}
        assert offered == {"read", "grep", "find", "ls"}
        assert server.requests[-1].body["reasoning_effort"] == "high"

        answer = client.request(
            "session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "test/other"}
        )
        now = {o["id"]: o for o in answer["configOptions"]}
        assert now["model"]["currentValue"] == "test/other"
        assert [o["value"] for o in now["thinking"]["options"]] == ["off"]  # this model does not think
        for config_id, value, said in (
            ("model", "nope/none", 'Unknown model "nope/none"'),
            ("thinking", "ultra", 'Unknown thinking level "ultra"'),
            ("colour", "red", 'Unknown config option "colour"'),
        ):
            with pytest.raises(AcpError, match=said):
                client.request(
                    "session/set_config_option",
                    {"sessionId": session_id, "configId": config_id, "value": value},
                )
        client.assert_clean()


def test_mistakes_are_one_line_answers_and_the_agent_goes_on(server: ModelServer, project: Path) -> None:
    server.queue(Scripted(text="Fine."))
    server.queue(Scripted(tool_calls=[ToolCallSpec("todo", {"items": ["write tests", "ship"], "done": 1})]))
    server.queue(Scripted(text="Planned."))
    with start(project, "-e", str(DATA / "todo_tool.py")) as client:
        session_id = open_session(client, project)
        for method, params, said in (
            (
                "session/prompt",
                {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]},
                "No open session nope",
            ),
            ("session/new", {"cwd": "relative/path", "mcpServers": []}, "absolute path"),
            ("session/new", {"cwd": str(project / "missing"), "mcpServers": []}, "No such folder"),
            (
                "session/prompt",
                {
                    "sessionId": session_id,
                    "prompt": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
                },
                "no audio",
            ),
        ):
            with pytest.raises(AcpError, match=said) as raised:
                client.request(method, params)
            assert "Traceback" not in str(raised.value)
        assert prompt(client, session_id, "still there?")["stopReason"] == "end_turn"
        assert prompt(client, session_id, "plan it")["stopReason"] == "end_turn"
        plans = [u["update"] for u in client.updates(session_id) if u["update"]["sessionUpdate"] == "plan"]
        assert plans == [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "write tests", "status": "completed", "priority": "medium"},
                    {"content": "ship", "status": "pending", "priority": "medium"},
                ],
            }
        ]
        client.assert_clean()
        assert "Traceback" not in client.stderr


def test_a_failing_model_request_is_an_error_answer(agent_dir: Path, project: Path) -> None:
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "test": {
                        "baseUrl": "http://127.0.0.1:9",
                        "api": "openai-completions",
                        "apiKey": "k",
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    (agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "test", "defaultModel": "m", "retry": {"enabled": False}})
    )
    with start(project) as client:
        session_id = open_session(client, project)
        with pytest.raises(AcpError) as raised:
            prompt(client, session_id, "hello?")
        assert raised.value.code == -32603 and "Traceback" not in str(raised.value)
        client.assert_clean()


def test_a_rule_interrupt_retries_and_the_turn_still_ends_normally(
    server: ModelServer, project: Path
) -> None:
    (project / ".git").mkdir()
    rules = project / ".agent" / "rules"
    rules.mkdir(parents=True)
    (rules / "no-print.md").write_text("---\ncondition: print\\(\nscope: text\n---\nUse the logger.\n")
    server.queue(Scripted(text="Debug with print(x) then more words follow here", event_delay=0.03))
    server.queue(Scripted(text="Use logger.debug(x)."))
    with start(project, "--approve") as client:  # the folder's rules load: trusted for this run
        session_id = open_session(client, project)
        answer = prompt(client, session_id, "how to debug?")
        assert answer == {"stopReason": "end_turn"}  # the rule's abort is not the user's cancel
        updates = client.updates(session_id)
        said = texts(updates, "agent_thought_chunk")
        assert "Rule no-print stopped the reply" in said
        streamed = texts(updates, "agent_message_chunk")
        assert streamed.endswith("Use logger.debug(x).") and "more words follow" not in streamed
        assert "system-interrupt" in json.dumps(server.requests[1].body)
        client.assert_clean()


def test_an_untrusted_folder_loads_nothing_of_its_own_and_says_so(server: ModelServer, project: Path) -> None:
    extensions = project / ".agent" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "sneaky.py").write_text(
        "from pathlib import Path\n"
        "def activate(pi):\n"
        "    Path('RAN').write_text('the extension ran')\n"
        "    pi.register_command('sneaky', handler=lambda args, ctx: None)\n"
    )
    with start(project) as client:
        session_id = open_session(client, project)
        said = client.wait_for(
            lambda: texts(client.updates(session_id), "agent_message_chunk"), what="the notice"
        )
        assert "project resources not loaded" in said and "not trusted" in said
        commands = next(
            u["update"]["availableCommands"]
            for u in client.updates(session_id)
            if u["update"]["sessionUpdate"] == "available_commands_update"
        )
        assert "sneaky" not in {command["name"] for command in commands}
        client.assert_clean()
    assert not (project / "RAN").exists()
    with start(project, "-a") as client:  # trusted for this run: it loads
        session_id = open_session(client, project)
        commands = client.wait_for(
            lambda: next(
                (
                    u["update"]["availableCommands"]
                    for u in client.updates(session_id)
                    if u["update"]["sessionUpdate"] == "available_commands_update"
                ),
                None,
            ),
            what="the commands",
        )
        assert "sneaky" in {command["name"] for command in commands}
        client.assert_clean()


def test_a_session_pi_wrote_loads_by_id_with_its_history(
    server: ModelServer, tmp_path: Path, project: Path
) -> None:
    source = (
        Path(__file__).resolve().parents[1] / "data" / "pi15-sessions" / "01-print-continue" / "session.jsonl"
    )
    folder = tmp_path / "pi-agent" / "sessions" / "--home-user-project--"  # pi's own folder (conftest)
    folder.mkdir(parents=True)
    target = folder / "2026-11-26T14-08-27-576Z_01a2182f-adb6-70ed-a012-96055e935ddf.jsonl"
    target.write_bytes(source.read_bytes())
    with start(project) as client:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = "01a2182f-adb6-70ed-a012-96055e935ddf"
        client.request("session/load", {"sessionId": session_id[:13], "cwd": str(project), "mcpServers": []})
        history = client.updates(session_id[:13])
        assert texts(history, "user_message_chunk") == "Hello, who are you?What is 2+2?"
        assert texts(history, "agent_message_chunk").startswith("echo: Hello, who are you?echo: What is 2+2?")
        server.queue(Scripted(text="Cut short", stop_reason="length"))
        answer = prompt(client, session_id[:13], "and 3+3?")
        assert answer["stopReason"] == "max_tokens"
        sent = [
            m["role"]
            for m in server.requests[-1].body["messages"]
            if m["role"] not in ("system", "developer")
        ]
        assert sent == ["user", "assistant", "user", "assistant", "user"]
        client.assert_clean()
    lines = target.read_text().splitlines()
    assert json.loads(lines[-1])["message"]["stopReason"] == "length"  # continued in pi's file


def test_careful_mode_asks_before_changes(server: ModelServer, project: Path) -> None:
    for command in ("echo one", "echo two", "echo three"):
        server.queue(Scripted(tool_calls=[ToolCallSpec("bash", {"command": command})]))
        server.queue(Scripted(text="ok"))
    server.queue(Scripted(tool_calls=[ToolCallSpec("read", {"path": "README.md"})]))
    server.queue(Scripted(text="ok"))
    with start(project, "--start-mode", "careful") as client:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        created = client.request("session/new", {"cwd": str(project), "mcpServers": []})
        session_id = created["sessionId"]
        assert created["modes"]["currentModeId"] == "careful"
        assert {o["id"]: o["currentValue"] for o in created["configOptions"]}["mode"] == "careful"
        client.set_permission("reject_once")
        prompt(client, session_id, "one")
        asked = client.requests("session/request_permission")
        assert [(a["toolCall"]["title"], a["toolCall"]["kind"]) for a in asked] == [("echo one", "execute")]
        assert [o["kind"] for o in asked[0]["options"]] == ["allow_once", "allow_always", "reject_once"]
        rejected = calls(client.updates(session_id))
        assert [c["status"] for c in rejected.values()] == ["failed"]
        assert "did not allow" in str(server.requests[1].body["messages"][-1]["content"])
        client.set_permission("allow_always")
        prompt(client, session_id, "two")
        prompt(client, session_id, "three")  # always allowed now: not asked again
        prompt(client, session_id, "read")  # looking never asks
        assert len(client.requests("session/request_permission")) == 2
        statuses = [c["status"] for c in calls(client.updates(session_id)).values()]
        assert statuses == ["failed", "completed", "completed", "completed"]
        client.assert_clean()


def test_prompts_sent_during_a_turn_or_right_after_cancel_wait_their_turn(
    server: ModelServer, project: Path
) -> None:
    server.queue(Scripted(text=" ".join(f"slow{i}" for i in range(300)), event_delay=0.05))
    with start(project) as client:
        session_id = open_session(client, project)
        first = prompt_async(client, session_id, "one")
        client.wait_for(
            lambda: texts(client.updates(session_id), "agent_message_chunk"), what="the first words"
        )
        client.notify("session/cancel", {"sessionId": session_id})
        second = prompt_async(client, session_id, "two")
        assert first.result()["stopReason"] == "cancelled"
        assert second.result()["stopReason"] == "end_turn"  # it ran once the first had stopped
        assert "echo: two" in texts(client.updates(session_id), "agent_message_chunk")

        server.queue(Scripted(text=" ".join(f"slow{i}" for i in range(300)), event_delay=0.05))
        third = prompt_async(client, session_id, "three")
        client.wait_for(
            lambda: "slow1" in texts(client.updates(session_id), "agent_message_chunk").split("two")[-1],
            what="the third reply",
        )
        fourth = prompt_async(client, session_id, "four")
        client.notify("session/cancel", {"sessionId": session_id})  # the running one and the one waiting
        assert third.result()["stopReason"] == "cancelled" and fourth.result()["stopReason"] == "cancelled"
        assert not any("four" in json.dumps(r.body["messages"][-1]) for r in server.requests)
        with pytest.raises(AcpError, match="The prompt is empty"):
            prompt(client, session_id, "   ")
        client.assert_clean()


def test_a_full_disk_is_said_to_the_editor_and_nothing_is_lost(
    server: ModelServer, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.small_disk import small_disk

    with small_disk(tmp_path, monkeypatch) as disk:
        if not disk.real:  # the agent is another process: only a real full disk reaches it
            pytest.skip("needs a tmpfs mount (root), as in CI")
        with start(project, "--session-dir", str(disk.path)) as client:
            session_id = open_session(client, project)
            prompt(client, session_id, "first")
            disk.fill()
            prompt(client, session_id, "second " + "x" * 6000)
            said = texts(client.updates(session_id), "agent_message_chunk")
            assert "pi-tui:" in said and "No space left" in said
            disk.free()
            prompt(client, session_id, "third")
            client.assert_clean()
        [path] = list(disk.path.rglob("*.jsonl"))
        users = [
            e["message"]["content"][0]["text"][:6]
            for e in map(json.loads, path.read_text().splitlines())
            if e["type"] == "message" and e["message"]["role"] == "user"
        ]
        assert users == ["first", "second", "third"]


def test_loading_a_live_session_again(server: ModelServer, project: Path) -> None:
    with start(project) as client:
        session_id = open_session(client, project)
        prompt(client, session_id, "remember me")
        before = len(client.updates(session_id))
        client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
        assert texts(client.updates(session_id)[before:], "user_message_chunk") == "remember me"
        # another prefix of the same session: told the id it is open under (not "open in pi-tui process")
        with pytest.raises(AcpError, match=f"open here as {session_id}"):
            client.request(
                "session/load", {"sessionId": session_id[:10], "cwd": str(project), "mcpServers": []}
            )
        client.assert_clean()
