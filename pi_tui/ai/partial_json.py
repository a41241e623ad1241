"""Parsing tool-call arguments while they stream in.

Users watch an ``edit`` fill in live, so every delta of a tool call's JSON arguments should give
the arguments "as far as they go". :class:`PartialJson` keeps the text and a small scanner state
(open containers, inside a string, after an escape) updated incrementally, so closing the text
costs O(depth), and parsing it is one orjson call.
"""

from __future__ import annotations

from typing import Any

import orjson


class PartialJson:
    def __init__(self) -> None:
        self.text = ""
        self._stack: list[str] = []  # closers still open: "}" or "]"
        self._in_string = False
        self._escaped = False
        self._last_value: dict[str, Any] = {}

    def feed(self, fragment: str) -> dict[str, Any]:
        """Add ``fragment`` and return the best parse of everything so far."""
        self.text += fragment
        self._scan(fragment)
        value = self._parse()
        if value is not None:
            self._last_value = value
        return self._last_value

    def final(self) -> dict[str, Any]:
        """The complete arguments: strict parse, else the best partial parse, else ``{}``."""
        if not self.text.strip():
            return {}
        try:
            value = orjson.loads(self.text)
        except orjson.JSONDecodeError:
            return self._last_value
        return value if isinstance(value, dict) else self._last_value

    def _scan(self, fragment: str) -> None:
        stack = self._stack
        in_string = self._in_string
        escaped = self._escaped
        for char in fragment:
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                stack.append("}")
            elif char == "[":
                stack.append("]")
            elif char in "}]" and stack:
                stack.pop()
        self._in_string = in_string
        self._escaped = escaped

    def _parse(self) -> dict[str, Any] | None:
        text = self.text.strip()
        if not text:
            return {}
        for candidate in self._closings(text):
            try:
                value = orjson.loads(candidate)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
        return None

    def _closings(self, text: str) -> list[str]:
        """Ways to close ``text``, most faithful first."""
        closers = "".join(reversed(self._stack))
        head = text
        if self._in_string:
            if self._escaped:
                head = head[:-1]
            # Close the string; if it was a key with no value yet, also try dropping it.
            attempts = [head + '"' + closers]
        else:
            attempts = [head + closers]
        trimmed = _trim_dangling(head if not self._in_string else head + '"')
        if trimmed is not None:
            attempts.append(trimmed + closers)
        return attempts


def _trim_dangling(text: str) -> str | None:
    """Drop a trailing incomplete member (``, "key"``, ``"key":``, a partial literal)."""
    stripped = text.rstrip()
    for _ in range(3):
        if not stripped:
            return None
        last = stripped[-1]
        if last in ",:":
            stripped = stripped[:-1].rstrip()
            if last == ":":
                # drop the key too
                quote = stripped.rfind('"', 0, len(stripped) - 1)
                stripped = stripped[:quote].rstrip() if quote >= 0 else stripped
            continue
        if last == '"':
            # a complete string; if it is a key awaiting ":" the object form is invalid
            opening = _string_start(stripped)
            if opening is None:
                return None
            before = stripped[:opening].rstrip()
            if before.endswith(("{", ",")):
                stripped = before.rstrip(",").rstrip() if before.endswith(",") else before
                return stripped
            return stripped
        if last.isalnum() or last in "-.+":
            # partial number/literal: cut back to the previous separator
            index = len(stripped) - 1
            while index >= 0 and (stripped[index].isalnum() or stripped[index] in "-.+"):
                index -= 1
            stripped = stripped[: index + 1].rstrip()
            continue
        return stripped
    return stripped


def _string_start(text: str) -> int | None:
    """Index of the quote opening the string that ends at ``text[-1]``."""
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
