"""The ``pi-tui`` command line.

So far the session core is all there is, so the command line offers what works on it: version,
help, and a look at the sessions kept for a folder. The agent modes arrive with the agent.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pi_tui import __version__
from pi_tui.session import SessionError, SessionManager

DESCRIPTION = """\
pi-tui: a terminal coding agent that keeps every conversation as a tree on disk.

Sessions live in $PI_CODING_AGENT_DIR/sessions (default ~/.agent/sessions), one folder per
working directory, in the same JSONL format as pi."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-tui",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pi-tui {__version__}")
    parser.add_argument(
        "--list-sessions",
        action="store_true",
        help="list the sessions kept for the current folder, newest first, and exit",
    )
    parser.add_argument(
        "--session-dir", metavar="DIR", help="where sessions live (instead of <agent dir>/sessions/...)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_sessions:
        return _list_sessions(args.session_dir)
    print(
        "pi-tui: the interactive and print modes are not part of this build yet; "
        "see `pi-tui --help` for what is.",
        file=sys.stderr,
    )
    return 2


def _list_sessions(session_dir: str | None) -> int:
    try:
        sessions = SessionManager.list(os.getcwd(), session_dir)
    except SessionError as error:
        print(f"pi-tui: {error}", file=sys.stderr)
        return 1
    if not sessions:
        print("No sessions for this folder yet.")
        return 0
    for info in sessions:
        title = info.name or info.first_message.replace("\n", " ")[:60] or "(no messages)"
        stamp = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        print(f"{stamp}  {info.id[:8]}  {info.message_count:>4} msgs  {title}")
    return 0
