"""One trust rule for everything a project folder can hand pi-tui (pi 1.x's project trust).

A cloned repository is someone else's folder. What its ``.agent/`` folder holds can run code
(extensions; ``shellPath`` / ``shellCommandPrefix`` in its settings), change what pi-tui does
(settings, skills, prompt templates, ``SYSTEM.md`` / ``APPEND_SYSTEM.md``), or loosen what the
user chose (secret hiding). None of it loads until the user trusts the folder. Everything that
reads the project folder asks :class:`ProjectTrust`, so there is one answer per run.

The protected resources (pi's list): ``.agent/settings.json``, ``mcp.json``, ``extensions``,
``skills``, ``prompts``, ``themes``, ``SYSTEM.md``, ``APPEND_SYSTEM.md``, the MCP files other
agents keep in the working folder (``.mcp.json``, ``.pi/mcp.json``), and ``.agents/skills``
in the working folder or a folder above it (up to the repository root; the user's own
``~/.agents/skills`` is not a project's). A bare ``.agent`` folder, or one holding only
``secrets.yml`` (it can only add secrets to hide), needs no decision. When ``<cwd>/.agent`` is
the agent dir itself (pi-tui started in the home folder), it is the user's, not a project's.

The decision, first match wins:

1. ``-a/--approve`` (trusted) or ``-na/--no-approve`` (not trusted) for this run;
2. the saved decision of the folder or its nearest parent in ``<agent dir>/trust.json``
   (:mod:`pi_tui.config.trust_store`, pi's format);
3. ``defaultProjectTrust`` in the user's settings (pi's folder, then ours; never a project's):
   ``"always"`` trusts, ``"never"`` does not, ``"ask"`` (the default) asks in the interactive
   mode and skips everywhere else (print, json, rpc, ``pi-tui serve``): they cannot ask.

Two things are read whatever the answer: context files (AGENTS.md, CLAUDE.md) and stream rules
are text the user sees, not code or settings; and ``sessionDir`` from the project settings is
read to find the session before trust is decided (pi does the same,
:mod:`pi_tui.config.session_dir`). This module imports nothing heavy: the interactive mode asks
it before its first frame.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pi_tui import jsonio

PROJECT_DIR_NAME = ".agent"
OTHER_MCP_FILES = (".mcp.json", ".pi/mcp.json")
"""MCP configurations other agents keep in a project, read by pi-tui only in a trusted one."""

PROTECTED_NAMES = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)
"""What inside ``<cwd>/.agent`` needs trust (pi's list); ``secrets.yml`` is not among them."""
DEFAULT_TRUST_KEY = "defaultProjectTrust"
DEFAULT_TRUST_VALUES = ("ask", "always", "never")
State = Literal["trusted", "untrusted", "ask", "none"]
"""``none``: the folder holds nothing that needs trust (nothing of the project's is loaded,
because there is nothing; a resource that appears later is judged again on /reload)."""
APPROVE_HINT = "run with -a/--approve, or trust it when pi-tui asks"


def project_dir(cwd: str | Path) -> Path | None:
    """``<cwd>/.agent``, or None when it is the agent dir itself (then it is the user's)."""
    from pi_tui.config.paths import agent_dir

    folder = Path(cwd).resolve() / PROJECT_DIR_NAME
    try:
        if folder.resolve() == agent_dir().expanduser().resolve():
            return None
    except OSError:
        pass
    return folder


def agents_skill_folders(cwd: str | Path) -> list[Path]:
    """The ``.agents/skills`` folders a project hands us: in ``cwd`` and each folder above it,
    stopping at the repository root (the first folder holding ``.git``), nearest first. The
    user's own ``~/.agents/skills`` is left out (it is the user's, as in pi)."""
    home = Path(os.environ.get("HOME") or Path.home()).expanduser()
    try:
        users = (home / ".agents" / "skills").resolve()
    except OSError:
        users = home / ".agents" / "skills"
    found: list[Path] = []
    current = Path(cwd).resolve()
    while True:
        candidate = current / ".agents" / "skills"
        if candidate.is_dir() and candidate.resolve() != users:
            found.append(candidate)
        if (current / ".git").exists() or current.parent == current:
            return found
        current = current.parent


def protected_resources(cwd: str | Path, *, names: bool = True, paths: bool = False) -> list[str]:
    """What of the project's needs trust, as the user is told it (``settings.json``,
    ``extensions: a, b``, ``skills``, ``.mcp.json``, ``.agents/skills``...); empty for a bare
    folder. ``names=False`` leaves the extensions listed only in the settings out (resolving
    those lists is not needed before the first frame; the settings file needs trust anyway, so
    the decision is the same).

    ``paths=True`` is for the trust question, which must say exactly what trusting does: every
    item is named by its path from the working folder (``.agent/settings.json``, ``.mcp.json``:
    not all of them are in ``.agent``), and each MCP file says which servers it would start
    (``.mcp.json (starts MCP servers: fs, github)``, see :func:`mcp_file_label`)."""
    folder = project_dir(cwd)
    inside = f"{PROJECT_DIR_NAME}/" if paths else ""
    labels: list[str] = []
    if folder is not None:
        for name in PROTECTED_NAMES:
            if name != "extensions":
                if (folder / name).exists():
                    mcp = paths and name == "mcp.json"
                    labels.append(mcp_file_label(folder / name, inside + name) if mcp else inside + name)
                continue
            listed = (folder / "settings.json").is_file() or (folder / name).exists()
            found = project_extension_names(cwd) if listed and names else []
            if found:
                labels.append(f"{inside}extensions: {', '.join(found)}")
            elif (folder / name).exists():
                labels.append(inside + name)
    for other in OTHER_MCP_FILES:  # Claude Code's and pi's project MCP servers: they run commands
        if (Path(cwd) / other).is_file():
            labels.append(mcp_file_label(Path(cwd) / other, other) if paths else other)
    for skills in agents_skill_folders(cwd):
        where = Path(os.path.relpath(skills, Path(cwd).resolve()))
        labels.append(_printable(str(where) if not str(where).startswith("..") else str(skills)))
    return labels


MCP_NAMES_SHOWN = 5
"""Server names an MCP file's label lists before ``+N more`` (the question stays short)."""
MCP_NAME_LENGTH = 40
"""Characters of one server name shown (a longer one is cut, ending in ``…``)."""


def mcp_file_label(path: Path, label: str) -> str:
    """``label`` and the servers the MCP file at ``path`` would start:
    ``.mcp.json (starts MCP servers: fs, github)``; read leniently (a file that cannot be read or
    is not JSON: just ``label``, the loader reports it once trusted). An entry with
    ``"enabled": false`` starts nothing and is left out. The names come from someone else's file:
    control characters are shown escaped."""
    try:
        data = jsonio.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
    except (OSError, UnicodeDecodeError, ValueError):
        return label
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return label
    found = [
        _printable(name if len(name) <= MCP_NAME_LENGTH else name[: MCP_NAME_LENGTH - 1] + "…")
        for name, entry in servers.items()
        if isinstance(entry, dict) and entry.get("enabled") is not False
    ]
    if not found:
        return label
    shown = ", ".join(found[:MCP_NAMES_SHOWN])
    more = f" +{len(found) - MCP_NAMES_SHOWN} more" if len(found) > MCP_NAMES_SHOWN else ""
    return f"{label} (starts MCP servers: {shown}{more})"


def project_extension_names(cwd: str | Path) -> list[str]:
    """Names of the project's extensions (its folder and its settings' list); only listed.
    They are file names from someone else's folder: control characters are shown escaped."""
    from pi_tui.config.extension_sources import discover_extensions
    from pi_tui.config.paths import agent_dir

    discovered = discover_extensions(cwd, agent_dir(), None)
    return [_printable(source.name) for source in discovered.untrusted()]


def _printable(text: str) -> str:
    """``text`` with anything a terminal would act on written as an escape (``\\x1b``)."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


@dataclass(slots=True)
class ProjectTrust:
    """This run's answer for one project folder; every loader of project resources asks it.

    Mutable on purpose: the interactive mode starts with ``ask`` and :meth:`grant` turns it
    into ``trusted`` once the user says so, and the closures that rebuild the system prompt
    see the new state.
    """

    cwd: Path
    resources: list[str]
    state: State
    why: str = ""
    """Why the project is not trusted, for the one line (empty when it is, or when asking)."""
    problems: list[str] = field(default_factory=list)
    """trust.json or defaultProjectTrust could not be used (each one line)."""
    approve: bool | None = None
    interactive: bool = False

    @property
    def trusted(self) -> bool:
        """Whether the project's protected resources load now."""
        return self.state == "trusted"

    def grant(self) -> None:
        """The user trusted the folder during this run (the decision is saved elsewhere)."""
        self.state = "trusted"
        self.why = ""

    def skip_line(self) -> str | None:
        """The one line naming what was not loaded and why (None: nothing was skipped, or the
        interactive mode is about to ask)."""
        if self.state != "untrusted" or not self.resources:
            return None
        return f"project resources not loaded ({', '.join(self.resources)}): {self.why}"

    def refresh(self) -> None:
        """/reload: this run's answer for what the folder holds now. A decision already made
        (a flag, the user's answer, a saved one) stands; a folder that held nothing at start is
        judged again, without asking (the object is updated in place: loaders keep it)."""
        resources = protected_resources(self.cwd)
        if self.state != "none" or not resources:
            self.resources = resources or self.resources
            return
        fresh = decide_trust(self.cwd, self.approve, interactive=False)
        self.resources, self.state, self.why = fresh.resources, fresh.state, fresh.why
        self.problems = fresh.problems


def default_project_trust() -> tuple[str, Path | None, str | None]:
    """The user's ``defaultProjectTrust``: the value, the file that set it, and a problem line
    (a value pi does not know counts as "ask"). Read from pi's settings and ours, never from a
    project's: the setting says how far projects are trusted, so a project cannot choose it."""
    from pi_tui.config.paths import global_settings_path
    from pi_tui.config.pi_folder import pi_file

    value: object = None
    source: Path | None = None
    for path in (pi_file("settings.json"), global_settings_path()):
        if path is None:
            continue
        try:
            data = jsonio.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # a broken settings file is reported when settings load
        if isinstance(data, dict) and DEFAULT_TRUST_KEY in data:
            value, source = data[DEFAULT_TRUST_KEY], path
    if value is None:
        return "ask", None, None
    if value not in DEFAULT_TRUST_VALUES:
        problem = f"{source}: {DEFAULT_TRUST_KEY} must be one of {', '.join(DEFAULT_TRUST_VALUES)}; using ask"
        return "ask", source, problem
    return str(value), source, None


def decide_trust(
    cwd: str | Path, approve: bool | None = None, *, interactive: bool = False, names: bool = True
) -> ProjectTrust:
    """The decision for ``cwd`` (see the module docstring for the order); ``names``: see
    :func:`protected_resources`."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.trust_store import TrustStore

    folder = Path(cwd).resolve()
    resources = protected_resources(folder, names=names)
    trust = ProjectTrust(folder, resources, "none", approve=approve, interactive=interactive)
    if not resources:
        return trust
    if approve is True:
        trust.state = "trusted"
        return trust
    if approve is False:
        trust.state, trust.why = "untrusted", "-na/--no-approve was given"
        return trust
    store = TrustStore(agent_dir())
    entry = store.entry(folder)
    if store.problem:
        trust.problems.append(store.problem)
    if entry is not None and entry.decision == "trusted":
        trust.state = "trusted"
        return trust
    if entry is not None:
        through = "" if Path(entry.folder) == folder else f" (through {entry.folder})"
        trust.state = "untrusted"
        trust.why = f"this folder is marked never to be trusted in {store.path}{through}"
        return trust
    default, source, problem = default_project_trust()
    if problem:
        trust.problems.append(problem)
    if default == "always":
        trust.state = "trusted"
    elif default == "never":
        trust.state = "untrusted"
        trust.why = f'{DEFAULT_TRUST_KEY} is "never" in {source}; run with -a/--approve to load them once'
    elif interactive:
        trust.state = "ask"
    else:
        trust.state, trust.why = "untrusted", f"this folder is not trusted; {APPROVE_HINT}"
    return trust


def saved_trust_allows(cwd: str | Path, approve: bool | None = None) -> bool:
    """Whether the project's resources load without asking (the flag, a saved "trusted", or
    ``defaultProjectTrust: always``): for what is read before the question can be asked (the
    first frame's theme)."""
    return decide_trust(cwd, approve, interactive=False, names=False).trusted
