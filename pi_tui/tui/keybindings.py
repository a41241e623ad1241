"""Key bindings of the TUI, with overrides from ``<agent dir>/keybindings.json``.

The file is the one pi reads, so people can share it between both programs: keys are pi's
action ids (``app.model.select``, or the older un-namespaced ``selectModel``) or our own action
names, values are a key or a list of keys in pi's syntax (``ctrl+l``, ``shift+ctrl+p``). Entries
for pi actions that pi-tui does not have are skipped quietly, since they are valid for pi;
anything else that cannot be used becomes a one-line problem for the user and the default stays.
Loading never raises: a broken file must not keep the program from starting.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One configurable action: what it does (for /hotkeys) and its default Textual keys."""

    description: str
    defaults: tuple[str, ...]


ACTIONS: dict[str, KeyAction] = {
    "submit": KeyAction("Send the message", ("enter",)),
    "newline": KeyAction("Insert a new line", ("shift+enter", "alt+enter")),
    "follow_up": KeyAction("Queue a follow-up message while the agent runs", ("alt+enter",)),
    "abort": KeyAction("Stop the running agent", ("escape",)),
    "clear": KeyAction("Clear the editor (twice: quit; Esc stops a reply)", ("ctrl+c",)),
    "exit": KeyAction("Quit (when the editor is empty)", ("ctrl+d",)),
    "history_prev": KeyAction("Previous prompt from history", ("up",)),
    "history_next": KeyAction("Next prompt from history", ("down",)),
    "complete": KeyAction("Complete a command or file path", ("tab",)),
    "model_picker": KeyAction("Open the model picker", ("ctrl+l",)),
    "cycle_thinking": KeyAction("Cycle the thinking level", ("shift+tab",)),
    "expand": KeyAction("Collapse or expand tool output", ("ctrl+o",)),
    "toggle_thinking": KeyAction("Collapse or expand thinking blocks", ("ctrl+t",)),
    "page_up": KeyAction("Scroll the chat up a page (at the top: earlier history)", ("pageup",)),
    "page_down": KeyAction("Scroll the chat down a page", ("pagedown",)),
    "chat_top": KeyAction("Scroll the chat to the top (again: earlier history)", ("ctrl+home",)),
    "chat_bottom": KeyAction("Scroll the chat to the newest message", ("ctrl+end",)),
}
"""Our actions in the order /hotkeys lists them."""

PI_ACTION_NAMES: dict[str, str] = {
    "tui.input.submit": "submit",
    "tui.input.newLine": "newline",
    "app.message.followUp": "follow_up",
    "app.interrupt": "abort",
    "app.clear": "clear",
    "app.exit": "exit",
    # pi's editor moves the cursor up and, on the first line, walks back through history.
    "tui.editor.cursorUp": "history_prev",
    "tui.editor.cursorDown": "history_next",
    "tui.input.tab": "complete",
    "app.model.select": "model_picker",
    "app.thinking.cycle": "cycle_thinking",
    "app.tools.expand": "expand",
    "app.thinking.toggle": "toggle_thinking",
    # pi scrolls its editor by a page; here the chat is what scrolls (pi's chat is the terminal's).
    "tui.editor.pageUp": "page_up",
    "tui.editor.pageDown": "page_down",
}
"""pi's namespaced ids for the actions we share."""

PI_LEGACY_NAMES: dict[str, str] = {
    "submit": "tui.input.submit",
    "newLine": "tui.input.newLine",
    "followUp": "app.message.followUp",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "cursorUp": "tui.editor.cursorUp",
    "cursorDown": "tui.editor.cursorDown",
    "tab": "tui.input.tab",
    "selectModel": "app.model.select",
    "cycleThinkingLevel": "app.thinking.cycle",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "pageUp": "tui.editor.pageUp",
    "pageDown": "tui.editor.pageDown",
}
"""The ids pi used before namespacing; pi still accepts them, so do we."""

PI_OTHER_ACTIONS = frozenset(
    {
        "app.clipboard.pasteImage",
        "app.editor.external",
        "app.message.dequeue",
        "app.model.cycleBackward",
        "app.model.cycleForward",
        "app.models.clearAll",
        "app.models.enableAll",
        "app.models.reorderDown",
        "app.models.reorderUp",
        "app.models.save",
        "app.models.toggleProvider",
        "app.session.delete",
        "app.session.deleteNoninvasive",
        "app.session.fork",
        "app.session.new",
        "app.session.rename",
        "app.session.resume",
        "app.session.toggleNamedFilter",
        "app.session.togglePath",
        "app.session.toggleSort",
        "app.session.tree",
        "app.suspend",
        "app.tree.editLabel",
        "app.tree.filter.all",
        "app.tree.filter.cycleBackward",
        "app.tree.filter.cycleForward",
        "app.tree.filter.default",
        "app.tree.filter.labeledOnly",
        "app.tree.filter.noTools",
        "app.tree.filter.userOnly",
        "app.tree.foldOrUp",
        "app.tree.toggleLabelTimestamp",
        "app.tree.unfoldOrDown",
        "tui.editor.cursorLeft",
        "tui.editor.cursorLineEnd",
        "tui.editor.cursorLineStart",
        "tui.editor.cursorRight",
        "tui.editor.cursorWordLeft",
        "tui.editor.cursorWordRight",
        "tui.editor.deleteCharBackward",
        "tui.editor.deleteCharForward",
        "tui.editor.deleteToLineEnd",
        "tui.editor.deleteToLineStart",
        "tui.editor.deleteWordBackward",
        "tui.editor.deleteWordForward",
        "tui.editor.jumpBackward",
        "tui.editor.jumpForward",
        "tui.editor.undo",
        "tui.editor.yank",
        "tui.editor.yankPop",
        "tui.input.copy",
        "tui.select.cancel",
        "tui.select.confirm",
        "tui.select.down",
        "tui.select.pageDown",
        "tui.select.pageUp",
        "tui.select.up",
        "copy",
        "cursorLeft",
        "cursorLineEnd",
        "cursorLineStart",
        "cursorRight",
        "cursorWordLeft",
        "cursorWordRight",
        "cycleModelBackward",
        "cycleModelForward",
        "deleteCharBackward",
        "deleteCharForward",
        "deleteSession",
        "deleteSessionNoninvasive",
        "deleteToLineEnd",
        "deleteToLineStart",
        "deleteWordBackward",
        "deleteWordForward",
        "dequeue",
        "externalEditor",
        "fork",
        "jumpBackward",
        "jumpForward",
        "newSession",
        "pasteImage",
        "renameSession",
        "resume",
        "selectCancel",
        "selectConfirm",
        "selectDown",
        "selectPageDown",
        "selectPageUp",
        "selectUp",
        "suspend",
        "toggleSessionNamedFilter",
        "toggleSessionPath",
        "toggleSessionSort",
        "tree",
        "treeEditLabel",
        "treeFoldOrUp",
        "treeToggleLabelTimestamp",
        "treeUnfoldOrDown",
        "undo",
        "yank",
        "yankPop",
    }
)
"""pi actions pi-tui has no counterpart for: valid in a shared file, so not reported."""

_MODIFIERS = ("alt", "ctrl", "shift")  # Textual lists modifiers in alphabetical order
_SPECIAL_KEYS = {
    "escape": "escape",
    "esc": "escape",
    "enter": "enter",
    "return": "enter",
    "tab": "tab",
    "space": "space",
    "backspace": "backspace",
    "delete": "delete",
    "insert": "insert",
    "clear": "clear",
    "home": "home",
    "end": "end",
    "pageup": "pageup",
    "pagedown": "pagedown",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
    **{f"f{number}": f"f{number}" for number in range(1, 13)},
}
_SYMBOLS = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?"
# Textual's names for characters whose Unicode names it shortens.
_SHORT_NAMES = {
    "solidus": "slash",
    "reverse_solidus": "backslash",
    "commercial_at": "at",
    "hyphen_minus": "minus",
    "plus_sign": "plus",
    "low_line": "underscore",
}
_DISPLAY_NAMES = {
    "escape": "Escape",
    "enter": "Enter",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "insert": "Insert",
    "clear": "Clear",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "ctrl": "Ctrl",
    "alt": "Alt",
    "shift": "Shift",
}


def _symbol_key(character: str) -> str:
    """Textual's key name for a punctuation character, e.g. ``[`` -> ``left_square_bracket``."""
    name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    return _SHORT_NAMES.get(name, name)


_SYMBOL_KEYS = {character: _symbol_key(character) for character in _SYMBOLS}
_SYMBOL_CHARACTERS = {name: character for character, name in _SYMBOL_KEYS.items()}


def to_textual_key(key: str) -> str:
    """Translate one key in pi's syntax (``shift+ctrl+p``, ``pageUp``, ``ctrl+-``) to Textual's name.

    Raises ``ValueError`` with a short reason when the text is not a key pi would accept.
    """
    text = key.strip()
    if not text:
        raise ValueError("empty key")
    if text == "+" or text.endswith("++"):
        # "+" is itself a key, so "ctrl++" means ctrl and plus.
        head, base = text[:-1], "+"
        parts = [part for part in head.split("+") if part] if head else []
    else:
        *parts, base = text.split("+")
    modifiers: set[str] = set()
    for part in parts:
        modifier = part.lower()
        if modifier not in _MODIFIERS:
            raise ValueError(f'unknown modifier "{part}" (use ctrl, shift or alt)')
        if modifier in modifiers:
            raise ValueError(f'"{part}" given twice')
        modifiers.add(modifier)
    if not base:
        raise ValueError("a modifier needs a key after it")
    lowered = base.lower()
    if lowered in _SPECIAL_KEYS:
        name = _SPECIAL_KEYS[lowered]
    elif len(base) == 1 and base.isascii() and base.isalnum():
        name = base.lower()
        if name.isalpha() and modifiers == {"shift"}:
            # A shifted letter reaches Textual as the capital letter itself.
            return name.upper()
    elif base in _SYMBOL_KEYS:
        name = _SYMBOL_KEYS[base]
    else:
        raise ValueError(f'unknown key "{base}"')
    return "+".join([*sorted(modifiers), name])


def display_key(key: str) -> str:
    """How to show a Textual key name to people: ``ctrl+l`` -> ``Ctrl+L``."""
    if len(key) == 1 and key.isalpha() and key.isupper():
        return f"Shift+{key}"
    parts = key.split("+")
    shown: list[str] = []
    for part in parts:
        if part in _DISPLAY_NAMES:
            shown.append(_DISPLAY_NAMES[part])
        elif part in _SYMBOL_CHARACTERS:
            shown.append(_SYMBOL_CHARACTERS[part])
        elif len(part) <= 3 and part[:1] == "f" and part[1:].isdigit():
            shown.append(part.upper())
        else:
            shown.append(part.upper() if len(part) == 1 else part)
    return "+".join(shown)


def default_bindings() -> dict[str, tuple[str, ...]]:
    return {action: spec.defaults for action, spec in ACTIONS.items()}


@dataclass(slots=True)
class KeyBindingsLoad:
    """The bindings in effect and what was wrong with the user's file (shown once at startup)."""

    bindings: dict[str, tuple[str, ...]] = field(default_factory=default_bindings)
    problems: list[str] = field(default_factory=list)

    def keys_for(self, action: str) -> tuple[str, ...]:
        """The Textual keys bound to ``action``; an unknown action is a programming error."""
        if action not in ACTIONS:
            raise KeyError(f"unknown key binding action {action!r}")
        return self.bindings.get(action, ())

    def action_for(self, key: str) -> list[str]:
        """Every action ``key`` triggers (``alt+enter`` is both a new line and a follow-up)."""
        try:
            wanted = to_textual_key(key)
        except ValueError:
            wanted = key
        return [action for action in ACTIONS if wanted in self.bindings.get(action, ())]


def _resolve_action(name: str) -> str | None:
    if name in ACTIONS:
        return name
    if name in PI_ACTION_NAMES:
        return PI_ACTION_NAMES[name]
    if name in PI_LEGACY_NAMES:
        return PI_ACTION_NAMES[PI_LEGACY_NAMES[name]]
    return None


def _priority(name: str) -> int:
    """Which spelling wins when a file names one action several ways: ours, then pi's ids."""
    if name in ACTIONS:
        return 0
    return 1 if name in PI_ACTION_NAMES else 2


def _parse_keys(value: object) -> tuple[tuple[str, ...] | None, str | None]:
    """The Textual keys for one file value, or None and the reason it is unusable."""
    if isinstance(value, str):
        raw: Sequence[object] = [value]
    elif isinstance(value, list):
        raw = value
    else:
        return None, f"expected a key or a list of keys, got {type(value).__name__}"
    keys: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            return None, f"expected a key or a list of keys, found {json.dumps(item)}"
        try:
            converted = to_textual_key(item)
        except ValueError as error:
            return None, f'"{item}" is not a key ({error})'
        if converted not in keys:
            keys.append(converted)
    return tuple(keys), None


def load_keybindings(agent_dir: Path) -> KeyBindingsLoad:
    """Defaults overridden by ``<agent_dir>/keybindings.json`` when that file exists."""
    result = KeyBindingsLoad()
    path = agent_dir / "keybindings.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return result
    except (OSError, UnicodeDecodeError) as error:
        result.problems.append(f"{path}: could not be read ({error}); using the default key bindings")
        return result
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        result.problems.append(
            f"{path}: not valid JSON ({error.msg}, line {error.lineno}); using the default key bindings"
        )
        return result
    if not isinstance(data, dict):
        result.problems.append(
            f"{path}: expected an object of action -> key(s), got {type(data).__name__}; "
            "using the default key bindings"
        )
        return result

    chosen: dict[str, tuple[int, tuple[str, ...]]] = {}
    for name, value in data.items():
        action = _resolve_action(name)
        if action is None:
            if name not in PI_OTHER_ACTIONS:
                known = ", ".join(ACTIONS)
                result.problems.append(f'{path}: unknown action "{name}" ignored (known: {known})')
            continue
        keys, problem = _parse_keys(value)
        if keys is None:
            result.problems.append(f'{path}: "{name}": {problem}; keeping the default')
            continue
        rank = _priority(name)
        if action not in chosen or rank < chosen[action][0]:
            chosen[action] = (rank, keys)
    for action, (_rank, keys) in chosen.items():
        result.bindings[action] = keys
    return result


_FIXED_ROWS_AFTER = (
    ("!cmd", "Run a shell command and add its output to the context"),
    ("!!cmd", "Run a shell command without adding it to the context"),
    ("@path then Tab", "Complete a file path"),
)


def hotkeys_text(bindings: Mapping[str, Sequence[str]] | KeyBindingsLoad) -> str:
    """The /hotkeys table: every key the user can press and what it does, aligned in columns."""
    table = bindings.bindings if isinstance(bindings, KeyBindingsLoad) else bindings

    def keys_of(action: str) -> str:
        keys = table.get(action, ACTIONS[action].defaults)
        return ", ".join(display_key(key) for key in keys) or "(unbound)"

    rows: list[tuple[str, str]] = [
        (keys_of(action), spec.description) for action, spec in ACTIONS.items() if action != "follow_up"
    ]
    rows.append((f"{keys_of('submit')} while running", "Steer: send the message to the running agent"))
    rows.append((f"{keys_of('follow_up')} while running", "Queue a follow-up for when the agent is done"))
    rows.append(("Escape twice (empty editor)", "Open /tree"))
    rows.extend(_FIXED_ROWS_AFTER)
    width = max(len(keys) for keys, _ in rows)
    lines = ["Keyboard shortcuts", ""]
    lines.extend(f"  {keys.ljust(width)}  {description}" for keys, description in rows)
    return "\n".join(lines)
