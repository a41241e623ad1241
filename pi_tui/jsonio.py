"""JSON in and out the way Node reads and writes it, fast when the data is ordinary.

orjson is strict in two ways that Node is not, and both occur in real session files:

- a string holding a lone surrogate escape such as ``"\\ud83d"``: valid JSON, and exactly what
  Node writes for an emoji cut in half by a length limit. orjson refuses the whole line, which
  would drop a turn (and every turn before it from the model's context);
- bytes that are not UTF-8: Node decodes them as U+FFFD and parses the line.

:func:`loads` tries orjson first and falls back to the standard library with Node's decoding, so
such a line is kept. The resulting Python strings may then hold lone surrogates, which orjson
cannot encode either; :func:`dumps` falls back to writing them back as the same ``\\uXXXX``
escapes, so a value read from a line is written out (to a session file or a provider) exactly
as Node would write it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

JSONDecodeError = ValueError
"""Raised by :func:`loads` for text that is not JSON (orjson's and the stdlib's errors are both
ValueErrors)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | memoryview | str) -> Any:
    """Parse one JSON document; lone surrogates and invalid UTF-8 are accepted as Node does."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
        # parse_constant: NaN / Infinity are not JSON (orjson and Node refuse them too).
        return json.loads(text, parse_constant=_reject_constant)


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Compact UTF-8 JSON; strings holding lone surrogates are written as ``\\uXXXX`` escapes.

    ``default`` converts values JSON has no form for (as in orjson and the stdlib).
    """
    try:
        return orjson.dumps(value, default=default, option=orjson.OPT_NON_STR_KEYS if default else 0)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default)
        # Every surrogate left in ``text`` sits inside a JSON string (json.dumps escapes
        # nothing else that is not UTF-8), so its backslash form is the JSON escape itself.
        return text.encode("utf-8", "backslashreplace")


def parse_object_file(text: str, path: object, expected: str) -> dict[str, Any] | None:
    """A small config file's text (settings.json, auth.json) as a JSON object; None when empty.

    Raises ``ValueError`` with one line that names the file, and the line and column of a syntax
    error, or says what was ``expected`` when the file holds something other than an object.
    """
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}, line {error.lineno} column {error.colno}: invalid JSON ({error.msg})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}, line 1: {expected}")
    return data
