"""Which extension draws which custom message and which tool card: the registry, without a UI.

Extensions register their renderers here when they load (:mod:`pi_tui.extensions`), and the
chat's drawing code (:mod:`pi_tui.tui.render`) looks them up when it draws an item; keeping the
registry out of the TUI package lets extensions load in every mode (print, rpc, the server)
without importing the terminal UI. A renderer is whatever the front end calls: the TUI passes
its chat item and the ``expanded`` switch and expects Textual ``Content`` (or a string) back,
and guards every call, since an extension's bug must not take the chat down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "CustomRenderer",
    "ToolCallRenderer",
    "ToolResultRenderer",
    "custom_renderer",
    "register_custom_renderer",
    "register_tool_renderer",
    "tool_renderers",
    "unregister_custom_renderer",
    "unregister_tool_renderer",
]

CustomRenderer = Callable[[Any, bool], Any]
"""``(custom message item, expanded) -> what to draw`` for one ``customType``."""
ToolCallRenderer = Callable[[dict[str, Any], bool], Any]
"""``(tool arguments, expanded) -> the card's title line``."""
ToolResultRenderer = Callable[[Any, bool], Any]
"""``(tool item, expanded) -> the card's body``."""

_custom_renderers: dict[str, CustomRenderer] = {}
_tool_renderers: dict[str, tuple[ToolCallRenderer | None, ToolResultRenderer | None]] = {}


def register_custom_renderer(custom_type: str, renderer: CustomRenderer) -> None:
    """Let an extension draw its own ``customType`` (the panel frame stays the front end's)."""
    _custom_renderers[custom_type] = renderer


def unregister_custom_renderer(custom_type: str) -> None:
    """Forget the renderer of ``custom_type`` (its extension was unloaded); unknown types are fine."""
    _custom_renderers.pop(custom_type, None)


def custom_renderer(custom_type: str) -> CustomRenderer | None:
    """The renderer registered for ``custom_type``, if any."""
    return _custom_renderers.get(custom_type)


def register_tool_renderer(
    name: str, render_call: ToolCallRenderer | None, render_result: ToolResultRenderer | None
) -> None:
    """Let an extension draw its tool's card: the title line from the arguments, the body from
    the result (the card's frame, label and colours stay the front end's)."""
    _tool_renderers[name] = (render_call, render_result)


def unregister_tool_renderer(name: str) -> None:
    """Forget the renderers of the tool ``name``; unknown names are fine."""
    _tool_renderers.pop(name, None)


def tool_renderers(name: str) -> tuple[ToolCallRenderer | None, ToolResultRenderer | None]:
    """The ``(render_call, render_result)`` pair of the tool ``name``, either of them None."""
    return _tool_renderers.get(name, (None, None))
