"""Which key does what in the app: binding the chat's keys from keybindings.json, binding
extensions' shortcuts beside them, translating keys on picker screens, and the chat actions
that are a single call (scrolling, a slash command).

Pure functions over Textual's binding table and the loaded key bindings; the app calls them and
keeps only the actions that need its state (``PiApp._key_<action>``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.binding import BindingsMap

from pi_tui.tui.keybindings import ACTIONS, KeyBindingsLoad, key_variants
from pi_tui.tui.widgets.chat import ChatView

SCREEN_KEY_SCOPES: dict[str, tuple[str, ...]] = {
    "TreeScreen": ("tree", "select"),
    "ResumePicker": ("sessions", "select"),
    "ScopedModelsScreen": ("models", "select"),
    "ThinkingPicker": ("thinking", "select"),
    "ModelPicker": ("models", "select"),
}
"""Which key-binding scopes a picker screen answers to (any other pushed screen: "select")."""

SLASH_KEYS: dict[str, str] = {"new_session": "new", "open_tree": "tree", "fork": "fork", "resume": "resume"}
"""Chat actions that run a slash command (with no arguments)."""

CHAT_MOVES: dict[str, Callable[[ChatView], object]] = {
    "page_up": ChatView.page_up,
    "page_down": ChatView.page_down,
    "half_page_up": ChatView.half_page_up,
    "half_page_down": ChatView.half_page_down,
    "line_up": lambda chat: chat.scroll_lines(-1),
    "line_down": lambda chat: chat.scroll_lines(1),
    "previous_prompt": lambda chat: chat.jump_to_prompt(-1),
    "next_prompt": lambda chat: chat.jump_to_prompt(1),
    "chat_top": ChatView.to_top,
    "chat_bottom": ChatView.to_bottom,
}
"""Chat actions that move through the chat."""

APP_ACTIONS: dict[str, str] = {
    "clear": "clear_or_exit",
    "command_palette": "command_palette",
    "model_picker": "model_picker",
    "cycle_thinking": "cycle_thinking",
    "expand": "toggle_expanded",
    "toggle_thinking": "toggle_thinking",
}
"""Chat actions that are one of the app's ``action_*`` methods (also reachable from the palette)."""

MODEL_STEPS: dict[str, int] = {"cycle_model_forward": 1, "cycle_model_backward": -1}
"""Ctrl+P and Shift+Ctrl+P: the step through the scoped models."""

DOUBLE_PRESS_SECONDS = 0.6
"""Two Escapes (or Ctrl+Cs, with twice the time) closer than this count as a double press."""


class DoublePress:
    """Two presses of a key closer than ``seconds`` (double Escape, double Ctrl+C)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last = 0.0

    def press(self, *, start_over: bool = True) -> bool:
        """True when this press is the second of a double press (after which, with
        ``start_over``, the next press is a first one again)."""
        now = time.monotonic()
        if now - self._last < self.seconds:
            if start_over:
                self._last = 0.0
            return True
        self._last = now
        return False

    def mark(self) -> None:
        """A press that did something by itself still counts as the first of a pair."""
        self._last = time.monotonic()


APP_KEY_PREFIX = "app_key("
EXTENSION_KEY_PREFIX = "extension_key("


def _drop_bound(table: BindingsMap, keys: list[str], prefix: str) -> None:
    """Forget the bindings whose action starts with ``prefix`` on ``keys``; others stay."""
    bindings = table.key_to_bindings
    for key in keys:
        kept = [binding for binding in bindings.get(key, []) if not binding.action.startswith(prefix)]
        if kept:
            bindings[key] = kept
        else:
            bindings.pop(key, None)


def bind_app_keys(table: BindingsMap, keys: KeyBindingsLoad) -> None:
    """Each key of the chat scope goes to ``action_app_key``, which runs the first of its
    actions that applies (Ctrl+C copies a mouse selection, else clears the editor). On /reload
    the keys bound before are dropped first."""
    _drop_bound(table, list(table.key_to_bindings), APP_KEY_PREFIX)
    chat_keys = {
        variant
        for action, spec in ACTIONS.items()
        if spec.scope == "app"
        for key in keys.bindings.get(action, ())
        for variant in key_variants(key)
    }
    for key in sorted(chat_keys):
        table.bind(key, f"{APP_KEY_PREFIX}{key!r})", show=False, priority=True)


def bind_extension_keys(
    table: BindingsMap, keys: list[str], previous: list[str]
) -> tuple[list[str], list[str]]:
    """Bind extensions' keys (dropping ``previous``); a key pi-tui uses stays pi-tui's.
    Returns the keys bound and the keys refused."""
    _drop_bound(table, previous, EXTENSION_KEY_PREFIX)
    bound: list[str] = []
    refused: list[str] = []
    for key in keys:
        if key in table.key_to_bindings:
            refused.append(key)
            continue
        table.bind(key, f"{EXTENSION_KEY_PREFIX}{key!r})", show=False, priority=True)
        bound.append(key)
    return bound, refused


def translated_key(screen_name: str, event: events.Key, keys: KeyBindingsLoad) -> events.Key:
    """A key pressed on a picker screen, as the key that screen listens for, so every pi key
    id works there as keybindings.json says (Ctrl+N for the named filter...)."""
    for scope in SCREEN_KEY_SCOPES.get(screen_name, ("select",)):
        actions = keys.action_for(event.key, scope)
        if actions:
            wanted = keys.default_key(actions[0])
            if wanted is None or wanted == event.key:
                return event
            character = wanted if len(wanted) == 1 else None
            return events.Key(wanted, character)
    if screen_name == "TreeScreen" and event.key in keys.keys_for("message_copy"):
        return events.Key("ctrl+x", None)  # pi 1.x: app.message.copy copies the selected entry
    return event
