"""Helpers every file tool needs: turning the model's path into a real one, spotting binary data.

Models send paths in every style (relative, absolute, ``~/x``, sometimes ``@x`` copied from a
mention). Argument checking is :mod:`pi_tui.tools.arguments`'s.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_tui.text_safety import parse_name

_NARROW_NO_BREAK_SPACE = "\u202f"

ESCAPED_NAMES_NOTE = (
    "Names with bytes that are not UTF-8 or with control characters are shown escaped "
    "(\\xHH, \\n, \\t, \\\\); pass them to the file tools exactly as shown, or to bash as $'name'."
)
"""The note ls, find and grep add when they escaped a name, so the model knows how to use it."""


def resolve_path(raw: str, cwd: Path) -> Path:
    """The absolute path the model meant: ``~`` expanded, relative paths against ``cwd``.

    A leading ``@`` (how files are mentioned in prompts) is dropped when the path as written
    does not exist. macOS screenshot names contain a narrow no-break space that models type as
    a plain space, so that spelling is tried too. A name the tools showed escaped (``bad\\xffname``
    for a byte that is not UTF-8, ``a\\nb`` for a newline; see :mod:`pi_tui.text_safety`) is
    taken unescaped when that exists, so the model can pass back exactly what ls, find or grep
    listed (they escape a real backslash that would read as an escape, so this is unambiguous).
    """
    real = parse_name(raw)
    if real is not None and _plain(real, cwd).exists():
        return _plain(real, cwd)
    path = _plain(raw, cwd)
    if not path.exists():
        candidates = [_plain(alternative, cwd) for alternative in _alternatives(raw)]
        for candidate in candidates:
            if candidate.exists():
                return candidate
        if not path.parent.exists():  # a new file in a folder that was listed escaped
            for candidate in candidates:
                if candidate.parent.exists():
                    return candidate
    return path


def _plain(raw: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd) / path
    return Path(os.path.normpath(path))


def _alternatives(raw: str) -> list[str]:
    out = []
    if raw.startswith("@") and len(raw) > 1:
        out.append(raw[1:])
    for written in (raw, *out):
        real = parse_name(written)
        if real is not None:
            out.append(real)
    if " AM." in raw or " PM." in raw:
        out.append(
            raw.replace(" AM.", f"{_NARROW_NO_BREAK_SPACE}AM.").replace(
                " PM.", f"{_NARROW_NO_BREAK_SPACE}PM."
            )
        )
    return out


def is_binary(sample: bytes) -> bool:
    """A NUL byte in the first few KB: the same rule git and ripgrep use."""
    return b"\x00" in sample[:8192]
