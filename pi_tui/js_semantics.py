"""JavaScript's number and string semantics, where pi's output depends on them: the one copy.

pi is a JavaScript program, so the texts it shows and the data it writes follow JavaScript's
rules: ``String(value)`` (``1e-7``, ``1e+21``, ``-0`` as ``0``, ``[1,null]`` as ``1,``),
``Number(value)``, ``toFixed`` and ``Math.round`` (which round halves differently from Python's
``round``), ``String.length`` in UTF-16 code units, ``JSON.stringify`` (compact, integer-like keys
first) and the default ``Array.prototype.sort`` (UTF-16 code-unit order). Token estimates, cut
points and serialised conversations (compaction), tree row texts and footer figures (every front
end) all go through here, so pi-tui and pi agree on the same session and no two copies of these
rules can drift apart. Values are JSON data as Python's ``json`` reads it: every number is a
JavaScript double, so an ``int`` beyond 2**53 prints the way the double it stands for prints.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Final

__all__ = [
    "UNDEFINED",
    "js_length",
    "js_object_keys",
    "js_sorted",
    "js_stringify",
    "math_round",
    "number_to_string",
    "to_fixed",
    "to_number",
    "to_string",
]

_MAX_ARRAY_INDEX = 2**32 - 2
_EXACT = 2**53
"""Integers below this are exact doubles, and JavaScript prints them digit for digit."""
_FIXED_LIMIT = 1e21
"""``toFixed`` writes numbers this large as ``String(value)`` does (exponent notation)."""
_WIDE = Context(prec=1200)
"""Enough digits for any double written out in full (``toFixed(100)`` of ``1e20`` included)."""


class _Undefined:
    """JavaScript's ``undefined``: a missing field, told apart from JSON's ``null``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()
"""Pass this for a missing field: ``String`` writes ``undefined``, ``Number`` gives NaN."""


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
    """``JSON.stringify(value)`` for JSON data (no indentation; NaN and infinities are null)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        number = _as_double(value)
        return number_to_string(number) if math.isfinite(number) else "null"
    if isinstance(value, dict):
        items = (
            f"{json.dumps(str(key), ensure_ascii=False)}:{js_stringify(value[key])}"
            for key in js_object_keys(value)
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def to_string(value: object) -> str:
    """``String(value)`` for JSON values (and :data:`UNDEFINED`).

    An array joins its items with commas, null and undefined items as nothing (so ``[1, None]``
    is ``1,``); an object is ``[object Object]``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return number_to_string(value)
    if isinstance(value, list | tuple):
        return ",".join("" if item is None or item is UNDEFINED else to_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    if value is UNDEFINED:
        return "undefined"
    return str(value)


def number_to_string(value: float) -> str:
    """``String(number)``: the shortest digits that read back as the same double, written plainly
    from 1e-6 up to (not including) 1e21 and as ``1e-7`` / ``1.5e+21`` outside that range."""
    if value.__class__ is int and -_EXACT < value < _EXACT:  # the usual case, and exact
        return str(value)
    value = _as_double(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # -0 too
    if value.is_integer() and abs(value) < _EXACT:
        return str(int(value))
    sign = "-" if value < 0 else ""
    # repr is the shortest round-trip form, the same digits ECMAScript's Number::toString picks.
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


def _as_double(value: float) -> float:
    """The double a JSON number stands for in JavaScript (a huge integer rounds, or overflows)."""
    if isinstance(value, float):
        return value
    if abs(value) < _EXACT:
        return float(value)
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_PREFIXED = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def to_number(value: object) -> float:
    """``Number(value)`` for JSON values: undefined and objects are NaN, null and ``""`` are 0,
    strings are read as JavaScript reads them (``0x1f``, ``Infinity``, surrounding blanks)."""
    if value is UNDEFINED or isinstance(value, dict):
        return math.nan
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return _as_double(value)
    text = to_string(value).strip()  # an array is Number(String(array))
    if not text:
        return 0.0
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return -math.inf if text[0] == "-" else math.inf
    if _PREFIXED.fullmatch(text):
        base = 16 if text[1] in "xX" else 8 if text[1] in "oO" else 2
        return _as_double(int(text[2:], base))
    return float(text) if _DECIMAL.fullmatch(text) else math.nan


def math_round(value: float) -> float:
    """``Math.round(value)``: the nearest integer, halves toward +Infinity (``-2.5`` is ``-2``,
    where Python's ``round`` goes to even); NaN and infinities are returned as they are."""
    if not math.isfinite(value):
        return value
    floor = math.floor(value)
    return float(floor + 1 if value - floor >= 0.5 else floor)  # value - floor is exact


def to_fixed(value: float, digits: int) -> str:
    """``value.toFixed(digits)``: the exact binary value rounded half away from zero (so
    ``1.005.toFixed(2)`` is ``1.00``: the double is just below 1.005), ``-0`` without its sign,
    and from 1e21 on the same text as ``String(value)``."""
    value = _as_double(value)
    if not math.isfinite(value) or abs(value) >= _FIXED_LIMIT:
        return number_to_string(value)
    if value == 0:
        value = 0.0  # -0 prints as 0
    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE), "f")
