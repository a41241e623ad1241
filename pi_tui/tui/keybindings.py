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

from pi_tui import jsonio

SCOPES: dict[str, str] = {
    "app": "Chat",
    "editor": "Editor",
    "search": "Transcript search",
    "thinking": "Thinking level picker",
    "select": "Lists and pickers",
    "tree": "/tree",
    "sessions": "/resume",
    "models": "/scoped-models",
}
"""Where a key works, in the order /hotkeys lists them. A key may mean different things in
different scopes (Ctrl+D quits from the chat and deletes a session in /resume), never two
things in one scope unless the user binds it so."""


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One configurable action: what it does (for /hotkeys), its default Textual keys, the scope
    it works in and pi's id for it (the name pi's keybindings.json uses)."""

    description: str
    defaults: tuple[str, ...]
    scope: str = "app"
    pi_id: str | None = None


def _action(description: str, defaults: tuple[str, ...], scope: str, pi_id: str | None = None) -> KeyAction:
    return KeyAction(description, defaults, scope, pi_id)


ACTIONS: dict[str, KeyAction] = {
    # --- the chat (app-wide keys while no picker is open) ---
    "copy": _action("Copy the text selected with the mouse", ("ctrl+c",), "app", "tui.input.copy"),
    "clear": _action("Clear the editor (twice: quit; Esc stops a reply)", ("ctrl+c",), "app", "app.clear"),
    "exit": _action("Quit (when the editor is empty)", ("ctrl+d",), "app", "app.exit"),
    "suspend": _action("Suspend to the shell (fg comes back)", ("ctrl+z",), "app", "app.suspend"),
    "model_picker": _action("Open the model picker", ("ctrl+l",), "app", "app.model.select"),
    "cycle_thinking": _action("Cycle the thinking level", ("shift+tab",), "app", "app.thinking.cycle"),
    "expand": _action("Collapse or expand tool output", ("ctrl+o",), "app", "app.tools.expand"),
    "toggle_thinking": _action(
        "Collapse or expand thinking blocks", ("ctrl+t",), "app", "app.thinking.toggle"
    ),
    "external_editor": _action(
        "Edit the message in $VISUAL / $EDITOR", ("ctrl+g",), "app", "app.editor.external"
    ),
    "dequeue": _action(
        "Bring queued messages back into the editor", ("alt+up",), "app", "app.message.dequeue"
    ),
    "paste_image": _action(
        "Paste an image from the clipboard", ("ctrl+v",), "app", "app.clipboard.pasteImage"
    ),
    "new_session": _action("Start a new session (/new)", (), "app", "app.session.new"),
    "open_tree": _action("Open the session tree (/tree)", (), "app", "app.session.tree"),
    "fork": _action("Fork the session from an earlier prompt (/fork)", (), "app", "app.session.fork"),
    "resume": _action("Resume a session (/resume)", (), "app", "app.session.resume"),
    "cycle_model_forward": _action(
        "Next model of the scoped list", ("ctrl+p",), "app", "app.model.cycleForward"
    ),
    "cycle_model_backward": _action(
        "Previous model of the scoped list", ("ctrl+shift+p",), "app", "app.model.cycleBackward"
    ),
    "message_copy": _action(
        "Copy the last assistant message to the clipboard", ("ctrl+x",), "app", "app.message.copy"
    ),
    # pi 1.x gives Ctrl+X to app.message.copy; Alt+X (Emacs' M-x) is free in every pi 1.x scope.
    "command_palette": _action("Command palette: commands, settings and actions", ("alt+x",), "app"),
    # The transcript keys: pi's fullscreen (alternate screen) mode, which is the only mode here.
    "page_up": _action(
        "Scroll the chat up a page (at the top: earlier history)", ("pageup",), "app", "tui.altScreen.pageUp"
    ),
    "page_down": _action("Scroll the chat down a page", ("pagedown",), "app", "tui.altScreen.pageDown"),
    "half_page_up": _action("Scroll the chat up half a page", (), "app", "tui.altScreen.halfPageUp"),
    "half_page_down": _action("Scroll the chat down half a page", (), "app", "tui.altScreen.halfPageDown"),
    "line_up": _action("Scroll the chat up one line", (), "app", "tui.altScreen.lineUp"),
    "line_down": _action("Scroll the chat down one line", (), "app", "tui.altScreen.lineDown"),
    "previous_prompt": _action(
        "Scroll the chat to the previous prompt you sent",
        ("ctrl+shift+up", "ctrl+up"),
        "app",
        "tui.altScreen.previousPrompt",
    ),
    "next_prompt": _action(
        "Scroll the chat to the next prompt you sent",
        ("ctrl+shift+down", "ctrl+down"),
        "app",
        "tui.altScreen.nextPrompt",
    ),
    "search": _action(
        "Search the chat (press again to close the search)", ("ctrl+shift+f",), "app", "tui.altScreen.search"
    ),
    "chat_top": _action(
        "Scroll the chat to the top (again: earlier history)", ("ctrl+home",), "app", "tui.altScreen.top"
    ),
    "chat_bottom": _action(
        "Scroll the chat to the newest message and follow it", ("ctrl+end",), "app", "tui.altScreen.bottom"
    ),
    # --- the editor ---
    "submit": _action("Send the message", ("enter",), "editor", "tui.input.submit"),
    "newline": _action(
        "Insert a new line", ("shift+enter", "ctrl+j", "alt+enter"), "editor", "tui.input.newLine"
    ),
    "follow_up": _action(
        "Queue a follow-up message while the agent runs", ("alt+enter",), "editor", "app.message.followUp"
    ),
    "abort": _action(
        "Stop the running agent (twice on an empty editor: /tree)", ("escape",), "editor", "app.interrupt"
    ),
    "complete": _action("Complete a command or file path", ("tab",), "editor", "tui.input.tab"),
    # pi's editor moves the cursor up and, on the first line, walks back through history.
    "history_prev": _action(
        "Cursor up; on the first line: previous prompt", ("up",), "editor", "tui.editor.cursorUp"
    ),
    "history_next": _action(
        "Cursor down; on the last line: next prompt", ("down",), "editor", "tui.editor.cursorDown"
    ),
    "recall_previous": _action(
        "Previous prompt, wherever the cursor is", (), "editor", "tui.editor.historyPrevious"
    ),
    "recall_next": _action("Next prompt, wherever the cursor is", (), "editor", "tui.editor.historyNext"),
    "cursor_left": _action("Cursor left", ("left", "ctrl+b"), "editor", "tui.editor.cursorLeft"),
    "cursor_right": _action("Cursor right", ("right", "ctrl+f"), "editor", "tui.editor.cursorRight"),
    "word_left": _action(
        "Cursor a word left", ("alt+left", "ctrl+left", "alt+b"), "editor", "tui.editor.cursorWordLeft"
    ),
    "word_right": _action(
        "Cursor a word right", ("alt+right", "ctrl+right", "alt+f"), "editor", "tui.editor.cursorWordRight"
    ),
    "line_start": _action("Start of the line", ("home", "ctrl+a"), "editor", "tui.editor.cursorLineStart"),
    "line_end": _action("End of the line", ("end", "ctrl+e"), "editor", "tui.editor.cursorLineEnd"),
    "jump_forward": _action(
        "Jump forward to the next character typed",
        ("ctrl+right_square_bracket",),
        "editor",
        "tui.editor.jumpForward",
    ),
    "jump_backward": _action(
        "Jump back to the character typed",
        ("alt+ctrl+right_square_bracket",),
        "editor",
        "tui.editor.jumpBackward",
    ),
    "editor_page_up": _action(
        "Cursor up a page in a long message", ("pageup", "ctrl+pageup"), "editor", "tui.editor.pageUp"
    ),
    "editor_page_down": _action(
        "Cursor down a page in a long message", ("pagedown", "ctrl+pagedown"), "editor", "tui.editor.pageDown"
    ),
    "delete_backward": _action(
        "Delete the character before the cursor", ("backspace",), "editor", "tui.editor.deleteCharBackward"
    ),
    "delete_forward": _action(
        "Delete the character under the cursor",
        ("delete", "ctrl+d"),
        "editor",
        "tui.editor.deleteCharForward",
    ),
    "delete_word_backward": _action(
        "Delete the word before the cursor",
        ("ctrl+w", "alt+backspace"),
        "editor",
        "tui.editor.deleteWordBackward",
    ),
    "delete_word_forward": _action(
        "Delete the word after the cursor", ("alt+d", "alt+delete"), "editor", "tui.editor.deleteWordForward"
    ),
    "delete_to_line_start": _action(
        "Delete to the start of the line", ("ctrl+u",), "editor", "tui.editor.deleteToLineStart"
    ),
    "delete_to_line_end": _action(
        "Delete to the end of the line", ("ctrl+k",), "editor", "tui.editor.deleteToLineEnd"
    ),
    "yank": _action("Paste the text deleted last", ("ctrl+y",), "editor", "tui.editor.yank"),
    "yank_pop": _action(
        "After a paste: cycle through earlier deleted text", ("alt+y",), "editor", "tui.editor.yankPop"
    ),
    "undo": _action("Undo", ("ctrl+minus",), "editor", "tui.editor.undo"),
    # --- transcript search (while its box has the focus; before the chat's keys) ---
    "search_next": _action("Next match", ("enter", "ctrl+g"), "search", "tui.altScreen.searchNext"),
    "search_previous": _action(
        "Previous match", ("shift+enter", "ctrl+shift+g"), "search", "tui.altScreen.searchPrevious"
    ),
    "search_close": _action("Close the search", ("escape",), "search", "tui.altScreen.searchClose"),
    # --- lists and pickers ---
    "select_up": _action("Move up", ("up",), "select", "tui.select.up"),
    "select_down": _action("Move down", ("down",), "select", "tui.select.down"),
    "select_page_up": _action("Move up a page", ("pageup",), "select", "tui.select.pageUp"),
    "select_page_down": _action("Move down a page", ("pagedown",), "select", "tui.select.pageDown"),
    "select_confirm": _action("Choose", ("enter",), "select", "tui.select.confirm"),
    "select_cancel": _action("Close without choosing", ("escape", "ctrl+c"), "select", "tui.select.cancel"),
    # --- /thinking's picker ---
    "thinking_save": _action(
        "Use the level and save it as the default", ("ctrl+s",), "thinking", "app.thinking.save"
    ),
    # --- /tree ---
    "tree_fold_or_up": _action(
        "Fold the branch, or go up", ("ctrl+left", "alt+left"), "tree", "app.tree.foldOrUp"
    ),
    "tree_unfold_or_down": _action(
        "Unfold the branch, or go down", ("ctrl+right", "alt+right"), "tree", "app.tree.unfoldOrDown"
    ),
    "tree_edit_label": _action("Label the entry", ("L",), "tree", "app.tree.editLabel"),
    "tree_label_times": _action("Show or hide label times", ("T",), "tree", "app.tree.toggleLabelTimestamp"),
    "tree_filter_default": _action("Filter: default view", ("ctrl+d",), "tree", "app.tree.filter.default"),
    "tree_filter_no_tools": _action(
        "Filter: hide tool results", ("ctrl+t",), "tree", "app.tree.filter.noTools"
    ),
    "tree_filter_user_only": _action(
        "Filter: your messages only", ("ctrl+u",), "tree", "app.tree.filter.userOnly"
    ),
    "tree_filter_labeled_only": _action(
        "Filter: labelled entries only", ("ctrl+l",), "tree", "app.tree.filter.labeledOnly"
    ),
    "tree_filter_all": _action("Filter: every entry", ("ctrl+a",), "tree", "app.tree.filter.all"),
    "tree_filter_next": _action("Next filter", ("ctrl+o",), "tree", "app.tree.filter.cycleForward"),
    "tree_filter_previous": _action(
        "Previous filter", ("ctrl+shift+o",), "tree", "app.tree.filter.cycleBackward"
    ),
    # --- /resume ---
    "session_named_only": _action(
        "Named sessions only, or all", ("ctrl+n",), "sessions", "app.session.toggleNamedFilter"
    ),
    "session_path": _action(
        "Show or hide the session's path", ("ctrl+p",), "sessions", "app.session.togglePath"
    ),
    "session_sort": _action("Change the sort order", ("ctrl+s",), "sessions", "app.session.toggleSort"),
    "session_rename": _action("Rename the session", ("ctrl+r",), "sessions", "app.session.rename"),
    "session_delete": _action(
        "Delete the session (asks first)", ("ctrl+d",), "sessions", "app.session.delete"
    ),
    "session_delete_quick": _action(
        "Delete the session when the search is empty",
        ("ctrl+backspace",),
        "sessions",
        "app.session.deleteNoninvasive",
    ),
    # --- /scoped-models ---
    "models_save": _action("Save the selection", ("ctrl+s",), "models", "app.models.save"),
    "models_enable_all": _action("Turn every model on", ("ctrl+a",), "models", "app.models.enableAll"),
    "models_clear_all": _action("Turn every model off", ("ctrl+x",), "models", "app.models.clearAll"),
    "models_toggle_provider": _action(
        "Turn the provider's models on or off", ("ctrl+p",), "models", "app.models.toggleProvider"
    ),
    "models_up": _action("Move the model up the cycle order", ("alt+up",), "models", "app.models.reorderUp"),
    "models_down": _action(
        "Move the model down the cycle order", ("alt+down",), "models", "app.models.reorderDown"
    ),
}
"""Every action in the order /hotkeys lists them (grouped by scope)."""

PI_ACTION_NAMES: dict[str, str] = {spec.pi_id: name for name, spec in ACTIONS.items() if spec.pi_id}
"""pi's namespaced ids -> our action names: every id pi 1.5.2 has (and so every one of 0.73.1's)
is one of ours."""

PI_LEGACY_NAMES: dict[str, str] = {
    "submit": "tui.input.submit",
    "newLine": "tui.input.newLine",
    "followUp": "app.message.followUp",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "suspend": "app.suspend",
    "copy": "tui.input.copy",
    "cursorUp": "tui.editor.cursorUp",
    "cursorDown": "tui.editor.cursorDown",
    "cursorLeft": "tui.editor.cursorLeft",
    "cursorRight": "tui.editor.cursorRight",
    "cursorWordLeft": "tui.editor.cursorWordLeft",
    "cursorWordRight": "tui.editor.cursorWordRight",
    "cursorLineStart": "tui.editor.cursorLineStart",
    "cursorLineEnd": "tui.editor.cursorLineEnd",
    "jumpForward": "tui.editor.jumpForward",
    "jumpBackward": "tui.editor.jumpBackward",
    "pageUp": "tui.editor.pageUp",
    "pageDown": "tui.editor.pageDown",
    "deleteCharBackward": "tui.editor.deleteCharBackward",
    "deleteCharForward": "tui.editor.deleteCharForward",
    "deleteWordBackward": "tui.editor.deleteWordBackward",
    "deleteWordForward": "tui.editor.deleteWordForward",
    "deleteToLineStart": "tui.editor.deleteToLineStart",
    "deleteToLineEnd": "tui.editor.deleteToLineEnd",
    "yank": "tui.editor.yank",
    "yankPop": "tui.editor.yankPop",
    "undo": "tui.editor.undo",
    "tab": "tui.input.tab",
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "selectModel": "app.model.select",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "cycleThinkingLevel": "app.thinking.cycle",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "externalEditor": "app.editor.external",
    "dequeue": "app.message.dequeue",
    "pasteImage": "app.clipboard.pasteImage",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
    "treeFoldOrUp": "app.tree.foldOrUp",
    "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel",
    "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
}
"""The ids pi used before namespacing; pi still accepts them, so do we."""

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


TERMINAL_TWINS: dict[str, str] = {"ctrl+underscore": "ctrl+minus"}
"""Keys a legacy terminal cannot tell apart, as Textual names them -> the name a binding uses.
xterm, tmux and most terminals send Ctrl+- as the byte 0x1f (the same as Ctrl+_), which Textual
reports as ``ctrl+underscore``; pi reads that byte as ``ctrl+-``, so a binding to ``ctrl+-`` (its
default undo key) must answer to it too. Terminals with the kitty keyboard protocol send
``ctrl+minus`` itself."""


def same_key(key: str) -> str:
    """``key`` with a terminal twin replaced by the key a binding names (see TERMINAL_TWINS)."""
    return TERMINAL_TWINS.get(key, key)


def key_variants(key: str) -> tuple[str, ...]:
    """``key`` and every key a terminal may report for it: what the app binds in Textual's
    table so a ``ctrl+-`` binding fires on tmux's 0x1f as well."""
    return (key, *(twin for twin, named in TERMINAL_TWINS.items() if named == key))


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

    def action_for(self, key: str, scope: str | None = None) -> list[str]:
        """Every action ``key`` triggers in ``scope`` (all scopes when None): ``alt+enter`` is
        both a new line and a follow-up in the editor."""
        try:
            wanted = same_key(to_textual_key(key))
        except ValueError:
            wanted = same_key(key)
        return [
            action
            for action, spec in ACTIONS.items()
            if (scope is None or spec.scope == scope)
            and wanted in (same_key(bound) for bound in self.bindings.get(action, ()))
        ]

    def default_key(self, action: str) -> str | None:
        """The key a screen listens for when it does ``action`` (its first default)."""
        defaults = ACTIONS[action].defaults
        return defaults[0] if defaults else None


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
    if jsonio.too_deep(text):
        result.problems.append(
            f"{path}: not valid JSON (nested more than {jsonio.MAX_DEPTH} levels deep); "
            "using the default key bindings"
        )
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
        if name == "$schema":
            continue  # pi's files name their JSON schema (an editor's help), not a key
        action = _resolve_action(name)
        if action is None:
            result.problems.append(
                f'{path}: unknown action "{name}" ignored (pi\'s ids such as "app.model.select" '
                "and pi-tui's names are listed in /hotkeys)"
            )
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


def header_hints(bindings: Mapping[str, Sequence[str]]) -> tuple[tuple[str, str], ...]:
    """The compact hint line of the header (pi's), with the keys as bound now."""

    def key(action: str) -> str | None:
        keys = bindings.get(action, ACTIONS[action].defaults)
        return display_key(keys[0]).lower().replace("escape", "esc") if keys else None

    hints: list[tuple[str | None, str]] = [
        (key("abort"), "interrupt"),
        (f"{key('clear')}/{key('exit')}" if key("clear") and key("exit") else None, "clear/exit"),
        ("/", "commands"),
        ("!", "bash"),
        (key("command_palette"), "palette"),
        (key("cycle_model_forward"), "next model"),
        (key("expand"), "more"),
    ]
    return tuple((shown, what) for shown, what in hints if shown)


def startup_keys(bindings: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """The expanded start-up help (pi's list): the chat's keys as bound now, then the
    prefixes typed in the editor."""
    rows: list[tuple[str, str]] = []
    for action in (
        "abort", "clear", "exit", "suspend", "delete_to_line_end", "cycle_thinking", "cycle_model_forward",
        "model_picker", "command_palette", "expand", "toggle_thinking", "external_editor", "follow_up",
        "dequeue", "paste_image",
    ):  # fmt: skip
        keys = bindings.get(action, ACTIONS[action].defaults)
        if keys:
            rows.append((" / ".join(display_key(key) for key in keys), ACTIONS[action].description))
    rows += [("/", "Slash commands"), ("!cmd  !!cmd", "Run a shell command (!!: kept out of the context)")]
    return rows


_FIXED_ROWS = (
    ("Enter while running", "Steer: send the message to the running agent"),
    ("Escape twice (empty editor)", "Open /tree (the doubleEscapeAction setting)"),
    ("/", "Slash commands (Tab completes, Enter runs)"),
    ("!cmd", "Run a shell command and add its output to the context"),
    ("!!cmd", "Run a shell command without adding it to the context"),
    ("@path then Tab", "Complete a file path"),
    ("Mouse drag", "Select chat text (Ctrl+C or the copy key copies it)"),
)


def hotkeys_text(bindings: Mapping[str, Sequence[str]] | KeyBindingsLoad, width: int = 100) -> str:
    """The /hotkeys table: every key the user can press and what it does, by where it works,
    with pi's id for each action (the name to use in keybindings.json), laid out for ``width``
    columns: a row that does not fit continues under its own column (the key list under the
    keys, the description and id under the description), never at the left margin."""
    from pi_tui.tui.text_layout import hanging_row, pack, wrap

    table = bindings.bindings if isinstance(bindings, KeyBindingsLoad) else bindings

    def keys_of(action: str) -> list[str]:
        keys = table.get(action, ACTIONS[action].defaults)
        return [display_key(key) for key in keys] or ["(unbound)"]

    sections: list[tuple[str, list[tuple[list[str], str, str]]]] = []
    for scope, title in SCOPES.items():
        # unbound actions last: the keys that work now are the ones read first
        actions = sorted(
            (action for action, spec in ACTIONS.items() if spec.scope == scope),
            key=lambda action: not table.get(action, ACTIONS[action].defaults),
        )
        rows = [
            (keys_of(action), ACTIONS[action].description, ACTIONS[action].pi_id or action)
            for action in actions
        ]
        sections.append((title, rows))
    sections.append(("Also", [([keys], text, "") for keys, text in _FIXED_ROWS]))
    lines = wrap("Keyboard shortcuts (rebind in keybindings.json with the id after each action)", width)
    for title, rows in sections:
        # the key column is as wide as its widest list, up to a quarter of the line (longer lists
        # continue on the next line), and never narrower than its longest single key
        widest = max(len(", ".join(keys)) for keys, _, _ in rows)
        longest = max(len(key) for keys, _, _ in rows for key in keys)
        key_width = max(longest, min(widest, max(12, width // 4)))
        text_width = max(10, width - 2 - key_width - 2)
        lines += ["", title]
        for keys, text, pi_id in rows:
            text_lines = wrap(text, text_width)
            if pi_id and len(text_lines[-1]) + 2 + len(pi_id) <= text_width:
                text_lines[-1] += f"  {pi_id}"  # the id after the description, where it fits
            elif pi_id:
                text_lines += wrap(pi_id, text_width)
            lines += hanging_row(pack(keys, key_width), key_width, text_lines)
    return "\n".join(lines)
