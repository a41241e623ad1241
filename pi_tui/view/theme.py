"""Pi-format colour themes: loading, checking, and which theme a setting means.

What every front end draws with: the TUI turns a :class:`Theme` into a Textual theme
(:mod:`pi_tui.tui.theme`), the HTML export and the server page into page palettes
(:mod:`pi_tui.html_export.page_theme`); nothing here depends on a UI toolkit.

A theme file is pi's JSON format (``name``, optional ``appearance``, optional ``vars``, ``colors``
with every token in :data:`REQUIRED_TOKENS` and any of :data:`OPTIONAL_TOKENS`, optional
``export``), so a pi user's theme, and pi 1.x's own, works here unchanged. A colour value is
``"#rrggbb"`` or ``"#rgb"``, ``"okhsl(h s l)"`` or ``"oklch(l c h)"`` (converted to sRGB by
:mod:`pi_tui.view.colour_spaces`), an xterm 256-colour index (0-255), the name of a ``vars`` entry
(which may itself name another var), or ``""`` for the terminal's default colour.

Which theme a setting means is decided by :func:`choose_theme`: ``system`` (pi 1.x's default) and
pairs written ``light/dark`` follow the terminal's appearance (:mod:`pi_tui.view.terminal_colours`).

Loading never raises for a bad theme file: every problem (unreadable file, bad JSON, wrong type,
missing token, unknown var, bad colour) becomes a one-line message naming the file and the token,
and the affected tokens take the built-in dark theme's values. The app can therefore always start
and show the user exactly what to fix, instead of crashing on a typo (pi refuses such a theme).

Where the built-in themes live: the repository's top-level ``themes/`` is the one source of truth
(the SPEC puts them there). A wheel only carries files inside the ``pi_tui`` package, so identical
copies are shipped as package data in ``pi_tui/view/themes/``; a unit test fails if the copies
drift from ``themes/``. In a checkout (including an editable install) the top-level folder is
used directly, so editing ``themes/dark.json`` takes effect without copying.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.view.colour_spaces import ColourSyntaxError, is_ok_function, parse_ok_colour, srgb_to_oklab

__all__ = [
    "BACKGROUND_TOKENS",
    "BG_TOKENS",
    "EXPORT_KEYS",
    "OPTIONAL_TOKENS",
    "REQUIRED_TOKENS",
    "SYSTEM_THEME",
    "THEME_TOKENS",
    "Theme",
    "ThemeChoice",
    "ThemeLoad",
    "available_themes",
    "builtin_themes_dir",
    "choose_theme",
    "load_theme",
    "palette_to_hex",
    "parse_theme_pair",
    "theme_choices",
]

#: Every colour token pi requires in ``colors`` (pi's theme schema, in its order).
REQUIRED_TOKENS: tuple[str, ...] = (
    # core UI
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    # backgrounds and content
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    # markdown
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    # tool diffs
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    # syntax highlighting
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    # thinking-level editor borders
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    # bash mode editor border
    "bashMode",
)

#: pi 1.x's optional tokens, each with the token it copies when a theme leaves it out (older
#: themes, pi-tui's built-ins) so every theme has all of them.
OPTIONAL_TOKENS: dict[str, str] = {
    "scrollbarTrack": "muted",
    "scrollbarThumb": "text",
    "searchMatchBg": "selectedBg",
    "searchMatchText": "text",
    "thinkingMax": "thinkingXhigh",
}

#: Every token a loaded :class:`Theme` has a colour for: the required ones, then the optional ones.
THEME_TOKENS: tuple[str, ...] = (*REQUIRED_TOKENS, *OPTIONAL_TOKENS)

#: Tokens pi paints as backgrounds (the rest are foregrounds). Needed to pick a sensible stand-in
#: for ``""`` (terminal default) when the value must become a concrete Textual colour.
BG_TOKENS: frozenset[str] = frozenset(
    {"selectedBg", "userMessageBg", "customMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg"}
)
#: Every token painted as a background, pi 1.x's optional ``searchMatchBg`` included.
BACKGROUND_TOKENS: frozenset[str] = BG_TOKENS | {"searchMatchBg"}

#: pi 1.x's default theme: the built-in ``dark`` or ``light``, whichever suits the terminal.
SYSTEM_THEME = "system"

#: Optional keys of pi's ``export`` section (HTML export colours).
EXPORT_KEYS: tuple[str, ...] = ("pageBg", "cardBg", "infoBg")

_HEX_RE = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_APPEARANCES = ("dark", "light")

# xterm's default colours for the 16 terminal-defined slots. Real terminals vary, but a fixed,
# well-known choice keeps resolution deterministic.
_ANSI_16 = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)  # fmt: skip
_CUBE_LEVELS = (0, 95, 135, 175, 215, 255)


def palette_to_hex(index: int) -> str:
    """Convert an xterm 256-colour index to ``#rrggbb`` (16-231 cube, 232-255 grey ramp)."""
    if not 0 <= index <= 255:
        raise ValueError(f"256-colour index {index} is outside 0-255")
    if index < 16:
        return _ANSI_16[index]
    if index < 232:
        n = index - 16
        r, g, b = _CUBE_LEVELS[n // 36], _CUBE_LEVELS[(n // 6) % 6], _CUBE_LEVELS[n % 6]
    else:
        r = g = b = 8 + (index - 232) * 10
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass(frozen=True)
class Theme:
    """A fully resolved theme: every token of :data:`THEME_TOKENS` maps to ``#rrggbb`` or ``None``.

    ``None`` means "the terminal's default colour" (pi's ``""``); it is kept distinct from a
    concrete colour so renderers can choose to leave the colour unset. ``appearance`` is the
    file's own ``"dark"``/``"light"`` when it says; ``palette_tokens`` are the tokens given as one
    of the 16 terminal-defined colours, which say nothing about the theme's brightness.
    """

    name: str
    colors: dict[str, str | None]
    export: dict[str, str | None] = field(default_factory=dict)
    path: Path | None = None
    appearance: str | None = None
    palette_tokens: frozenset[str] = frozenset()

    @property
    def dark(self) -> bool:
        """Whether this is a dark theme: the file's ``appearance``, else judged as pi 1.x does.

        Without ``appearance``, the average OKLab lightness of the background tokens is compared
        with the foreground tokens' (backgrounds darker: a dark theme); with only one kind of
        concrete colour, that kind's lightness against the middle; with none, the name decides.
        """
        if self.appearance in _APPEARANCES:
            return self.appearance == "dark"
        fg: list[float] = []
        bg: list[float] = []
        for token, value in self.colors.items():
            if value and token not in self.palette_tokens:
                (bg if token in BACKGROUND_TOKENS else fg).append(_lightness(value))
        if fg and bg:
            return sum(bg) / len(bg) < sum(fg) / len(fg)
        if bg:
            return sum(bg) / len(bg) < 0.5
        if fg:
            return sum(fg) / len(fg) > 0.5
        return self.name != "light"


@dataclass(frozen=True)
class ThemeLoad:
    """The result of :func:`load_theme`: a usable theme plus what was wrong with the file."""

    theme: Theme
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file was used exactly as written (no fallbacks)."""
        return not self.problems


class _ColorError(ValueError):
    """A colour value that cannot be resolved; the message says why, without the token name."""


def _lightness(hex_color: str) -> float:
    """OKLab lightness (0-1) of ``#rrggbb``."""
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return srgb_to_oklab((r, g, b))[0]


def _describe(value: object) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool | None) else type(value).__name__


def _resolve(value: object, vars_: dict[str, Any], seen: tuple[str, ...] = ()) -> str | None:
    """Resolve one colour value to ``#rrggbb`` or ``None``, following var references."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _ColorError(
            f'wrong type {_describe(value)} (expected a colour string, a 0-255 integer, a var name or "")'
        )
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise _ColorError(f"256-colour index {value} is outside 0-255")
        return palette_to_hex(value)
    if value == "":
        return None
    if value.startswith("#"):
        if not _HEX_RE.fullmatch(value):
            raise _ColorError(f'bad colour "{value}" (expected "#rrggbb" or "#rgb")')
        digits = value[1:].lower()
        return "#" + (digits if len(digits) == 6 else "".join(d * 2 for d in digits))
    if is_ok_function(value):
        try:
            return parse_ok_colour(value)
        except ColourSyntaxError as error:
            raise _ColorError(str(error)) from None
    if value in seen:
        raise _ColorError(f"circular var reference {' -> '.join((*seen, value))}")
    if value not in vars_:
        via = f" (via {' -> '.join(seen)})" if seen else ""
        raise _ColorError(f'unknown var "{value}"{via}')
    return _resolve(vars_[value], vars_, (*seen, value))


@lru_cache(maxsize=1)
def _dark_fallback() -> tuple[tuple[tuple[str, str | None], ...], str | None]:
    """The built-in dark theme's colours, used to fill any token a theme gets wrong.

    Returns the colours plus a problem message if even the built-in theme is unusable (then the
    gaps become terminal defaults, which still lets the app start).
    """
    path = builtin_themes_dir() / "dark.json"
    loaded = _load(path, fallback={}, fallback_label="terminal default")
    note = None
    if loaded.problems:
        note = f"built-in dark theme {path} is damaged: {loaded.problems[0]}"
    return tuple(loaded.theme.colors.items()), note


def load_theme(path: str | Path) -> ThemeLoad:
    """Load and resolve a pi theme file, never raising for its content.

    Problems are collected, each naming the file and the token; bad or missing tokens take the
    built-in dark theme's value so the result is always a complete :class:`Theme`.
    """
    path = Path(path)
    fallback_items, note = _dark_fallback()
    load = _load(path, fallback=dict(fallback_items), fallback_label="the built-in dark theme's value")
    if note and load.problems:
        load.problems.append(note)
    return load


def _load(path: Path, *, fallback: dict[str, str | None], fallback_label: str) -> ThemeLoad:
    problems: list[str] = []
    where = str(path)

    def filled(reason: str) -> ThemeLoad:
        problems.append(f"{where}: {reason}; using the built-in dark theme instead")
        colors = {token: fallback.get(token) for token in THEME_TOKENS}
        return ThemeLoad(Theme(name=path.stem, colors=colors, path=path), problems)

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return filled(f"cannot read the theme file ({error.__class__.__name__}: {error})")
    if jsonio.too_deep(text):
        return filled(f"bad JSON: nested more than {jsonio.MAX_DEPTH} levels deep")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return filled(f"bad JSON at line {error.lineno}, column {error.colno}: {error.msg}")
    if not isinstance(data, dict):
        return filled(f"wrong type: the theme must be a JSON object, not {type(data).__name__}")

    name = data.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f'{where}: "name" is missing or not a string; using "{path.stem}"')
        name = path.stem

    vars_ = data.get("vars", {})
    if not isinstance(vars_, dict):
        problems.append(f'{where}: "vars" must be an object, not {type(vars_).__name__}; ignoring it')
        vars_ = {}

    raw_colors = data.get("colors")
    if not isinstance(raw_colors, dict):
        what = "missing" if raw_colors is None else f"a {type(raw_colors).__name__}, not an object"
        problems.append(f'{where}: "colors" is {what}; using the built-in dark theme for every token')
        raw_colors = {}
        missing_reported = True
    else:
        missing_reported = False

    appearance = data.get("appearance")
    if appearance is not None and appearance not in _APPEARANCES:
        problems.append(
            f'{where}: "appearance" must be "dark" or "light", not {_describe(appearance)}; ignoring it'
        )
        appearance = None

    colors: dict[str, str | None] = {}
    palette_tokens: set[str] = set()
    for token in THEME_TOKENS:
        if token not in raw_colors:
            if token in OPTIONAL_TOKENS:
                source = OPTIONAL_TOKENS[token]
                colors[token] = colors.get(source)
                if source in palette_tokens:
                    palette_tokens.add(token)
                continue
            if not missing_reported:
                problems.append(f"{where}: missing colour token {token!r}; using {fallback_label}")
            colors[token] = fallback.get(token)
            continue
        try:
            colors[token] = _resolve(raw_colors[token], vars_)
        except _ColorError as error:
            problems.append(f"{where}: colour token {token!r}: {error}; using {fallback_label}")
            colors[token] = fallback.get(token)
            continue
        if _is_terminal_palette(raw_colors[token], vars_):
            palette_tokens.add(token)
    # Tokens pi does not (yet) know are ignored silently: a theme written for a newer pi must
    # still load without complaints.

    export: dict[str, str | None] = {}
    raw_export = data.get("export", {})
    if not isinstance(raw_export, dict):
        problems.append(f'{where}: "export" must be an object; ignoring it')
        raw_export = {}
    for key in EXPORT_KEYS:
        if key in raw_export:
            try:
                export[key] = _resolve(raw_export[key], vars_)
            except _ColorError as error:
                problems.append(f"{where}: export colour {key!r}: {error}; ignoring it")

    theme = Theme(
        name=name,
        colors=colors,
        export=export,
        path=path,
        appearance=appearance,
        palette_tokens=frozenset(palette_tokens),
    )
    return ThemeLoad(theme, problems)


def _is_terminal_palette(value: object, vars_: dict[str, Any]) -> bool:
    """Whether a (valid) colour value ends in one of the 16 colours each terminal defines itself."""
    seen: set[str] = set()
    while isinstance(value, str) and value in vars_ and value not in seen:
        seen.add(value)
        value = vars_[value]
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 16


def builtin_themes_dir() -> Path:
    """The folder holding the built-in ``dark.json`` and ``light.json``.

    A checkout (recognised by ``pyproject.toml`` next to ``themes/``) uses the top-level
    ``themes/``, the single source of truth; an installed wheel uses the package-data copies.
    """
    package_dir = Path(__file__).resolve().parent
    checkout = package_dir.parent.parent
    top_level = checkout / "themes"
    if (checkout / "pyproject.toml").is_file() and (top_level / "dark.json").is_file():
        return top_level
    return package_dir / "themes"


def available_themes(
    agent_dir: str | Path | None, extra: Sequence[str | Path] = (), *, discover: bool = True
) -> dict[str, Path]:
    """Theme name -> file: the built-ins, then ``<agent dir>/themes/*.json``, then ``extra``
    (``--theme`` files and folders). ``discover=False`` (``--no-themes``) skips the agent dir.

    Names come from file names (as in pi). A user theme with a built-in's name replaces it, so a
    user can restyle ``dark`` without a new name (pi keeps the built-in instead). ``system`` is
    reserved for the automatic choice, so a file of that name is left out, as pi does.
    """
    themes: dict[str, Path] = {}
    folders = [builtin_themes_dir()]
    if agent_dir is not None and discover:
        folders.append(Path(agent_dir) / "themes")
    files: list[Path] = []
    for item in extra:
        path = Path(item).expanduser()
        if path.is_dir():
            folders.append(path)
        elif path.suffix == ".json" and path.is_file():
            files.append(path)
    for folder in folders:
        try:
            found = sorted(p for p in folder.glob("*.json") if p.is_file())
        except OSError:
            continue
        for file in found:
            themes[file.stem] = file
    for file in files:
        themes[file.stem] = file
    themes.pop(SYSTEM_THEME, None)
    return dict(sorted(themes.items()))


def parse_theme_pair(setting: str) -> tuple[str, str] | None:
    """``"light/dark"`` as ``(light theme, dark theme)``; None unless it is exactly two names.

    pi 1.x stores automatic mode with the light terminal's theme first and the dark one second.
    """
    first, slash, second = setting.partition("/")
    if not slash or "/" in second:
        return None
    light, dark = first.strip(), second.strip()
    return (light, dark) if light and dark else None


@dataclass(frozen=True)
class ThemeChoice:
    """What a ``theme`` setting means on this terminal: the theme file to load and its name, plus
    a one-line problem when the setting could not be followed (then the name is the fallback)."""

    name: str
    path: Path
    problem: str | None = None


def choose_theme(setting: str | None, themes: dict[str, Path], appearance: str) -> ThemeChoice:
    """The theme to show for ``setting`` (a name, ``system``, ``light/dark`` or None for the default).

    ``system`` (and no setting) is the built-in ``dark`` or ``light``, whichever ``appearance`` (the
    terminal's, ``"dark"`` or ``"light"``) calls for; a pair picks its half the same way. A name
    that is not a theme, or a malformed pair, falls back to ``system`` with one line saying so.
    """
    builtins = available_themes(None)
    system_name = "light" if appearance == "light" else "dark"

    def system(problem: str | None = None) -> ThemeChoice:
        path = builtins.get(system_name) or builtins["dark"]
        return ThemeChoice(system_name, path, problem)

    wanted = (setting or "").strip() or SYSTEM_THEME
    if wanted == SYSTEM_THEME:
        return system()
    if "/" in wanted:
        pair = parse_theme_pair(wanted)
        if pair is None:
            return system(
                f'Theme setting "{wanted}" is not a pair of two names ("light/dark"); using "{SYSTEM_THEME}".'
            )
        wanted = pair[0] if appearance == "light" else pair[1]
        if wanted == SYSTEM_THEME:
            return system()
    path = themes.get(wanted)
    if path is None:
        offered = ", ".join([SYSTEM_THEME, *themes])
        return system(f'Theme "{wanted}" not found (available: {offered}); using "{SYSTEM_THEME}".')
    return ThemeChoice(wanted, path)


def theme_choices(themes: dict[str, Path]) -> list[str]:
    """The names the /settings theme row offers: ``system`` first, then every theme file's."""
    return [SYSTEM_THEME, *(name for name in themes if name != SYSTEM_THEME)]
