"""Extensions through the installed ``pi-tui``: trust of project code, ``-p "/command"``,
``-e``, extension flags, failures that stay one line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import configure, pi_tui
from tests.support.model_server import ModelServer, Scripted

BASE = ("--provider", "test", "--model", "m", "--no-session")

EVIL = """
from pathlib import Path
Path(__file__).parents[3].joinpath("MARKER").write_text("project code ran")

def activate(pi):
    pi.register_command("evil", handler=lambda args: None)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))
    root = tmp_path / "work" / "project"
    (root / ".agent" / "extensions").mkdir(parents=True)
    (root / ".agent" / "extensions" / "evil.py").write_text(EVIL)
    return root


def marker(project: Path) -> Path:
    return project.parent / "MARKER"  # outside the project: the extension writes it there


def test_project_code_runs_only_once_the_folder_is_trusted(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(*[Scripted(text="ok") for _ in range(4)])
        plain = pi_tui(*BASE, "-p", "hi", cwd=project)
        assert plain.returncode == 0 and plain.stdout == "ok\n"
        assert not marker(project).exists()
        assert "project resources not loaded (extensions: evil): this folder is not trusted" in plain.stderr
        assert "-a/--approve" in plain.stderr and "Traceback" not in plain.stderr

        (agent_dir / "trust.json").write_text(json.dumps({"folders": {str(project.resolve()): "never"}}))
        never = pi_tui(*BASE, "--trust", "-p", "hi", cwd=project)
        assert never.returncode == 0
        assert marker(project).exists()  # --trust is the user's explicit word, stronger than "never"
        marker(project).unlink()

        plain_never = pi_tui(*BASE, "-p", "hi", cwd=project)
        assert "marked never to be trusted" in plain_never.stderr and not marker(project).exists()

        (agent_dir / "trust.json").write_text(json.dumps({"folders": {str(project.resolve()): "trusted"}}))
        trusted = pi_tui(*BASE, "-p", "hi", cwd=project)
        assert trusted.returncode == 0 and marker(project).exists()
        assert "not loaded" not in trusted.stderr


def test_print_mode_runs_commands_and_prompts_in_order(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "order.py").write_text(
        textwrap.dedent(
            """
            def activate(pi):
                def note(args, ctx):
                    pi.append_entry("note", {"args": args})
                    ctx.ui.notify("noted " + args)
                pi.register_command("note", handler=note, description="Keep a note")
            """
        )
    )
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="answer one"), Scripted(text="answer two"))
        done = pi_tui(
            "--provider", "test", "--model", "m", "-p", "first", "/note a b", "second", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "answer two\n"
        assert "pi-tui: order: noted a b" in done.stderr
        assert len(server.requests) == 2
        session = next((agent_dir / "sessions").rglob("*.jsonl"))
        kinds = [
            (entry["type"], entry.get("message", {}).get("role"))
            for entry in map(json.loads, session.read_text().splitlines())
            if entry["type"] in ("message", "custom")
        ]
        assert kinds == [
            ("message", "user"),
            ("message", "assistant"),
            ("custom", None),
            ("message", "user"),
            ("message", "assistant"),
        ]


def test_dash_e_loads_a_file_and_a_missing_one_is_exit_2(agent_dir: Path, tmp_path: Path) -> None:
    extension = tmp_path / "shout.py"
    extension.write_text(
        textwrap.dedent(
            """
            def activate(pi):
                pi.register_flag("shout", description="answer in capitals")
                def end(event):
                    if pi.get_flag("shout") and event.message.role == "assistant":
                        loud = [{"type": "text", "text": event.message.content[0].text.upper()}]
                        return {"message": event.message.model_copy(update={"content": loud})}
                pi.on("message_end", end)
            """
        )
    )
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="quiet"), Scripted(text="loud"))
        quiet = pi_tui(*BASE, "-e", str(extension), "-p", "hi", cwd=tmp_path)
        loud = pi_tui(*BASE, "-e", str(extension), "--shout", "-p", "hi", cwd=tmp_path)
        assert (quiet.returncode, quiet.stdout) == (0, "quiet\n")
        assert (loud.returncode, loud.stdout) == (0, "LOUD\n")
        unknown = pi_tui(*BASE, "-e", str(extension), "--whisper", "-p", "hi", cwd=tmp_path)
        assert unknown.returncode == 2
        assert unknown.stderr.strip() == "pi-tui: unrecognized arguments: --whisper (see pi-tui --help)"
        missing = pi_tui(*BASE, "-e", str(tmp_path / "nope.py"), "-p", "hi", cwd=tmp_path)
        assert missing.returncode == 2
        assert missing.stderr.strip().endswith("nope.py does not exist")
        assert len(server.requests) == 2


def test_a_broken_extension_is_one_line_and_the_run_goes_on(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "broken.py").write_text("def activate(pi):\n    raise RuntimeError('boom')\n")
    (agent_dir / "extensions" / "handler.py").write_text(
        "def activate(pi):\n    pi.on('turn_start', lambda event: 1 / 0)\n"
    )
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="still here"))
        done = pi_tui(*BASE, "-p", "hi", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, "still here\n")
        lines = [line for line in done.stderr.splitlines() if "extension" in line]
        assert len(lines) == 2, done.stderr
        assert "extension broken" in lines[0] and "activate failed: RuntimeError: boom" in lines[0]
        assert "extension handler" in lines[1] and "turn_start" in lines[1]
        assert "ZeroDivisionError" in lines[1] and "Traceback" not in done.stderr
        assert "Traceback" in (tmp_path / "logs" / "extensions.log").read_text()


@pytest.fixture(autouse=True)
def _logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))


def test_a_provider_registered_by_an_extension_is_the_start_up_model(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = agent_dir / "extensions" / "localmodels"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .config import activate\n")
    (package / "config.py").write_text(
        textwrap.dedent(
            """
            import os

            def activate(pi):
                pi.register_provider("local", {
                    "baseUrl": os.environ["LOCAL_MODEL_URL"],
                    "api": "openai-completions",
                    "apiKey": "none",
                    "models": [{"id": "tiny", "name": "Tiny"}],
                })
            """
        )
    )
    with ModelServer() as server:
        server.queue(Scripted(text="from the local model"))
        monkeypatch.setenv("LOCAL_MODEL_URL", server.base_url)
        done = pi_tui("--provider", "local", "--model", "tiny", "--no-session", "-p", "hi", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, "from the local model\n"), done.stderr
        assert server.requests[0].body["model"] == "tiny"


def test_skills_and_templates_in_print_mode(agent_dir: Path, tmp_path: Path) -> None:
    skill = agent_dir / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: release-notes\ndescription: Write release notes from git log.\n---\nUse git log.\n"
    )
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "explain.md").write_text(
        "---\ndescription: Explain code\n---\nExplain $1 to a $2.\n"
    )
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="one"), Scripted(text="two"), Scripted(text="three"))
        done = pi_tui(
            *BASE, "-p", "/skill:release-notes for 1.2", "/explain cli.py beginner", "hi", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        first, second, third = (request.body["messages"] for request in server.requests)
        assert "<name>release-notes</name>" in first[0]["content"]
        assert first[-1]["content"][0]["text"].endswith("Use git log.\n</skill>\n\nfor 1.2")
        assert second[-1]["content"][0]["text"] == "Explain cli.py to a beginner."
        assert third[-1]["content"][0]["text"] == "hi"
        no_skills = pi_tui(*BASE, "--no-skills", "--no-prompt-templates", "-p", "/explain x y", cwd=tmp_path)
        assert no_skills.returncode == 0
        assert server.requests[-1].body["messages"][-1]["content"][0]["text"] == "/explain x y"
        assert "<available_skills>" not in server.requests[-1].body["messages"][0]["content"]


def test_ctx_shutdown_ends_print_mode_after_the_current_prompt(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "stopper.py").write_text(
        "def activate(pi):\n    pi.register_command('stop', handler=lambda args, ctx: ctx.shutdown())\n"
    )
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="first"), Scripted(text="never"))
        done = pi_tui(*BASE, "-p", "one", "/stop", "two", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 1


def test_the_tools_allow_list_takes_extension_tools_too(agent_dir: Path, tmp_path: Path) -> None:
    word_count = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "word_count.py"
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"), Scripted(text="ok"), Scripted(text="ok"))
        listed = pi_tui(*BASE, "-e", str(word_count), "-t", "read,word_count", "-p", "hi", cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        names = [tool["function"]["name"] for tool in server.requests[0].body["tools"]]
        assert names == ["read", "word_count"]
        builtin_only = pi_tui(*BASE, "-e", str(word_count), "-t", "ls", "-p", "hi", cwd=tmp_path)
        assert [tool["function"]["name"] for tool in server.requests[1].body["tools"]] == ["ls"]
        assert builtin_only.returncode == 0
        unknown = pi_tui(*BASE, "-e", str(word_count), "-t", "read,nosuch", "-p", "hi", cwd=tmp_path)
        # pi 1.x leaves a name no tool has out; pi-tui says which (the extension's tool is known).
        assert unknown.returncode == 0 and "nosuch" in unknown.stderr and "word_count" in unknown.stderr
        assert [tool["function"]["name"] for tool in server.requests[2].body["tools"]] == ["read"]
