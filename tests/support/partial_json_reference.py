"""The previous partial-JSON parser (the whole text re-parsed on every delta), kept as the
definition of the right answer for every prefix: tests/unit/test_partial_json_linear.py compares
the incremental parser with it, and benchmarks/tool_args_stream.py times both.

It lives in tests/support and imports nothing of pytest, so the benchmark runs without it.
"""

from __future__ import annotations

from typing import Any

import orjson


class Reference:
    def __init__(self) -> None:
        self.text = ""
        self._stack: list[str] = []
        self._in_string = False
        self._escaped = False
        self._last_value: dict[str, Any] = {}

    def feed(self, fragment: str) -> dict[str, Any]:
        self.text += fragment
        for char in fragment:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                self._stack.append("}" if char == "{" else "]")
            elif char in "}]" and self._stack:
                self._stack.pop()
        value = self._parse()
        if value is not None:
            self._last_value = value
        return self._last_value

    def _parse(self) -> dict[str, Any] | None:
        text = self.text.strip()
        if not text:
            return {}
        closers = "".join(reversed(self._stack))
        head = text
        if self._in_string:
            if self._escaped:
                head = head[:-1]
            attempts = [head + '"' + closers]
        else:
            attempts = [head + closers]
        trimmed = old_trim(head if not self._in_string else head + '"')
        if trimmed is not None:
            attempts.append(trimmed + closers)
        for candidate in attempts:
            try:
                value = orjson.loads(candidate)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
        return None


def old_trim(text: str) -> str | None:
    stripped = text.rstrip()
    for _ in range(3):
        if not stripped:
            return None
        last = stripped[-1]
        if last in ",:":
            stripped = stripped[:-1].rstrip()
            if last == ":":
                quote = stripped.rfind('"', 0, len(stripped) - 1)
                stripped = stripped[:quote].rstrip() if quote >= 0 else stripped
            continue
        if last == '"':
            opening = old_string_start(stripped)
            if opening is None:
                return None
            before = stripped[:opening].rstrip()
            if before.endswith(("{", ",")):
                return before.rstrip(",").rstrip() if before.endswith(",") else before
            return stripped
        if last.isalnum() or last in "-.+":
            index = len(stripped) - 1
            while index >= 0 and (stripped[index].isalnum() or stripped[index] in "-.+"):
                index -= 1
            stripped = stripped[: index + 1].rstrip()
            continue
        return stripped
    return stripped


def old_string_start(text: str) -> int | None:
    index = len(text) - 2
    while index >= 0:
        if text[index] == '"':
            backslashes = 0
            probe = index - 1
            while probe >= 0 and text[probe] == "\\":
                backslashes += 1
                probe -= 1
            if backslashes % 2 == 0:
                return index
        index -= 1
    return None
