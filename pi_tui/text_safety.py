"""Bytes and OS strings becoming message text: the one rule every boundary uses.

Text we keep must be valid Unicode: a lone surrogate cannot be encoded as UTF-8, so orjson
refuses the whole message (print mode crashed with "str is not valid UTF-8") and providers may
reject the request. Yet Python hands us such strings whenever bytes are not UTF-8:
``sys.argv``, ``os.listdir``/``os.scandir``, ``os.getcwd`` and the environment decode with
*surrogateescape* (byte ``0xff`` becomes ``"\\udcff"``). So:

1. **Text** (command output, file content, prompt words, argv): UTF-8, every invalid byte
   sequence becomes U+FFFD. That is what Node does, so pi sends the same text.
   :func:`decode_text` for bytes, :func:`clean_text` for strings that may hold surrogates.
2. **Names** (file names and paths a tool lists or names): a name that is printable UTF-8 is
   shown as it is. Any other name is shown in bash's ``$'...'`` escape syntax: each byte that is
   not UTF-8 as ``\\xHH``, tab/newline/carriage return as ``\\t``/``\\n``/``\\r``, other control
   characters as ``\\xHH`` (C1 and line/paragraph separators as ``\\uHHHH``) and backslash as
   ``\\\\``. A printable name whose backslashes would read as such an escape (a real file
   called ``a\\x41``) is escaped too, so no two names are shown alike. Every listed entry stays
   on one line, nothing reaches a terminal raw, and the model can give the name back: the file
   tools look for the unescaped name (:func:`parse_name`) first, then the path as written (see
   ``pi_tui.tools.common.resolve_path``); in bash it works as ``$'name'``. :func:`show_name`.
3. **Terminal**: only pi-tui writes escape sequences. Every string from outside (files, tool and
   bash output, model replies, session files, names, labels, server error bodies) goes through
   :func:`for_terminal` where it becomes something drawn (a widget's ``Content``, a Rich
   renderable, markdown source before it is parsed, a line print mode writes to a terminal).
   C0 controls become the Unicode Control Pictures (``ESC`` as ``␛``, ``BEL`` as ``␇``), so a
   CSI, OSC (window title, OSC 52 clipboard), DCS or APC sequence is shown as text and never
   starts; DEL is ``␡``; C1 controls (U+0080..U+009F, where U+009B is a one-character CSI) are
   shown as ``\\u009b``, like :func:`show_name` does, so they read differently from a raw
   non-UTF-8 byte ``\\x9b``. Tab and newline stay, and so does the carriage return of a CRLF
   (harmless: the line feed follows at once). A lone carriage return is dropped: it would move
   the cursor back to overwrite what the line showed (Textual drops it too). The result holds no
   other control character, so applying the rule twice changes nothing, and every character is
   mapped on its own (a CR only looks at the next one), so streamed deltas can be made safe one
   by one. When nothing needs changing (the usual case) it costs one regex search.
"""

from __future__ import annotations

import os
import re
from typing import Any

REPLACEMENT = "\ufffd"

_SURROGATES = re.compile("[\ud800-\udfff]")
_NOT_ESCAPES = re.compile("[\ud800-\udc7f\udd00-\udfff]")
"""Lone surrogates that surrogateescape did not make (those are U+DC80..U+DCFF, one per byte)."""

_NAME_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}
_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|([ntr\\]))")
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""Every character :func:`for_terminal` looks at: C0 but tab and newline, DEL, C1, lone surrogates.
One character class, so a clean text costs one fast scan (a ``\\r(?!\\n)`` alternative doubled it);
a CRLF's CR is kept by :func:`_picture`."""


def decode_text(data: bytes) -> str:
    """Bytes as text: UTF-8, invalid sequences as U+FFFD (Node's decoding)."""
    return data.decode("utf-8", "replace")


def clean_text(text: str) -> str:
    """``text`` without lone surrogates: bytes smuggled in by surrogateescape are decoded as
    :func:`decode_text` would have (so ``"\\udcc3\\udca9"`` is ``"é"``), any other lone half of a
    pair becomes U+FFFD. Valid text is returned as it is (the common, fast case)."""
    if not _SURROGATES.search(text):
        return text
    text = _NOT_ESCAPES.sub(REPLACEMENT, text)
    return decode_text(text.encode("utf-8", "surrogateescape"))


def clean_value(value: Any) -> Any:
    """:func:`clean_text` applied to every string inside lists, tuples and dicts (keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(key): clean_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(item) for item in value]
    return value


def show_name(name: str | os.PathLike[str]) -> str:
    """A file name or path as tools show it (rule 2 above); ordinary names are unchanged."""
    text = os.fspath(name)
    if not _NAME_UNSAFE.search(text) and not ("\\" in text and _ESCAPE.search(text)):
        return text
    data = text.encode("utf-8", "surrogateescape") if not _NOT_ESCAPES.search(text) else None
    if data is None:  # a lone half of a pair cannot be a real name's byte: show it as U+FFFD
        data = _NOT_ESCAPES.sub(REPLACEMENT, text).encode("utf-8", "surrogateescape")
    out: list[str] = []
    for char in data.decode("utf-8", "surrogateescape"):
        code = ord(char)
        if char in _SHORT:
            out.append(_SHORT[char])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def parse_name(shown: str) -> str | None:
    """The real name (an OS string, surrogateescape'd) behind an escaped one from
    :func:`show_name`; ``None`` when ``shown`` has no escapes, so nothing else is worth trying."""
    if "\\" not in shown or not _ESCAPE.search(shown):
        return None
    out = bytearray()
    position = 0
    try:
        for match in _ESCAPE.finditer(shown):
            out += shown[position : match.start()].encode("utf-8", "surrogateescape")
            hex_byte, code_point, short = match.groups()
            if hex_byte is not None:
                out.append(int(hex_byte, 16))
            elif code_point is not None:
                out += chr(int(code_point, 16)).encode("utf-8", "surrogatepass")
            else:
                out += {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\"}[short]
            position = match.end()
        out += shown[position:].encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None
    if b"\x00" in out:
        return None  # no file name holds a NUL byte
    return os.fsdecode(bytes(out))


def _picture(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code == 0x0D:  # kept before a line feed, else dropped (see rule 3)
        end = match.end()
        return "\r" if match.string[end : end + 1] == "\n" else ""
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␛ for ESC, ␇ for BEL
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return REPLACEMENT
    return f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """``text`` safe to draw (rule 3 above): tabs, newlines and CRLF stay, a lone carriage return goes,
    every other control character is shown as a visible symbol, so text from outside can never drive
    the terminal."""
    if not _TERMINAL_UNSAFE.search(text):
        return text
    return _TERMINAL_UNSAFE.sub(_picture, text)
