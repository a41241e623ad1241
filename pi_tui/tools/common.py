"""Helpers every file tool needs: argument checking and turning the model's path into a real one.

Models send arguments that do not always match the schema (a number as a string, a missing
field), and paths in every style (relative, absolute, ``~/x``, sometimes ``@x`` copied from a
mention). Checking here means each tool fails with a message the model can act on instead of a
Python traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_tui.text_safety import parse_name
from pi_tui.tools.base import ToolError

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


def require_str(args: dict[str, Any], key: str, *, allow_empty: bool = True) -> str:
    """``args[key]`` as a string, or a :class:`ToolError` naming the missing argument."""
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolError(f"Missing or invalid argument {key!r}: expected a string.")
    if not allow_empty and not value:
        raise ToolError(f"Argument {key!r} must not be empty.")
    return value


def optional_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"Invalid argument {key!r}: expected a string.")
    return value


def optional_int(args: dict[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    """An optional integer argument; numeric strings and whole floats are accepted."""
    value = args.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ToolError(f"Invalid argument {key!r}: expected an integer.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ToolError(f"Invalid argument {key!r}: expected an integer, got {value!r}.") from None
    if not isinstance(value, int):
        raise ToolError(f"Invalid argument {key!r}: expected an integer.")
    if minimum is not None and value < minimum:
        raise ToolError(f"Invalid argument {key!r}: must be at least {minimum}, got {value}.")
    return value


def optional_number(args: dict[str, Any], key: str) -> float | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ToolError(f"Invalid argument {key!r}: expected a number.")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ToolError(f"Invalid argument {key!r}: expected a number, got {value!r}.") from None
    if not isinstance(value, int | float):
        raise ToolError(f"Invalid argument {key!r}: expected a number.")
    return float(value)


def optional_bool(args: dict[str, Any], key: str) -> bool:
    value = args.get(key)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def is_binary(sample: bytes) -> bool:
    """A NUL byte in the first few KB: the same rule git and ripgrep use."""
    return b"\x00" in sample[:8192]
