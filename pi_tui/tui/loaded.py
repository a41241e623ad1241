"""What the header lists as loaded: the context files and the number of stream rules.

Shared by the app (first frame, after start-up) and ``/reload`` (which reads them again).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.startup import Started


def loaded_summary(started: Started, cwd: str) -> list[str]:
    """What the header lists as loaded: context files (shortened) and the number of rules."""
    from pi_tui.agent.system_prompt import context_files
    from pi_tui.tui.render import short_path

    options = started.options
    with_files = options is None or not options.no_context_files
    loaded = [short_path(str(path), cwd) for path in context_files(Path(cwd))] if with_files else []
    ttsr = started.agent.ttsr
    if ttsr is not None:
        count = len(getattr(ttsr.manager, "rules", []) or [])
        if count:
            rules = f"{count} stream rule{'s' if count != 1 else ''}"
            loaded.append(f"{rules} (they stop a reply that breaks one; /rules lists them)")
    return loaded
