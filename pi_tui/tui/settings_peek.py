"""One setting read before the settings module is imported, for what the first frame needs.

The app draws its first frame before :func:`pi_tui.startup.start` runs (the import of pydantic
and the agent layers is most of the start-up time), yet the theme, the terminal mode and true
colour must be known by then; :func:`peek_setting` reads them straight from the JSON files.
"""

from __future__ import annotations

from typing import Any

from pi_tui import jsonio


def peek_setting(cwd: str, key: str, approve: bool | None = None) -> Any:
    """One top-level setting, read before the settings module (pydantic) is imported: what the
    first frame needs (the theme). The project file wins, as in load_settings, when the folder
    is trusted without asking (``approve`` is ``-a``/``-na``; pi_tui/config/project_trust.py);
    a broken file is ignored here and reported properly when the agent starts."""

    from pi_tui.config.paths import global_settings_path, project_settings_path
    from pi_tui.config.project_trust import saved_trust_allows

    value = None
    paths = [global_settings_path()]
    if saved_trust_allows(cwd, approve):
        paths.append(project_settings_path(cwd))
    for path in paths:
        try:
            data = jsonio.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and key in data:
            value = data[key]
    return value
