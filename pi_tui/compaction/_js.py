"""JavaScript string semantics that the summarisation data formats depend on.

pi measures text with ``String.length`` (UTF-16 code units), writes tool-call arguments with
``JSON.stringify`` (compact, JS number formatting, integer-like keys first) and sorts file lists
with the default ``Array.prototype.sort`` (UTF-16 code-unit order). Reproducing these keeps our
token estimates, cut points and serialised conversations identical to pi's on the same session.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

_MAX_ARRAY_INDEX = 2**32 - 2


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (astral characters count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_sorted(values: Iterable[str]) -> list[str]:
    """``[...values].sort()``: UTF-16 code-unit order (differs from code points past U+FFFF)."""
    return sorted(values, key=lambda value: value.encode("utf-16-be", "surrogatepass"))


def js_object_keys(mapping: dict[str, Any]) -> list[str]:
    """Key order of ``Object.entries``: array-index keys ascending first, then insertion order."""
    keys = list(mapping)
    indices = [key for key in keys if _is_array_index(key)]
    if not indices:
        return keys
    indices.sort(key=int)
    return indices + [key for key in keys if not _is_array_index(key)]


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON data (no indentation)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, dict):
        items = (
            f"{json.dumps(str(key), ensure_ascii=False)}:{js_stringify(value[key])}"
            for key in js_object_keys(value)
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def js_number(value: float) -> str:
    """``Number.prototype.toString`` as JSON.stringify uses it (NaN and infinities are null)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 2**53:  # exact; larger ones use the shortest digits
        return str(int(value))
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    exponent = int(digits_tuple.exponent)
    k = len(digits)
    n = exponent + k  # the decimal point sits after the first n digits
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    power = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
