"""``--no-tools`` and ``--no-builtin-tools`` in the installed ``pi-tui``: what ``--help`` says
about them is what they do (pi 1.5.2's meaning). ``-nt`` switches every tool off, extensions'
too, except what ``--tools`` names; ``-nbt`` only the built-in ones, so an extension's tool still
reaches the model. The help used to call ``-nbt`` the same as ``--no-tools``, and ``-nt`` ignored
``--tools``."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import configure, pi_tui
from tests.e2e.test_cli_pi1_flags import BASE, tool_names
from tests.support.model_server import ModelServer, Scripted

EXTENSION = textwrap.dedent(
    """
    def activate(pi):
        def lookup(params):
            return "found"

        pi.register_tool("lookup", description="Look a key up", execute=lookup,
                         parameters={"type": "object", "properties": {}})
    """
)


def help_entry(help_text: str, flag: str) -> str:
    """The help of one option, its wrapped lines joined."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+(-\w+, )?{flag}\b", line))
    entry = [lines[start]]
    for line in lines[start + 1 :]:
        if re.match(r"  -", line) or not line.startswith("   "):  # the next option, or a group
            break
        entry.append(line)
    return " ".join(part.strip() for part in entry)


def test_help_tells_the_two_flags_apart(tmp_path: Path) -> None:
    result = pi_tui("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    builtin = help_entry(result.stdout, "--no-builtin-tools")
    everything = help_entry(result.stdout, "--no-tools")
    assert "same as" not in builtin, builtin
    assert "extensions' tools stay" in builtin and "--tools" in builtin, builtin
    assert "extensions'" in everything and "--tools" in everything, everything


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (("-nbt",), ["lookup"]),
        (("-nt",), []),
        (("-nbt", "--tools", "+read"), ["read", "lookup"]),
        # pi 1.x: under --no-tools, --tools still names the tools to have (theirs and ours)
        (("-nt", "--tools", "read"), ["read"]),
        (("-nt", "--tools", "+find"), ["find"]),
        (("-nt", "--tools", "lookup,ls"), ["ls", "lookup"]),
    ],
)
def test_what_each_flag_leaves_on(
    agent_dir: Path, tmp_path: Path, flags: tuple[str, ...], expected: list[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    extension = tmp_path / "lookup.py"
    extension.write_text(EXTENSION)
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"))
        result = pi_tui(*BASE, "--no-session", "-e", str(extension), *flags, "-p", "hi", cwd=project)
        assert result.returncode == 0, result.stderr
        assert tool_names(server.requests[-1]) == expected
