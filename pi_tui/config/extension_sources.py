"""Where extensions come from, and which of them need the user's trust.

Sources, in load order (a name found twice loads once, the first one wins):

1. ``-e/--extension PATH`` (repeatable): the user's own choice on the command line;
2. ``extensions: [...]`` in the global settings (paths relative to the agent dir);
3. ``<agent dir>/extensions/``: ``*.py`` files and packages (``name/__init__.py``);
4. ``extensions: [...]`` in the project settings (relative to ``<cwd>/.agent``);
5. ``<cwd>/.agent/extensions/``: files and packages, as in 3.

1-3 are the user's own code and load without asking. 4 and 5 come with the project (a cloned
repository can hold them), so they load only once the user trusts the project folder
(:mod:`pi_tui.config.project_trust`; decisions in :mod:`pi_tui.config.trust_store`).
Discovery only lists files; nothing is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui import jsonio

Origin = Literal["cli", "settings", "user", "project-settings", "project"]


@dataclass(frozen=True, slots=True)
class ExtensionSource:
    """One extension to load: a ``.py`` file or a package folder."""

    path: Path
    origin: Origin
    project: Path | None = None
    """The project folder whose trust this needs; None for the user's own extensions."""

    @property
    def name(self) -> str:
        """The extension's name: the file's stem or the package folder's name."""
        return self.path.stem if self.path.suffix == ".py" else self.path.name

    @property
    def entry(self) -> Path:
        """The file that is imported."""
        return self.path if self.path.suffix == ".py" else self.path / "__init__.py"

    @property
    def needs_trust(self) -> bool:
        return self.project is not None


@dataclass(slots=True)
class Discovered:
    sources: list[ExtensionSource]
    problems: list[str]
    """One line for each path that names no extension (a typo in ``-e`` or in settings)."""

    def trusted(self) -> list[ExtensionSource]:
        return [source for source in self.sources if not source.needs_trust]

    def untrusted(self) -> list[ExtensionSource]:
        return [source for source in self.sources if source.needs_trust]


def discover_extensions(
    cwd: str | Path,
    agent_dir: Path,
    cli_paths: list[str] | None = None,
    *,
    no_extensions: bool = False,
    with_project: bool = True,
) -> Discovered:
    """Every extension source for ``cwd`` (see the module docstring for the order).

    ``no_extensions`` turns off discovery (folders and settings) but keeps ``-e`` paths, as
    pi's ``--no-extensions`` does: what the user names explicitly still loads.
    ``with_project=False`` leaves the project's (4 and 5) out, its settings unread: the folder
    is not trusted (:mod:`pi_tui.config.project_trust`).
    """
    project = Path(cwd).resolve()
    found: list[ExtensionSource] = []
    problems: list[str] = []
    for text in cli_paths or ():
        source = _named_source(Path(text).expanduser(), Path(cwd), "cli", None, problems, "-e")
        if source is not None:
            found.append(source)
    if not no_extensions:
        global_settings = agent_dir / "settings.json"
        found += _settings_sources(global_settings, agent_dir, "settings", None, problems)
        found += _folder_sources(agent_dir / "extensions", "user", None)
    if not no_extensions and with_project:
        project_settings = project / ".agent" / "settings.json"
        found += _settings_sources(
            project_settings, project / ".agent", "project-settings", project, problems
        )
        found += _folder_sources(project / ".agent" / "extensions", "project", project)
    unique: list[ExtensionSource] = []
    seen_names: set[str] = set()
    seen_paths: set[Path] = set()
    for source in found:
        real = source.path.resolve()
        if real in seen_paths or source.name in seen_names:
            continue
        seen_paths.add(real)
        seen_names.add(source.name)
        unique.append(source)
    return Discovered(unique, problems)


def _folder_sources(folder: Path, origin: Origin, project: Path | None) -> list[ExtensionSource]:
    """``*.py`` files and packages of ``folder``, sorted by name (a stable load order)."""
    try:
        children = sorted(folder.iterdir(), key=lambda child: child.name)
    except OSError:
        return []
    sources: list[ExtensionSource] = []
    for child in children:
        if child.name.startswith((".", "_")):
            continue  # hidden files, __pycache__, _helpers.py imported by an extension
        if (child.suffix == ".py" and child.is_file()) or (
            child.is_dir() and (child / "__init__.py").is_file()
        ):
            sources.append(ExtensionSource(child, origin, project))
    return sources


def _settings_sources(
    settings: Path, base: Path, origin: Origin, project: Path | None, problems: list[str]
) -> list[ExtensionSource]:
    """The ``extensions`` list of one settings file (a broken file is reported by settings)."""
    try:
        data = jsonio.loads(settings.read_text(encoding="utf-8"))  # too deep: a ValueError
    except (OSError, ValueError):
        return []
    listed = data.get("extensions") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return []
    sources: list[ExtensionSource] = []
    for item in listed:
        if not isinstance(item, str) or not item.strip():
            problems.append(f"{settings}: extensions: {item!r} is not a path")
            continue
        source = _named_source(Path(item).expanduser(), base, origin, project, problems, str(settings))
        if source is not None:
            sources.append(source)
    return sources


def _named_source(
    path: Path, base: Path, origin: Origin, project: Path | None, problems: list[str], where: str
) -> ExtensionSource | None:
    """The extension a user-given path names: a ``.py`` file or a package folder."""
    if not path.is_absolute():
        path = base / path
    if path.is_file() and path.suffix == ".py":
        return ExtensionSource(path, origin, project)
    if path.is_dir() and (path / "__init__.py").is_file():
        return ExtensionSource(path, origin, project)
    if path.is_dir():
        problems.append(f"{where}: {path} is a folder without __init__.py, not an extension")
    elif path.exists():
        problems.append(f"{where}: {path} is not a .py file")
    else:
        problems.append(f"{where}: {path} does not exist")
    return None
