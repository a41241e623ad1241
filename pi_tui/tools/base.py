"""What a tool is: a name, a JSON-schema of arguments, and an async ``execute``.

The agent calls ``execute`` inside its own task; abort (Escape, RPC ``abort``) cancels that task,
so a tool stops by letting ``asyncio.CancelledError`` through (after killing any child process
it started). Expected failures raise :class:`ToolError` with a message for the model; the agent
turns it into a result with ``isError: true``. Long-running tools report progress through
``ctx.on_update`` (e.g. bash output as it arrives).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pi_tui.messages import ImageContent, TextContent


class ToolError(Exception):
    """An expected failure (missing file, no match, non-zero exit): the message goes to the model.

    ``details`` is kept on the tool result (pi writes ``details: {}`` on errors).
    """

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


@dataclass(slots=True)
class ToolResult:
    content: list[TextContent | ImageContent]
    details: Any = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: Any = None) -> ToolResult:
        return cls([TextContent(text=text)], details)


UpdateCallback = Callable[[ToolResult], None]


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    """Relative paths in arguments resolve against this folder."""
    on_update: UpdateCallback = field(default=lambda _result: None)
    """Partial results while running (shown live; not saved)."""
    env: dict[str, str] | None = None
    """Extra environment for processes the tool starts."""
    shell_path: str | None = None
    """The shell for commands (``shellPath`` in settings.json); None: bash, as :func:`user_shell`."""
    command_prefix: str | None = None
    """A line run before every command (``shellCommandPrefix``), e.g. ``shopt -s expand_aliases``."""


class AgentTool(Protocol):
    name: str
    label: str
    """Short human name for UIs ("Read", "Bash")."""
    description: str
    """What the model is told the tool does."""
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class WrappedTool:
    """A tool under another tool's name, label, description and arguments: for wrappers that
    change where or whether the work is done (an editor's files, a question first), never what
    the model is told."""

    def __init__(self, inner: AgentTool) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = inner.label
        self.description = inner.description
        self.parameters = inner.parameters
