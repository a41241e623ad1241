"""``pi-tui import [PATH | --from claude|codex|gemini] [--all]``: the command-line face of the
importer. ``--from`` finds this folder's transcripts: Claude Code's project folder is the path
with every character but letters and digits as ``-``; Codex rollouts by their ``cwd``; Gemini
chats under the sha256 of the path."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pi_tui import jsonio
from pi_tui.argparsing import ArgumentsError, OneLineParser

AGENTS = ("claude", "codex", "gemini")


def claude_projects() -> Path:
    """Where Claude Code keeps its transcripts (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def claude_folder(cwd: str) -> Path:
    """This folder's Claude Code project folder: the path with every other character than a
    letter or digit written as ``-``."""
    return claude_projects() / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def codex_sessions() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "sessions"


def gemini_chats(cwd: str) -> Path:
    """Gemini CLI keeps a folder's chats under the sha256 of the folder's path."""
    return Path.home() / ".gemini" / "tmp" / hashlib.sha256(cwd.encode()).hexdigest() / "chats"


def _codex_cwd(path: Path) -> str | None:
    """The folder a rollout ran in: ``session_meta.cwd``, or the ``<cwd>`` of an old file's
    environment context."""
    try:
        with path.open("rb") as stream:
            head = stream.read(65536)
    except OSError:
        return None
    for line in head.split(b"\n")[:40]:
        with contextlib.suppress(ValueError):
            record = jsonio.loads(line)
            payload = record.get("payload") if isinstance(record, dict) else None
            if isinstance(payload, dict) and isinstance(cwd := payload.get("cwd"), str):
                return cwd
    found = re.search(rb"<cwd>([^<]+)</cwd>", head)
    return found.group(1).decode("utf-8", "replace") if found else None


def folder_transcripts(agent: str, cwd: str) -> list[Path]:
    """This folder's transcripts of ``agent``, newest first."""
    try:
        if agent == "claude":
            found = [path for path in claude_folder(cwd).glob("*.jsonl") if path.is_file()]
        elif agent == "codex":
            found = [path for path in codex_sessions().rglob("rollout-*.jsonl") if _codex_cwd(path) == cwd]
        else:
            folder = gemini_chats(cwd)
            found = [path for path in folder.glob("session-*") if path.suffix in (".json", ".jsonl")]
    except OSError:
        return []
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


def run_import(argv: Sequence[str], say_error: Callable[[str, int], int]) -> int:
    """Import the named transcript, or this folder's newest (``--all``: every) of an agent."""
    from pi_tui.config.paths import agent_dir, session_dir_for_cwd
    from pi_tui.session.errors import SessionError
    from pi_tui.transcripts.importer import TranscriptImportError, import_summary, import_transcript

    parser = OneLineParser(
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
    except ArgumentsError as error:
        return say_error(f"import: {error} (see pi-tui import --help)", 2)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    if (args.path is None) == (args.agent is None):
        return say_error("import takes a transcript file or --from claude|codex|gemini", 2)
    cwd = os.getcwd()
    if args.path is not None:
        sources = [Path(args.path)]
    else:
        sources = folder_transcripts(args.agent, cwd)
        if not sources:
            where = {"claude": claude_folder(cwd), "codex": codex_sessions(), "gemini": gemini_chats(cwd)}[
                args.agent
            ]
            print(f"No {args.agent} transcripts for this folder (looked in {where}).")
            return 0
        if not args.all:
            sources = sources[:1]
    from pi_tui.config.session_dir import chosen_session_dir

    sessions = session_dir_for_cwd(cwd, chosen_session_dir(cwd, None))  # where -c will look
    status = 0
    for source in sources:
        try:
            result = import_transcript(source, cwd, sessions, agent_dir())
        except (TranscriptImportError, SessionError) as error:
            status = say_error(str(error), 2)
            continue
        for warning in result.warnings:
            print(f"pi-tui: {source}: {warning}", file=sys.stderr)
        if result.added == 0:
            print(f"Nothing new in {source} (session {result.session})")
            continue
        what = "Imported" if result.new_session else "Updated"
        print(f"{what} {source} -> {result.session}: {result.added} entries ({import_summary(result)})")
    return status
