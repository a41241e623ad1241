"""Is the terminal dark or light? The answer behind the ``system`` theme and ``light/dark`` pairs.

pi 1.x decides from, in order: the background colour the terminal reports (OSC 11, judged
together with the foreground from OSC 10), the terminal's own light/dark report (the colour
scheme report of "mode 2031"), the ``COLORFGBG`` variable some terminals set, and otherwise dark.
pi-tui asks the same questions once, before Textual takes over the terminal: it writes the
queries followed by a Primary Device Attributes request (``CSI c``), which every terminal answers,
and reads until that answer arrives. A terminal that ignores the colour queries therefore costs no
waiting, and answers cannot arrive late and end up typed into the editor. A terminal that answers
nothing at all is given :data:`QUERY_SECONDS` (pi waits as long).

Only an interactive run asks (stdin and stdout both terminals); print, json and rpc modes, tests
and pipes never write queries to anyone.
"""

from __future__ import annotations

import os
import re
import select
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pi_tui.view.colour_spaces import srgb_to_oklab

__all__ = [
    "QUERY_SECONDS",
    "Appearance",
    "TerminalReport",
    "appearance_from_background",
    "appearance_from_colorfgbg",
    "decide_appearance",
    "parse_report",
    "take_typed_ahead",
    "terminal_appearance",
    "without_answers",
]

Appearance = Literal["dark", "light"]
RGB = tuple[float, float, float]

QUERY_SECONDS = 0.1
"""How long to wait for a terminal that answers none of the queries."""

_QUERY = b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b[?996n\x1b[c"
_COLOUR_RE = re.compile(
    rb"\x1b\](1[01]);rgba?:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:/[0-9a-fA-F]{1,4})?(?:\x07|\x1b\\)"
)
_SCHEME_RE = re.compile(rb"\x1b\[\?997;([12])n")
_DEVICE_ATTRIBUTES_RE = re.compile(rb"\x1b\[\?[0-9;]*c")
_MINIMUM_TEXT_CONTRAST = 4.5  # WCAG's level for body text


@dataclass(frozen=True)
class TerminalReport:
    """What the terminal said about itself (each part None when it did not say)."""

    background: RGB | None = None
    foreground: RGB | None = None
    scheme: Appearance | None = None


def _channel(hex_digits: bytes) -> float:
    """One ``rgb:`` component (1-4 hex digits, scaled to its own width) as 0-1."""
    full_scale: int = 16 ** len(hex_digits) - 1
    return int(hex_digits, 16) / full_scale


def parse_report(data: bytes) -> TerminalReport:
    """The colours and scheme found in the terminal's answers (other bytes are ignored)."""
    colours: dict[bytes, RGB] = {}
    for found in _COLOUR_RE.finditer(data):
        colours[found.group(1)] = (
            _channel(found.group(2)),
            _channel(found.group(3)),
            _channel(found.group(4)),
        )
    scheme_match = _SCHEME_RE.search(data)
    scheme: Appearance | None = None
    if scheme_match:
        scheme = "dark" if scheme_match.group(1) == b"1" else "light"
    return TerminalReport(colours.get(b"11"), colours.get(b"10"), scheme)


def _relative_luminance(rgb: RGB) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(first: RGB, second: RGB) -> float:
    high, low = sorted((_relative_luminance(first), _relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def appearance_from_background(background: RGB, foreground: RGB | None = None) -> Appearance:
    """Dark or light for a reported background, as pi classifies it.

    With a foreground that differs clearly in OKLab lightness, the side it is on decides, provided
    white (or black) text would still be readable on that background; otherwise whichever of white
    and black contrasts more with the background.
    """
    white, black = (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)
    white_contrast, black_contrast = _contrast(white, background), _contrast(black, background)
    if foreground is not None:
        fg_l, bg_l = srgb_to_oklab(foreground)[0], srgb_to_oklab(background)[0]
        if abs(fg_l - bg_l) > 0.05:
            guess: Appearance = "dark" if fg_l > bg_l else "light"
            if (white_contrast if guess == "dark" else black_contrast) >= _MINIMUM_TEXT_CONTRAST:
                return guess
    return "dark" if white_contrast >= black_contrast else "light"


def appearance_from_colorfgbg(env: Mapping[str, str]) -> Appearance | None:
    """Dark or light from ``COLORFGBG`` (``fg;bg`` or ``fg;xpm;bg``), or None when it says nothing.

    The background is an index into the terminal's own palette, whose colours are unknown, so it is
    judged by index as Vim does: 0-6 and 8 are dark, 7 and 9-15 light.
    """
    value = env.get("COLORFGBG", "")
    last = value.split(";")[-1].strip() if value else ""
    if not re.fullmatch(r"\d{1,2}", last):
        return None
    index = int(last)
    if index > 15:
        return None
    return "dark" if index <= 6 or index == 8 else "light"


def decide_appearance(report: TerminalReport, env: Mapping[str, str]) -> Appearance:
    """The reported background, then the reported scheme, then ``COLORFGBG``, then dark."""
    if report.background is not None:
        return appearance_from_background(report.background, report.foreground)
    return report.scheme or appearance_from_colorfgbg(env) or "dark"


def _ask_terminal(timeout: float = QUERY_SECONDS) -> TerminalReport:
    """Write the queries to the controlling terminal and read the answers (raw mode, briefly)."""
    import termios
    import tty

    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return TerminalReport()
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        os.close(fd)
        return TerminalReport()
    data = b""
    try:
        tty.setraw(fd, termios.TCSANOW)
        os.write(fd, _QUERY)
        deadline = time.monotonic() + timeout
        while not _DEVICE_ATTRIBUTES_RE.search(data):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
        os.close(fd)
    global _typed_ahead
    _typed_ahead += without_answers(data)
    return parse_report(data)


_ANSWER_RE = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[\?[0-9;]*[nc]")
"""The terminal's answers to the queries: OSC replies, the scheme report, device attributes."""


def without_answers(data: bytes) -> bytes:
    """What was read from the terminal that is not an answer: keys the user typed meanwhile
    (``pi-tui`` then at once the first message), which the app replays into its editor."""
    return _ANSWER_RE.sub(b"", data)


def take_typed_ahead() -> bytes:
    """The keys read while asking the terminal, once (they are the app's from then on)."""
    global _typed_ahead
    typed, _typed_ahead = _typed_ahead, b""
    return typed


_typed_ahead = b""


_decided: Appearance | None = None


def terminal_appearance(*, ask: bool = False) -> Appearance:
    """The terminal's appearance: the answer found by asking, once per process.

    ``ask=True`` is for the interactive start, just before Textual takes the terminal: on a
    terminal (stdin and stdout both) it queries it and keeps the answer. Every other caller (the
    app choosing or switching a theme, HTML export) never writes to the terminal: it gets the
    kept answer, else ``COLORFGBG``, else dark.
    """
    global _decided
    if _decided is not None:
        return _decided
    try:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):  # closed, replaced (pytest) or absent streams
        interactive = False
    interactive = interactive and os.environ.get("TERM", "") not in ("", "dumb")
    if not (ask and interactive and os.name == "posix"):
        return appearance_from_colorfgbg(os.environ) or "dark"
    _decided = decide_appearance(_ask_terminal(), os.environ)
    return _decided
