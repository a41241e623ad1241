"""pi's own agent folder (``~/.pi/agent``), read beneath pi-tui's.

pi-tui keeps its own folder (``$PI_CODING_AGENT_DIR``, else ``~/.agent``), but a pi user already
has sessions, models, keys and settings in pi's. So that they are found without configuration,
pi's folder is read *beneath* ours: its sessions are listed, resumed and continued beside ours
(a continued pi session grows in its own file), and its ``models.json``, ``auth.json`` and
``settings.json`` fill in what ours do not say. pi-tui never writes pi's settings or keys; the
one exception is a subscription login renewed in pi's auth.json (pi_tui/config/auth.py says why).

When both names lead to the same folder (``PI_CODING_AGENT_DIR=~/.pi/agent``), there is only
ours. ``$PI_TUI_PI_AGENT_DIR`` moves pi's folder (tests, benchmarks, an unusual install); set
to the empty string, nothing of pi's is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_tui.config.paths import agent_dir, sessions_root

PI_FOLDER_ENV = "PI_TUI_PI_AGENT_DIR"
PI_ORIGIN = "pi"
"""How a session found in pi's folder is marked (the ``/resume`` row's tag)."""


def pi_agent_dir() -> Path | None:
    """pi's agent folder, or None when there is none apart from ours.

    The folder need not exist: whatever reads from it treats a missing file as an empty one.
    """
    configured = os.environ.get(PI_FOLDER_ENV)
    if configured is not None:
        if not configured.strip():
            return None
        folder = Path(configured).expanduser()
    else:
        folder = Path.home() / ".pi" / "agent"
    if same_folder(folder, agent_dir()):
        return None
    return folder


def pi_file(name: str) -> Path | None:
    """``name`` (``models.json``, ``auth.json``, ``settings.json``) in pi's folder."""
    folder = pi_agent_dir()
    return folder / name if folder is not None else None


def pi_sessions_root() -> Path | None:
    folder = pi_agent_dir()
    return folder / "sessions" if folder is not None else None


def session_roots() -> list[Path]:
    """Where sessions are grouped by working folder: ours first, then pi's."""
    pi_root = pi_sessions_root()
    return [sessions_root()] if pi_root is None else [sessions_root(), pi_root]


def twin_session_folder(folder: Path) -> Path | None:
    """The same project's session folder in the other program's folder, if ``folder`` is one.

    ``<ours>/sessions/--home-ann-app--`` has pi's ``~/.pi/agent/sessions/--home-ann-app--`` as
    twin and the other way round; any other folder (a ``--session-dir``) has none.
    """
    pi_root = pi_sessions_root()
    name = folder.name
    if pi_root is None or not (name.startswith("--") and name.endswith("--")):
        return None
    parent = folder.parent
    if same_folder(parent, sessions_root()):
        return pi_root / name
    if same_folder(parent, pi_root):
        return sessions_root() / name
    return None


def own_session_folder(folder: Path) -> Path:
    """Where sessions made from one in ``folder`` go (``/new``, forks, clones): for a project's
    folder in pi's sessions root, ours for the same project; any other folder stays."""
    pi_root = pi_sessions_root()
    if pi_root is not None and same_folder(folder.parent, pi_root):
        return twin_session_folder(folder) or folder
    return folder


def pi_session_prefixes() -> tuple[str, ...]:
    """How the paths of sessions in pi's sessions folder begin (as listed and with links
    followed); empty when there is no pi folder. Worked out once per list, not per row."""
    pi_root = pi_sessions_root()
    if pi_root is None:
        return ()
    listed = os.path.abspath(pi_root) + os.sep
    return tuple({listed, os.path.realpath(pi_root) + os.sep})


def session_origin(path: Path, prefixes: tuple[str, ...] | None = None) -> str | None:
    """:data:`PI_ORIGIN` for a session file in pi's sessions folder, else None (ours, or a
    folder both programs may write, where the file cannot tell). ``prefixes``: from
    :func:`pi_session_prefixes`, for many paths."""
    prefixes = pi_session_prefixes() if prefixes is None else prefixes
    return PI_ORIGIN if prefixes and os.path.abspath(path).startswith(prefixes) else None


def same_folder(one: Path, other: Path) -> bool:
    """Whether two paths name one folder (links followed; the folders need not exist)."""
    return os.path.realpath(os.path.expanduser(one)) == os.path.realpath(os.path.expanduser(other))
