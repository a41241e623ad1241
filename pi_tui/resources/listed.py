"""Resource paths listed in settings files (pi's ``skills``, ``prompts``, ``themes`` arrays).

pi lets a settings file name extra skill, prompt-template and theme files or folders; a
relative entry means "beside this settings file", so each file's entries are resolved against
its own folder. The project's settings file counts only in a trusted folder, like every other
project resource (pi_tui/config/project_trust.py).
"""

from __future__ import annotations

from pathlib import Path

from pi_tui import jsonio


def settings_list(settings: Path, key: str) -> list[str]:
    """The non-empty strings of ``key``'s array in ``settings`` (nothing when the file is
    missing, unreadable, too deep or the key is not an array: the settings loader reports those)."""
    try:
        data = jsonio.loads(settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, str) and item.strip()]


def listed_paths(cwd: str | Path, agent_dir: Path, key: str, *, project_trusted: bool) -> list[Path]:
    """``key``'s entries of the user's settings, then of the trusted project's, as paths."""
    from pi_tui.config.project_trust import project_dir

    folders = [agent_dir]
    project_folder = project_dir(Path(cwd).resolve()) if project_trusted else None
    if project_folder is not None and project_folder != agent_dir:
        folders.append(project_folder)
    paths: list[Path] = []
    for folder in folders:
        for item in settings_list(folder / "settings.json", key):
            path = Path(item).expanduser()
            paths.append(path if path.is_absolute() else folder / path)
    return paths
