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

Depth: a line nested deeper than :data:`MAX_DEPTH` is refused with :class:`TooDeepError` (a
``ValueError``, so every reader skips it as it skips any line that is not JSON). The standard
library's parser recurses once per level and raises ``RecursionError`` near 1,000; and a value
that parsed fine is walked recursively afterwards (text cleaning, surrogate repair, export), so
the limit is set well below Python's recursion limit. The check is cheap: a line with no more
than :data:`MAX_DEPTH` opening brackets in all cannot be deeper, so only such lines are scanned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects accepted in one JSON text. Real sessions stay far below
it (a tool call's arguments nest a few levels). It is under orjson's own limit for writing
(254 levels) with room for the few levels a value gains when it is put into a request body, an
rpc response or an export page, and far under Python's recursion limit (about 1,000 frames)
for the code that walks a value after it is read."""

JSONDecodeError = ValueError
"""Raised by :func:`loads` for text that is not JSON (orjson's and the stdlib's errors are both
ValueErrors)."""


class TooDeepError(ValueError):
    """The text nests arrays and objects deeper than :data:`MAX_DEPTH` levels."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested more than {MAX_DEPTH} levels deep")


_BYTES_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_TEXT_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def too_deep(data: bytes | bytearray | memoryview | str) -> bool:
    """True when ``data`` nests deeper than :data:`MAX_DEPTH` (brackets inside strings do not
    count). Costs two ``count`` calls for an ordinary line; only a line with more opening
    brackets than the limit is scanned."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= MAX_DEPTH:
            return False
        tokens: Iterator[re.Match[str]] | Iterator[re.Match[bytes]] = _TEXT_TOKENS.finditer(data)
        opening: tuple[str, ...] | tuple[bytes, ...] = ("[", "{")
    else:
        raw = data if isinstance(data, bytes) else bytes(data)
        if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
            return False
        tokens = _BYTES_TOKENS.finditer(raw)
        opening = (b"[", b"{")
    depth = 0
    for token in tokens:
        piece = token.group()
        if len(piece) != 1:
            continue  # a string
        if piece in opening:
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def check_depth(data: bytes | bytearray | memoryview | str) -> None:
    """Raise :class:`TooDeepError` when ``data`` nests deeper than :data:`MAX_DEPTH`."""
    if too_deep(data):
        raise TooDeepError


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | memoryview | str) -> Any:
    """Parse one JSON document; lone surrogates and invalid UTF-8 are accepted as Node does.

    Raises :class:`TooDeepError` (a ``ValueError``) for a text nested deeper than
    :data:`MAX_DEPTH`, and ``ValueError`` for one that is not JSON.
    """
    check_depth(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
        # parse_constant: NaN / Infinity are not JSON (orjson and Node refuse them too).
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except RecursionError:  # cannot happen below MAX_DEPTH; kept so it never escapes
            raise TooDeepError from None


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
    if too_deep(text):
        raise ValueError(f"{path}: invalid JSON (nested more than {MAX_DEPTH} levels deep)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}, line {error.lineno} column {error.colno}: invalid JSON ({error.msg})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}, line 1: {expected}")
    return data
