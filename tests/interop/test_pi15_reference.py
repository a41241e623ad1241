"""pi 1.5.2 as the reference: pi-tui sends the messages and tools pi 1.5.2 sends (issue 27).

For a pi 1.x session file, pi 1.5.2 (``--session COPY -c -p next``) and pi-tui (``--session
COPY -p next``) each continue their own copy against their own loopback model server, and the
two requests must hold

- the same messages, role by role and text by text (tests/support/canonical.py), the system
  prompt aside: each program has its own;
- the same tools, by name;
- the user's own system text (a system message's ``content``) in both system prompts, in the
  same place (before the program's own text, or not).

The files are of two kinds:

- hand-made, in tests/data/pi15-handmade/ (one pi 1.x entry or field each: context edits,
  system messages, usage entries, retain-none compaction, summaries with usage, ``max``
  thinking, full-UUID ids; see its README.md);
- written by pi 1.5.2 itself over rpc in the test: prompts with a tool call, a compaction, a
  branch summary (tree navigation) with a label and a session name, snapshotted after each step.
  pi 1.5.2's rpc has no tree navigation or label command; ``pi_tree_commands.ts``, an extension
  loaded with ``-e``, does both through pi's extension API.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.interop.continuation import (
    MODEL,
    NEXT,
    PROVIDER,
    Continuation,
    RpcClient,
    Workspace,
    continue_with_pi,
    continue_with_pi_tui,
    entries,
    models_json,
    require_node,
)
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.real_pi import pi_cli, pi_env

pytestmark = pytest.mark.pi_interop

PI = "1.5.2"
HERE = Path(__file__).parent
HANDMADE = HERE.parent / "data" / "pi15-handmade"
HANDMADE_CWD = "/tmp/pi15-handmade-project"
TREE_COMMANDS = HERE / "pi_tree_commands.ts"
API = "openai-completions"


@pytest.fixture(autouse=True, scope="module")
def real_pi() -> None:
    require_node(PI)


def system_prompt(continuation: Continuation) -> str:
    (first, *_) = continuation.requests[-1]["messages"]
    assert first["role"] in ("system", "developer"), first
    return first["content"] if isinstance(first["content"], str) else json.dumps(first["content"])


def system_contents(session: Path) -> list[str]:
    """The ``content`` of the system messages in the file (what a user or extension supplied)."""
    found = []
    for entry in entries(session):
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "system" and message.get("content"):
            content = message["content"]
            found.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return found


def compare_with_pi(workspace: Workspace, session: Path) -> tuple[Continuation, Continuation]:
    """pi 1.5.2 and pi-tui continue their own copies of ``session``; their requests must agree."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs_future = pool.submit(continue_with_pi, workspace, session, workspace.root / "pi", PI)
        ours_future = pool.submit(continue_with_pi_tui, workspace, session, workspace.root / "pi-tui")
        theirs, ours = theirs_future.result(), ours_future.result()
    assert theirs.returncode == 0, f"pi {PI} -p exited {theirs.returncode}:\n{theirs.stderr[-3000:]}"
    assert theirs.stdout.strip() == f"echo: {NEXT}", theirs.stdout + theirs.stderr
    assert ours.returncode == 0, f"pi-tui -p exited {ours.returncode}:\n{ours.stderr[-3000:]}"
    assert len(theirs.requests) == len(ours.requests) == 1
    expected = theirs.messages(workspace.api)
    assert expected[-1] == {"role": "user", "parts": [("text", NEXT)]}
    assert ours.messages(workspace.api) == expected
    assert sorted(ours.tool_names()) == sorted(theirs.tool_names())
    for content in system_contents(session):
        theirs_prompt, ours_prompt = system_prompt(theirs), system_prompt(ours)
        assert content in theirs_prompt, f"pi {PI} left out the system content {content!r}"
        assert content in ours_prompt, f"pi-tui left out the system content {content!r}"
        assert ours_prompt.startswith(content) == theirs_prompt.startswith(content), (
            content,
            ours_prompt[:300],
        )
    return theirs, ours


# --- hand-made files ---------------------------------------------------------------------------

HANDMADE_FILES = sorted(path.stem for path in HANDMADE.glob("*.jsonl"))


@pytest.mark.parametrize("name", HANDMADE_FILES)
def test_pi_tui_sends_what_pi_sends_for_a_handmade_file(name: str, tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "case", reasoning=name.startswith("thinking"))
    session = workspace.root / f"{name}.jsonl"
    session.write_text((HANDMADE / f"{name}.jsonl").read_text().replace(HANDMADE_CWD, str(workspace.project)))
    compare_with_pi(workspace, session)


def test_the_handmade_files_are_what_make_py_writes(tmp_path: Path) -> None:
    """The files are generated; a hand edit would be lost on the next run of make.py."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pi15_handmade_make", HANDMADE / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = {make().name: make().lines for make in module.FILES}
    assert sorted(made) == HANDMADE_FILES
    for name, lines in made.items():
        assert entries(HANDMADE / f"{name}.jsonl") == lines, name


# --- files pi 1.5.2 wrote over rpc -------------------------------------------------------------

STAGES = ("prompts-and-tools", "compaction", "branch-summary-label-name")


def pi_rpc(workspace: Workspace, server: ModelServer) -> RpcClient:
    agent = workspace.root / "pi-writer"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps(workspace.settings))
    (agent / "models.json").write_text(json.dumps(models_json(server.base_url, API)))
    argv = [*pi_cli(PI), "--provider", PROVIDER, "--model", MODEL, "--mode", "rpc", "-e", str(TREE_COMMANDS)]
    return RpcClient(argv, workspace, env=pi_env(agent, home=workspace.root / "home", version=PI))


def _entry_id(session: Path, predicate: Any) -> str:
    return next(entry["id"] for entry in reversed(entries(session)) if predicate(entry))


def _text_of(entry: dict[str, Any]) -> str:
    return json.dumps(entry.get("message", {}).get("content", ""))


@pytest.fixture(scope="module")
def pi_written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One session pi 1.5.2 writes over rpc, copied after each of :data:`STAGES` (the header's
    cwd made :data:`HANDMADE_CWD`, as in the hand-made files)."""
    workspace = Workspace(tmp_path_factory.mktemp("pi-writes"))
    snapshots: dict[str, Path] = {}

    def snapshot(stage: str) -> Path:
        (session,) = (workspace.root / "pi-writer" / "sessions").rglob("*.jsonl")
        snapshots[stage] = workspace.root / f"{stage}.jsonl"
        snapshots[stage].write_text(session.read_text().replace(str(workspace.project), HANDMADE_CWD))
        return session

    with ModelServer() as server, pi_rpc(workspace, server) as rpc:
        rpc.prompt("Let's plan the demo project.")
        server.queue(
            Scripted(text="Reading it.", tool_calls=[ToolCallSpec("read", {"path": "README.md"})]),
            Scripted(text="A tiny demo project."),
        )
        rpc.prompt("What does the README say?")
        snapshot("prompts-and-tools")

        rpc.prompt("x" * 300)
        summary = Scripted(text="## Goal\nPlan the demo project.")
        server.queue(summary, summary)  # the history, and the start of a turn cut in two
        rpc.call({"type": "compact", "customInstructions": "keep the goal"}, timeout=60)
        rpc.prompt("Continue please")
        session = snapshot("compaction")
        assert any(entry["type"] == "compaction" for entry in entries(session))

        back_to = _entry_id(session, lambda e: "echo: Continue please" in _text_of(e))
        rpc.prompt("Try a detour")
        server.queue(Scripted(text="The user tried a detour; it went nowhere."))
        rpc.call({"type": "prompt", "message": f"/itest-goto {back_to}"}, timeout=60)
        rpc.call({"type": "prompt", "message": "/itest-label milestone"})
        rpc.call({"type": "set_session_name", "name": "Written by pi 1.5.2"})
        rpc.prompt("After the detour")
        session = snapshot("branch-summary-label-name")
    kinds = [entry["type"] for entry in entries(session)]
    assert {"branch_summary", "label", "session_info", "compaction"} <= set(kinds), kinds
    return snapshots


@pytest.mark.xdist_group("pi15-written")  # one worker runs pi_written (tests/conftest.py)
@pytest.mark.parametrize("stage", STAGES)
def test_pi_tui_sends_what_pi_sends_for_a_file_pi_wrote(
    pi_written: dict[str, Path], stage: str, tmp_path: Path
) -> None:
    workspace = Workspace(tmp_path / "case")
    session = workspace.root / f"{stage}.jsonl"
    session.write_text(pi_written[stage].read_text().replace(HANDMADE_CWD, str(workspace.project)))
    compare_with_pi(workspace, session)
