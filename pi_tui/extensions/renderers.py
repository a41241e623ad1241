"""Extensions drawing in the chat: custom-message panels and tool cards, adapted to how the chat
calls renderers, with failures reported once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_tui.extensions.events import ExtensionEvent
from pi_tui.extensions.tool import RegisteredTool, positional_count

if TYPE_CHECKING:
    from textual.content import Content

    from pi_tui.extensions.base import Runner


def register_tool_renderers(runner: Runner, tool: RegisteredTool) -> None:
    """An extension tool's ``render_call(args, expanded)`` and ``render_result(result,
    expanded)`` as the chat's tool cards call them; a failure is reported once."""
    from pi_tui.extensions.events import Record
    from pi_tui.view.renderers import register_tool_renderer

    def guarded(function: Callable[..., Any], where: str) -> Callable[..., Any]:
        takes_expanded = positional_count(function) >= 2

        def call(value: Any, expanded: bool) -> Any:
            try:
                return function(value, expanded) if takes_expanded else function(value)
            except Exception as error:
                runner.failed(tool.extension, f"{where} of the tool {tool.name}", error)
                raise

        return call

    render_call = guarded(tool.render_call, "render_call") if tool.render_call else None
    render_result = None
    if tool.render_result is not None:
        drawn = guarded(tool.render_result, "render_result")

        def render_result(item: Any, expanded: bool) -> Any:
            view = Record(text=item.output, details=item.details, is_error=item.status == "error")
            return drawn(view, expanded)

    register_tool_renderer(tool.name, render_call, render_result)


def unregister_tool_renderers(name: str) -> None:
    from pi_tui.view.renderers import unregister_tool_renderer

    unregister_tool_renderer(name)


def renderer_adapter(runner: Runner, extension: str, renderer: Callable[..., Any]) -> Callable[..., Any]:
    """An extension's renderer as the chat calls it: given the custom message's fields, it may
    return a string or Textual content; a failure is reported once and shown in the panel."""
    from textual.content import Content

    def render(item: Any, expanded: bool) -> Content:
        message = ExtensionEvent(
            "custom_message", custom_type=item.custom_type, content=item.text, details=item.details
        )
        try:
            value = renderer(message, expanded)
        except Exception as error:
            runner.failed(extension, f"the renderer of {item.custom_type}", error)
            raise
        if isinstance(value, Content):
            return value
        return Content(str(value))

    return render
