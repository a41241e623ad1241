"""Python extensions: the names an extension may import for its type hints.

    from pi_tui.extensions import ExtensionAPI, ExtensionContext

    def activate(pi: ExtensionAPI) -> None: ...

See ``docs/extensions.md`` for the reference.
"""

from pi_tui.extensions.api import ExtensionAPI, ExtensionError
from pi_tui.extensions.context import CommandContext, ExtensionContext, ToolCallContext
from pi_tui.extensions.events import ExtensionEvent

__all__ = [
    "CommandContext",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionError",
    "ExtensionEvent",
    "ToolCallContext",
]
