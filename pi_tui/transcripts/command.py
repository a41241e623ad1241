"""``pi-tui import [PATH | --from claude] [--all]``: the command-line face of the importer."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

AGENTS = ("claude", "codex", "gemini")


def claude_projects() -> Path:
    """Where Claude Code keeps its transcripts (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def claude_folder(cwd: str) -> Path:
    """This folder's Claude Code project folder: the path with every other character than a
    letter or digit written as ``-``."""
    return claude_projects() / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def folder_transcripts(agent: str, cwd: str) -> list[Path]:
    """This folder's transcripts of ``agent``, newest first."""
    if agent != "claude":
        return []
    folder = claude_folder(cwd)
    try:
        found = [path for path in folder.glob("*.jsonl") if path.is_file()]
    except OSError:
        return []
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


def run_import(argv: Sequence[str], say_error: Callable[[str, int], int]) -> int:
    """Import the named transcript, or this folder's newest (``--all``: every) of an agent."""
    from pi_tui.config.paths import agent_dir, session_dir_for_cwd
    from pi_tui.session.errors import SessionError
    from pi_tui.transcripts.importer import TranscriptImportError, import_summary, import_transcript

    parser = argparse.ArgumentParser(
        prog="pi-tui import",
        description="Another agent's transcript as a pi session of this folder (again: what it gained).",
    )
    parser.add_argument("path", nargs="?", help="a transcript file")
    parser.add_argument(
        "--from", dest="agent", choices=AGENTS, help="this folder's transcripts of that agent"
    )
    parser.add_argument("--all", action="store_true", help="with --from: every one, not only the newest")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as done:
        return int(done.code or 0)
    if (args.path is None) == (args.agent is None):
        return say_error("import takes a transcript file or --from claude|codex|gemini", 2)
    cwd = os.getcwd()
    if args.path is not None:
        sources = [Path(args.path)]
    else:
        if args.agent != "claude":
            return say_error(f"--from {args.agent}: only Claude Code transcripts can be imported yet", 2)
        sources = folder_transcripts(args.agent, cwd)
        if not sources:
            print(f"No Claude Code transcripts for this folder (looked in {claude_folder(cwd)}).")
            return 0
        if not args.all:
            sources = sources[:1]
    sessions = session_dir_for_cwd(cwd)
    status = 0
    for source in sources:
        try:
            result = import_transcript(source, cwd, sessions, agent_dir())
        except (TranscriptImportError, SessionError) as error:
            status = say_error(str(error), 2)
            continue
        if result.added == 0:
            print(f"Nothing new in {source} (session {result.session})")
            continue
        what = "Imported" if result.new_session else "Updated"
        print(f"{what} {source} -> {result.session}: {result.added} entries ({import_summary(result)})")
    return status
