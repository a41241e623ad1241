"""What ``/settings`` offers, as data: rows built from the settings, and a chosen value turned into
the settings.json change (pi's keys, nested where pi nests them) and the in-memory update.

Kept apart from the screen (which only draws rows and reports choices) and from the app (which
applies a change to what is on screen), so the mapping between a row and pi's settings file is
in one place and can be tested without a terminal. Row ids are pi's own ids from its settings
selector where pi has the row; rows pi keeps only in settings.json get ids of the same style.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from pi_tui.config.settings import Settings

RowKind = Literal["cycle", "pick", "text"]
"""``cycle``: Enter moves to the next value. ``pick``: Enter opens a list to choose from.
``text``: Enter opens a line to type the value in."""

ON_OFF = ("true", "false")


class SettingValueError(ValueError):
    """A typed value that the setting cannot take; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One line of the settings screen, with its value as text."""

    id: str
    label: str
    description: str
    value: str
    kind: RowKind
    values: tuple[str, ...] = ()
    preview: bool = False
    """Moving over the values in the list applies them for a look (the theme)."""

    def next_value(self) -> str:
        """The value after the current one (a cycle row); an unknown current value starts over."""
        index = self.values.index(self.value) if self.value in self.values else -1
        return self.values[(index + 1) % len(self.values)]


@dataclass(frozen=True, slots=True)
class SettingChange:
    """A choice made on the screen, ready to apply and save."""

    id: str
    value: Any
    """The typed value (bool, int, str, or None for "not set")."""
    saved: dict[str, Any]
    """The change to settings.json in pi's keys; None removes a key (the default applies)."""


@dataclass(frozen=True, slots=True)
class _Spec:
    id: str
    label: str
    description: str
    path: tuple[str, ...]
    """pi's key path in settings.json (``("compaction", "enabled")``)."""
    kind: RowKind
    parse: Callable[[str], Any]
    values: tuple[str, ...] = ()


def _bool(text: str) -> bool:
    if text in ("true", "on"):
        return True
    if text in ("false", "off"):
        return False
    raise SettingValueError(f'"{text}" is not on or off')


def _choice(values: Sequence[str]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in values:
            raise SettingValueError(f'"{text}" is not one of {", ".join(values)}')
        return text

    return parse


def _count(minimum: int = 0, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        cleaned = text.strip().replace("_", "").replace(",", "")
        if not cleaned.isdigit():
            raise SettingValueError(f'"{text.strip()}" is not a whole number')
        number = int(cleaned)
        if number < minimum or (maximum is not None and number > maximum):
            upper = f" to {maximum}" if maximum is not None else " or more"
            raise SettingValueError(f"{number} is out of range ({minimum}{upper})")
        return number

    return parse


def _optional_count(text: str) -> int | None:
    return None if not text.strip() else _count()(text)


def _optional_text(text: str) -> str | None:
    return text.strip() or None


THINKING_LEVEL_PATH = ("defaultThinkingLevel",)
THEME_PATH = ("theme",)

QUEUE_MODES = ("one-at-a-time", "all")
ESCAPE_ACTIONS = ("tree", "fork", "none")
TREE_FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
TUI_MODES = ("fullscreen", "regular")
EXIT_OUTPUTS = ("transcript", "resume-hint")
SCROLLBARS = ("auto", "always", "hidden")
SHARE_DESTINATIONS = ("auto", "gist", "radius")
BUILT_IN = "(empty: the built-in budget)"


def _on_off(row_id: str, label: str, description: str, path: tuple[str, ...]) -> _Spec:
    return _Spec(row_id, label, description, path, "cycle", _bool, ON_OFF)


def _one_of(
    row_id: str, label: str, description: str, path: tuple[str, ...], values: tuple[str, ...]
) -> _Spec:
    return _Spec(row_id, label, description, path, "cycle", _choice(values), values)


def _typed(
    row_id: str, label: str, description: str, path: tuple[str, ...], parse: Callable[[str], Any]
) -> _Spec:
    return _Spec(row_id, label, description, path, "text", parse)


_SPECS: tuple[_Spec, ...] = (
    # pi's /settings rows that apply to pi-tui, in pi's order.
    _on_off(
        "autocompact", "Auto-compact", "Compact the context when it gets too large", ("compaction", "enabled")
    ),
    _on_off(
        "block-images",
        "Block images",
        "Send the model a short note instead of any image",
        ("images", "blockImages"),
    ),
    _Spec(
        "editor-padding",
        "Editor padding",
        "Extra columns inside the editor on each side (0-3)",
        ("editorPaddingX",),
        "cycle",
        _count(0, 3),
        ("0", "1", "2", "3"),
    ),
    _Spec(
        "autocomplete-max-visible",
        "Autocomplete max items",
        "Rows the completion menu shows at once (3-20)",
        ("autocompleteMaxVisible",),
        "cycle",
        _count(3, 20),
        ("3", "5", "7", "10", "15", "20"),
    ),
    _one_of(
        "steering-mode",
        "Steering mode",
        "Messages sent while the agent works: one-at-a-time gives one per turn, all gives every one at once",
        ("steeringMode",),
        QUEUE_MODES,
    ),
    _one_of(
        "follow-up-mode",
        "Follow-up mode",
        "Alt+Enter messages, given when the agent stops: one-at-a-time or all at once",
        ("followUpMode",),
        QUEUE_MODES,
    ),
    _on_off("hide-thinking", "Hide thinking", "Hide the model's thinking in replies", ("hideThinkingBlock",)),
    _on_off(
        "quiet-startup", "Quiet startup", "No header with keys and loaded files at the top", ("quietStartup",)
    ),
    _one_of(
        "double-escape-action",
        "Double-escape action",
        "What Escape twice on an empty editor opens",
        ("doubleEscapeAction",),
        ESCAPE_ACTIONS,
    ),
    _one_of(
        "tree-filter-mode",
        "Tree filter mode",
        "The filter /tree starts with",
        ("treeFilterMode",),
        TREE_FILTERS,
    ),
    _Spec(
        "output-padding",
        "Output padding",
        "Columns of space on each side of messages, tool output and summaries (0 or 1)",
        ("outputPad",),
        "cycle",
        _count(0, 1),
        ("0", "1"),
    ),
    _one_of(
        "tui-mode",
        "Terminal mode",
        "fullscreen: the alternate screen; regular: inline under the shell's output (next start)",
        ("tuiMode",),
        TUI_MODES,
    ),
    _one_of(
        "fullscreen-exit-output",
        "Fullscreen exit output",
        "What a quit from fullscreen prints: the transcript, or only how to resume",
        ("fullscreenExitOutput",),
        EXIT_OUTPUTS,
    ),
    _one_of(
        "fullscreen-scrollbar",
        "Scrollbar",
        "The chat's scrollbar: auto shows it when the chat overflows, always or hidden",
        ("fullscreenScrollbar",),
        SCROLLBARS,
    ),
    _on_off(
        "terminal-progress",
        "Terminal progress",
        "Show a busy indicator in the terminal's tab while the agent works (OSC 9;4)",
        ("terminal", "showTerminalProgress"),
    ),
    _one_of(
        "share-destination",
        "Share destination",
        "Where /share uploads: auto and gist make a secret GitHub gist; radius is pi's service "
        "(not in pi-tui: /share refuses)",
        ("sessionShareDestination",),
        SHARE_DESTINATIONS,
    ),
    _Spec(
        "thinking",
        "Thinking level",
        "Reasoning depth for models that think (saved as the default)",
        THINKING_LEVEL_PATH,
        "pick",
        str,
    ),
    _Spec(
        "theme", "Theme", "Colours of the interface; moving over a theme shows it", THEME_PATH, "pick", str
    ),
    # Settings pi reads from settings.json but does not show in its /settings.
    _typed(
        "compaction-reserve-tokens",
        "Compaction reserve",
        "Tokens kept free for the reply; compaction starts when less is left",
        ("compaction", "reserveTokens"),
        _count(),
    ),
    _typed(
        "compaction-keep-recent-tokens",
        "Compaction keeps recent",
        "Tokens of the newest conversation kept word for word",
        ("compaction", "keepRecentTokens"),
        _count(),
    ),
    _typed(
        "branch-summary-reserve-tokens",
        "Branch summary reserve",
        "Tokens kept free when summarizing a branch left in /tree",
        ("branchSummary", "reserveTokens"),
        _count(),
    ),
    _on_off(
        "branch-summary-skip-prompt",
        "Skip branch summary prompt",
        "Leave a branch in /tree without asking for a summary",
        ("branchSummary", "skipPrompt"),
    ),
    _on_off("retry", "Retry", "Try again after a provider error that may pass", ("retry", "enabled")),
    _typed(
        "retry-max-retries",
        "Retry max attempts",
        "How many times to try again",
        ("retry", "maxRetries"),
        _count(),
    ),
    _typed(
        "retry-base-delay-ms",
        "Retry first delay (ms)",
        "Wait before the first retry; doubled each time",
        ("retry", "baseDelayMs"),
        _count(),
    ),
    *(
        _typed(
            f"thinking-budget-{level}",
            f"Thinking budget {level}",
            f"Tokens for {level} thinking {BUILT_IN}",
            ("thinkingBudgets", level),
            _optional_count,
        )
        for level in ("minimal", "low", "medium", "high")
    ),
    _on_off(
        "secrets",
        "Hide secrets",
        "Placeholders instead of secret environment values, secrets.yml entries and tokens in all "
        "the model is sent (/secrets shows what is hidden)",
        ("secrets", "enabled"),
    ),
    _typed(
        "shell-path",
        "Shell path",
        "The shell for the bash tool and !commands (empty: bash)",
        ("shellPath",),
        _optional_text,
    ),
    _typed(
        "shell-command-prefix",
        "Shell command prefix",
        "A line run before every command, e.g. shopt -s expand_aliases",
        ("shellCommandPrefix",),
        _optional_text,
    ),
)

_BY_ID = {spec.id: spec for spec in _SPECS}


@dataclass(frozen=True, slots=True)
class SettingsView:
    """What the rows show beyond the settings file: the app's live state."""

    settings: Settings
    theme: str
    themes: Sequence[str]
    thinking_level: str
    thinking_levels: Sequence[str]
    hide_thinking: bool


def _pi_value(settings: Settings, path: tuple[str, ...]) -> Any:
    data: Any = settings.model_dump(by_alias=True)
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def build_rows(view: SettingsView) -> list[SettingRow]:
    """Every row with its current value."""
    rows = []
    for spec in _SPECS:
        values = spec.values
        if spec.id == "theme":
            value, values = view.theme, tuple(view.themes)
        elif spec.id == "thinking":
            value, values = view.thinking_level, tuple(view.thinking_levels)
        elif spec.id == "hide-thinking":
            value = _as_text(view.hide_thinking)
        else:
            value = _as_text(_pi_value(view.settings, spec.path))
        rows.append(
            SettingRow(spec.id, spec.label, spec.description, value, spec.kind, values, spec.id == "theme")
        )
    return rows


def parse_change(row_id: str, text: str) -> SettingChange:
    """The change for ``text`` chosen or typed on row ``row_id``.

    Raises :class:`SettingValueError` (one line) for a value the setting cannot take and
    :class:`KeyError` for a row that does not exist.
    """
    spec = _BY_ID[row_id]
    value = spec.parse(text)
    saved: dict[str, Any] = {spec.path[-1]: value}
    for key in reversed(spec.path[:-1]):
        saved = {key: saved}
    return SettingChange(row_id, value, saved)


def apply_to_settings(settings: Settings, change: SettingChange) -> None:
    """Update the in-memory settings in place, so everything holding them sees the change now
    (the agent reads its queue modes, retry and compaction settings from this same object)."""
    spec = _BY_ID[change.id]
    target: Any = settings
    for key in spec.path[:-1]:
        target = getattr(target, _field_name(type(target), key))
    setattr(target, _field_name(type(target), spec.path[-1]), change.value)


def _field_name(model: type[BaseModel], alias: str) -> str:
    for name, field in model.model_fields.items():
        if field.alias == alias or name == alias:
            return name
    raise KeyError(alias)


def matching_rows(rows: Sequence[SettingRow], query: str) -> list[SettingRow]:
    """The rows whose label holds the letters of ``query`` in order (any case), as the
    settings list filters while the user types: labels holding the query as typed come first.
    An empty query keeps every row."""
    wanted = query.replace(" ", "").lower()
    found = [row for row in rows if _in_order(wanted, row.label.lower())]
    return sorted(found, key=lambda row: wanted not in row.label.replace(" ", "").lower())


def _in_order(letters: str, text: str) -> bool:
    position = 0
    for letter in letters:
        position = text.find(letter, position) + 1
        if position == 0:
            return False
    return True
