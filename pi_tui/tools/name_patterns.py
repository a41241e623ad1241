"""Tool names and ``*`` patterns as ``--tools`` / ``--exclude-tools`` / ``toolExposure`` write them."""

from __future__ import annotations

import re
from collections.abc import Callable


def name_matcher(entries: list[str]) -> Callable[[str], bool]:
    """Whether a tool name is one of ``entries`` or matches one of its ``*`` patterns (``*`` is
    any run of characters, nothing else is special)."""
    names = {entry for entry in entries if "*" not in entry}
    patterns = [
        re.compile(".*".join(re.escape(part) for part in entry.split("*")))
        for entry in entries
        if "*" in entry
    ]
    return lambda name: name in names or any(pattern.fullmatch(name) for pattern in patterns)
