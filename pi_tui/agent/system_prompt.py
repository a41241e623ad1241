"""The system prompt: who the agent is, its tools, the project's context files, date and cwd.

``SYSTEM.md`` replaces the default text and ``APPEND_SYSTEM.md`` is added at the end, as in pi:
the agent dir's always, the project's (``<cwd>/.agent/``) only in a trusted folder, and then
in place of the agent dir's (the two files of one name are not combined). ``--system-prompt``
wins over any ``SYSTEM.md``; ``--append-system-prompt`` is used instead of any
``APPEND_SYSTEM.md`` (:func:`prompt_files`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pi_tui.config.paths import agent_dir
from pi_tui.tools.base import AgentTool

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""pi 1.x's names, in the order a folder's one context file is chosen: ``AGENTS.override.md``
stands in for that folder's AGENTS.md / CLAUDE.md (a local variant kept out of the repository)
and for nothing else; the agent dir's and other folders' files still load."""

BASE_PROMPT = """You are a coding agent working in the user's project from a terminal. You read \
files, run commands, edit code and write new files to get the user's task done.

Work like a careful senior engineer:
- Look before you change: read the relevant files and run commands to learn the project.
- Make focused changes; prefer editing existing code over rewriting it.
- Check your work (run the tests or the program) when that is possible.
- Keep answers short and concrete; show paths and commands, not long explanations.
- When something is unclear or risky, say so instead of guessing."""


def context_files(cwd: Path) -> list[Path]:
    """AGENTS.md / CLAUDE.md from the agent dir, then from the repository root down to ``cwd``.

    In each folder the first existing name of :data:`CONTEXT_FILE_NAMES` wins, so an
    ``AGENTS.override.md`` replaces only its own folder's file. Walking stops at the first
    folder containing ``.git`` (the repository root) or at the filesystem root.
    """
    found: list[Path] = []
    global_file = _first_existing(agent_dir())
    if global_file is not None:
        found.append(global_file)
    folders: list[Path] = []
    current = cwd.resolve()
    while True:
        folders.append(current)
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    for folder in reversed(folders):
        candidate = _first_existing(folder)
        if candidate is not None and candidate not in found:
            found.append(candidate)
    return found


SYSTEM_FILE = "SYSTEM.md"
APPEND_FILE = "APPEND_SYSTEM.md"


def prompt_file(cwd: Path, name: str, project_trusted: bool) -> Path | None:
    """``name`` (:data:`SYSTEM_FILE` or :data:`APPEND_FILE`): the trusted project's, else the
    agent dir's, else None."""
    from pi_tui.config.project_trust import project_dir

    folder = project_dir(cwd) if project_trusted else None
    for candidate in ((folder / name) if folder is not None else None, agent_dir() / name):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def prompt_files(
    cwd: Path, project_trusted: bool, custom: str | None, append: str | None
) -> tuple[str | None, str | None]:
    """The replacement and the addition for :func:`build_system_prompt`: the command line's
    (``custom`` / ``append``) when given, else the text of ``SYSTEM.md`` / ``APPEND_SYSTEM.md``."""

    def read(name: str) -> str | None:
        path = prompt_file(cwd, name, project_trusted)
        if path is None:
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return (custom if custom is not None else read(SYSTEM_FILE)), (
        append if append is not None else read(APPEND_FILE)
    )


def _first_existing(folder: Path) -> Path | None:
    for name in CONTEXT_FILE_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def build_system_prompt(
    cwd: Path,
    tools: Sequence[AgentTool],
    *,
    custom: str | None = None,
    append: str | None = None,
    extra_sections: Sequence[str] = (),
    now: datetime | None = None,
    with_context_files: bool = True,
) -> str:
    """The full prompt. ``custom`` replaces the base text (``--system-prompt``); ``append`` is
    added at the end (``--append-system-prompt``); ``extra_sections`` carries always-apply rules;
    ``with_context_files=False`` (``--no-context-files``) leaves AGENTS.md / CLAUDE.md out."""
    parts = [custom.strip() if custom else BASE_PROMPT]
    if tools:
        listing = "\n".join(f"- {tool.name}: {tool.description.splitlines()[0]}" for tool in tools)
        parts.append(f"Available tools:\n{listing}")
    else:
        parts.append("No tools are available in this session: answer from the conversation alone.")
    for path in context_files(cwd) if with_context_files else []:
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            parts.append(f"# Project context from {path}\n\n{text}")
    parts.extend(section.strip() for section in extra_sections if section.strip())
    moment = now or datetime.now().astimezone()
    stamp = moment.strftime("%A, %Y-%m-%d %H:%M %Z")
    parts.append(f"Current date and time: {stamp}\nWorking directory: {cwd}")
    if append:
        parts.append(append.strip())
    return "\n\n".join(parts)
