"""pi 1.x's start-up flags in the installed ``pi-tui``, each checked by its effect: the session
file written (``-n``, ``--session-id``, ``--fork --session-id``), the tools and system prompt
in the request the loopback model server receives (``--tools`` patterns and ``+``/``-``
entries, ``-xt``, the ``defaultTools`` setting, repeated ``--append-system-prompt``), the
thinking level sent (``modelThinkingLevels``), and one line with exit 2 for each mistake."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_tui.cli import main
from tests.e2e.test_cli_agent import configure, entries, pi_tui, session_files
from tests.support.model_server import ModelServer, RecordedRequest, Scripted

BASE = ("--provider", "test", "--model", "m")


def tool_names(request: RecordedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def one_line_error(result: Any, *needles: str) -> None:
    """Exit 2, one line on stderr holding every needle, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert all(needle in lines[0] for needle in needles), lines[0]
    assert "Traceback" not in result.stderr


@dataclass
class Ran:
    """What a run of ``pi-tui`` gave: the fields of a finished subprocess the tests read."""

    returncode: int
    stdout: str
    stderr: str


Runner = Callable[..., Ran]


@pytest.fixture
def in_process(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Runner:
    """``pi-tui ARGS`` run by the installed script's entry point (pi_tui.cli.main) in this process,
    in ``cwd``. The tests of session files and of the accepted look flags run the script itself;
    the flag checks here are argument handling, one print turn each against the loopback server,
    where a process each cost 1-3 s of a loaded 2-core CI run."""

    def run(*args: str, cwd: Path) -> Ran:
        monkeypatch.chdir(cwd)
        capfd.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        out, err = capfd.readouterr()
        return Ran(code, out, err)

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    return root


# --- sessions: -n, --session-id, --fork -------------------------------------------------------


def test_name_is_a_session_info_entry_in_print_mode(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"))
        result = pi_tui(*BASE, "-n", "Release notes", "-p", "hi", cwd=project)
        assert result.returncode == 0, result.stderr
        (session,) = session_files(agent_dir)
        lines = entries(session)
        named = [line for line in lines if line["type"] == "session_info"]
        assert [line["name"] for line in named] == ["Release notes"]
        assert lines[1]["type"] == "session_info"  # first after the header, as pi writes it
        listed = pi_tui("--list-sessions", cwd=project)
        assert "Release notes" in listed.stdout


def test_session_id_creates_then_reopens_that_session(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="first answer"), Scripted(text="second answer"))
        first = pi_tui(*BASE, "--session-id", "release-2.0", "-p", "one", cwd=project)
        assert first.returncode == 0, first.stderr
        assert 'no session of this folder has the id "release-2.0"' in first.stderr.lower()
        (session,) = session_files(agent_dir)
        assert session.name.endswith("_release-2.0.jsonl")
        assert entries(session)[0]["id"] == "release-2.0"
        second = pi_tui(*BASE, "--session-id", "release-2.0", "-p", "two", cwd=project)
        assert second.returncode == 0, second.stderr
        assert "release-2.0" not in second.stderr  # reopened, nothing to say
        assert session_files(agent_dir) == [session]
        users = [
            json.dumps(line["message"]["content"])
            for line in entries(session)
            if line["type"] == "message" and line["message"]["role"] == "user"
        ]
        assert len(users) == 2 and "one" in users[0] and "two" in users[1]
        # The model saw the first exchange when asked the second time.
        texts = json.dumps(server.requests[-1].body["messages"])
        assert "first answer" in texts


def test_fork_with_session_id_names_the_new_session(
    agent_dir: Path, project: Path, in_process: Runner
) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="a"), Scripted(text="b"))
        assert in_process(*BASE, "--session-id", "base.1", "-p", "one", cwd=project).returncode == 0
        result = in_process(*BASE, "--fork", "base.1", "--session-id", "branch_2", "-p", "two", cwd=project)
        assert result.returncode == 0, result.stderr
        forked = [path for path in session_files(agent_dir) if path.name.endswith("_branch_2.jsonl")]
        assert len(forked) == 1
        header = entries(forked[0])[0]
        assert header["id"] == "branch_2" and header["parentSession"].endswith("_base.1.jsonl")
        taken = in_process(*BASE, "--fork", "base.1", "--session-id", "branch_2", "-p", "x", cwd=project)
        one_line_error(taken, "already has a session", "branch_2")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--session-id", "bad id"], ("--session-id", "letters, digits")),
        (["--session-id=-abc"], ("--session-id", "starts and ends")),
        (["--session-id", "abc."], ("--session-id", "starts and ends")),
        (["--session-id", "x", "-c"], ("--session-id cannot be combined with --continue",)),
        (["--session-id", "x", "--session", "y"], ("--session-id cannot be combined with --session",)),
        (["--fork", "x", "--no-session"], ("--fork cannot be combined with --no-session",)),
        (["--fork", "x", "-c"], ("--fork cannot be combined with --continue",)),
        (["--fork", "x", "-r"], ("--fork cannot be combined with --resume",)),
        (["-n", "  "], ("--name",)),
        (["--tools", "read,+bash"], ("cannot be mixed",)),
        (["--tools", "+gr*"], ("not patterns", "+gr*")),
        (["--tui-mode", "bogus"], ("--tui-mode", "regular")),
    ],
)
def test_flag_mistakes_are_one_line(
    agent_dir: Path, project: Path, args: list[str], needles: tuple[str, ...], in_process: Runner
) -> None:
    one_line_error(in_process(*args, "-p", "hi", cwd=project), *needles)


# --- tools ---------------------------------------------------------------------------------------


def run_tools(
    run: Runner, agent_dir: Path, project: Path, *flags: str, settings: dict[str, Any] | None = None
) -> Any:
    """One print-mode turn with ``flags``; returns (the result, the tools the request named)."""
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings))
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"))
        result = run(*BASE, "--no-session", *flags, "-p", "hi", cwd=project)
        assert result.returncode == 0, result.stderr
        return result, tool_names(server.requests[-1])


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (("--tools", "gr*,read"), ["grep", "read"]),
        (("--tools", "*"), ["read", "bash", "edit", "write", "grep", "find", "ls"]),
        (("--tools", "+grep,-bash"), ["read", "edit", "write", "grep"]),
        (("-xt", "e*,bash"), ["read", "write"]),
        (("--exclude-tools", "read", "--tools", "read,ls"), ["ls"]),
        (("-nbt", "--tools", "+find"), ["find"]),
    ],
)
def test_tool_selection(
    agent_dir: Path, project: Path, flags: tuple[str, ...], expected: list[str], in_process: Runner
) -> None:
    _result, names = run_tools(in_process, agent_dir, project, *flags)
    assert names == expected


def test_unknown_tool_is_left_out_with_a_warning(agent_dir: Path, project: Path, in_process: Runner) -> None:
    result, names = run_tools(in_process, agent_dir, project, "--tools", "teleport,read")
    assert names == ["read"]
    assert "teleport" in result.stderr and "known tools: read, bash" in result.stderr


def test_default_tools_setting(agent_dir: Path, project: Path, in_process: Runner) -> None:
    _r, names = run_tools(in_process, agent_dir, project, settings={"defaultTools": ["+ls", "-edit"]})
    assert names == ["read", "bash", "write", "ls"]
    _r, names = run_tools(in_process, agent_dir, project, settings={"defaultTools": ["grep", "read"]})
    assert names == ["grep", "read"]
    _r, names = run_tools(in_process, agent_dir, project, settings={"defaultTools": []})
    assert names == []
    # --tools +name/-name changes the setting's selection; plain names replace it.
    _r, names = run_tools(
        in_process, agent_dir, project, "--tools", "+find", settings={"defaultTools": ["grep"]}
    )
    assert names == ["grep", "find"]
    _r, names = run_tools(
        in_process, agent_dir, project, "--tools", "ls", settings={"defaultTools": ["grep"]}
    )
    assert names == ["ls"]


def test_project_default_tools_changes_the_users(agent_dir: Path, project: Path, in_process: Runner) -> None:
    (project / ".agent").mkdir()
    (project / ".agent" / "settings.json").write_text(json.dumps({"defaultTools": ["+find", "-bash"]}))
    _r, names = run_tools(
        in_process, agent_dir, project, "-a", settings={"defaultTools": ["read", "bash", "grep"]}
    )
    assert names == ["read", "grep", "find"]


# --- prompt, thinking, look ----------------------------------------------------------------------


def test_append_system_prompt_is_repeatable(agent_dir: Path, project: Path, in_process: Runner) -> None:
    (project / "extra.md").write_text("From the file: marker-B2.\n")
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"))
        result = in_process(
            *BASE, "--no-session", "--append-system-prompt", "Text marker-A1.",
            "--append-system-prompt", "extra.md", "-p", "hi", cwd=project,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        prompt = server.requests[-1].body["messages"][0]["content"]
        assert "Text marker-A1." in prompt and "From the file: marker-B2." in prompt
        assert prompt.index("marker-A1") < prompt.index("marker-B2")


def test_model_thinking_levels_setting(agent_dir: Path, project: Path, in_process: Runner) -> None:
    levels = {"test/m": "high", "test/other": "minimal"}
    settings = {"defaultThinkingLevel": "low", "modelThinkingLevels": levels}
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    with ModelServer() as server:
        configure(agent_dir, server, reasoning=True)
        server.queue(Scripted(text="ok"), Scripted(text="ok"), Scripted(text="ok"))
        for extra in ([], ["--thinking", "medium"], ["--model", "test/m:minimal"]):
            result = in_process(*BASE, "--no-session", *extra, "-p", "hi", cwd=project)
            assert result.returncode == 0, result.stderr
        efforts = [request.body.get("reasoning_effort") for request in server.requests]
        assert efforts == ["high", "medium", "minimal"]


def test_use_theme_tui_mode_and_no_mcp_are_accepted(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="fine"))
        result = pi_tui(
            *BASE, "--no-session", "--use-theme", "dark/light", "--tui-mode", "regular", "--no-mcp",
            "-p", "hi", cwd=project,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "fine"
