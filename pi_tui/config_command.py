"""``pi-tui config [-l/--local] [--json]``: where each configuration file pi-tui reads is, and
whether it is there.

pi's ``pi config`` picks which resources of installed pi packages load; pi-tui has no
packages, so its ``config`` answers the question a user moving between the two asks first:
which file is read from where (pi-tui's agent dir is ``~/.agent``, pi's ``~/.pi/agent``, read
beneath ours). ``--local`` lists this project's ``.agent`` folder and whether it is trusted,
as pi's ``--local`` switches to the project's settings.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from pi_tui.argparsing import ArgumentsError, OneLineParser

Fail = Callable[..., int]


class Place(NamedTuple):
    name: str
    path: Path | None
    note: str = ""


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui config",
        description="Where each configuration file is and whether it exists "
        "(pi's `pi config` selects package resources; pi-tui has no packages).",
    )
    parser.add_argument(
        "-l", "--local", action="store_true", help="this project's .agent folder instead of the agent dir"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per place, for scripts")
    return parser


def run_config(words: list[str], fail: Fail) -> int:
    try:
        args = build_parser().parse_args(words)
    except ArgumentsError as error:
        return fail(f"config: {error}")
    cwd = os.getcwd()
    places = project_places(cwd) if args.local else user_places(cwd)
    if args.json:
        for place in places:
            state = describe(place.path)
            record = {"name": place.name, "path": str(place.path) if place.path else None, "state": state}
            if place.note:
                record["note"] = place.note
            print(json.dumps(record, ensure_ascii=False))
        return 0
    width = max(len(place.name) for place in places)
    for place in places:
        shown = str(place.path) if place.path is not None else "-"
        note = f"  ({place.note})" if place.note else ""
        line = f"{place.name:<{width}}  {describe(place.path):<8}  {shown}{note}"
        print(_shown(line))
    return 0


def user_places(cwd: str) -> list[Place]:
    """The agent dir's files, this folder's sessions and pi's folder."""
    from pi_tui.config.auth import auth_file
    from pi_tui.config.paths import agent_dir, session_dir_for_cwd
    from pi_tui.config.pi_folder import pi_agent_dir
    from pi_tui.config.session_dir import chosen_session_dir
    from pi_tui.config.trust_store import TRUST_FILE_NAME

    folder = agent_dir()
    chosen = chosen_session_dir(cwd, None)
    sessions_note = "chosen by PI_CODING_AGENT_SESSION_DIR or sessionDir" if chosen else "this folder's"
    places = [
        Place("agent dir", folder, "PI_CODING_AGENT_DIR" if os.environ.get("PI_CODING_AGENT_DIR") else ""),
        Place("settings", folder / "settings.json"),
        Place("models", folder / "models.json"),
        Place("auth", auth_file(folder), _mode_note(auth_file(folder))),
        Place("keybindings", folder / "keybindings.json"),
        Place("themes", folder / "themes"),
        Place("extensions", folder / "extensions"),
        Place("skills", folder / "skills"),
        Place("prompts", folder / "prompts"),
        Place("trust", folder / TRUST_FILE_NAME, "project folders trusted or not"),
        Place("sessions", session_dir_for_cwd(cwd, chosen), sessions_note),
    ]
    pi_folder = pi_agent_dir()
    places.append(
        Place(
            "pi's folder",
            pi_folder,
            "its models.json, auth.json, settings.json and sessions are read beneath ours",
        )
    )
    return places


def project_places(cwd: str) -> list[Place]:
    """This project's ``.agent`` folder, what in it pi-tui reads, and whether it may."""
    from pi_tui.config.project_trust import (
        PROJECT_DIR_NAME,
        PROTECTED_NAMES,
        project_dir,
        saved_trust_allows,
    )

    folder = project_dir(cwd)
    if folder is None:
        here = Path(cwd).resolve() / PROJECT_DIR_NAME
        return [Place("project dir", here, "it is the agent dir itself: see pi-tui config")]
    if not folder.is_dir():
        trust_note = ""
    elif saved_trust_allows(cwd):
        trust_note = "trusted"
    else:
        trust_note = "not trusted: what needs trust is not read (-a/--approve reads it once)"
    places = [Place("project dir", folder, trust_note)]
    for name in PROTECTED_NAMES:
        note = "not read: pi-tui has no MCP support yet" if name == "mcp.json" else ""
        places.append(Place(name.removesuffix(".json"), folder / name, note))
    places.append(Place("secrets", folder / "secrets.yml", "read without trust: it can only hide more"))
    return places


def describe(path: Path | None) -> str:
    """``file``, ``folder``, ``missing`` (or ``unusable`` for anything else, e.g. a socket)."""
    if path is None:
        return "none"
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unusable"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "unusable"


def _mode_note(path: Path) -> str:
    """auth.json holds keys: say when others can read it."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return ""
    if mode & 0o077:
        return f"mode {mode:04o}: others can read it; chmod 600 it"
    return f"mode {mode:04o}"


def _shown(text: str) -> str:
    """Paths come from the environment: control characters are made visible on a terminal."""
    if not sys.stdout.isatty():
        return text
    from pi_tui.text_safety import for_terminal

    return for_terminal(text)
