"""pi-tui's file and shell tools, working through the editor when the ACP client offers it.

An editor that declares ``fs.readTextFile`` knows files the disk does not: a buffer with unsaved
changes. One that declares ``fs.writeTextFile`` wants the agent's writes to go through it, so
they land in the open buffer, undoable, instead of behind its back. One that declares
``terminal`` shows commands in its own terminal panel, live. These wrappers keep each tool's
name, description, arguments and result text (the model cannot tell the difference, and the
session file reads the same in pi) and only change where bytes come from and go to:

- ``read``: the client's text (its buffer), numbered and cut like a file read; images and
  binary files, which the client's text call cannot carry, are read from disk;
- ``write`` / ``edit``: the new text is written through the client; ``edit`` applies the edits
  to the client's text, so an unsaved buffer is what gets edited;
- ``bash``: ``terminal/create`` with the user's shell, the terminal shown in the tool call
  while it runs, the output taken once it exits; cancelled by the user, it is killed.

A client call that fails (the editor refuses a path outside its project, say) falls back to
pi-tui's own tool for reads, and is an error the model sees for writes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.acp.updates import FileTexts
from pi_tui.tools.arguments import parse_arguments
from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult, WrappedTool
from pi_tui.tools.bash import BashArguments, OutputBuffer, format_output, user_shell
from pi_tui.tools.common import resolve_path
from pi_tui.tools.edit import EditArguments, edit_text, parse_edits
from pi_tui.tools.read import ReadArguments, image_mime_type, text_read_result
from pi_tui.tools.write import WriteArguments

CLIENT_CLEANUP_SECONDS = 2.0
TERMINAL_OUTPUT_LIMIT = 1024 * 1024
"""Bytes of a command's output the client keeps (it drops the start beyond this)."""


@dataclass(slots=True)
class ClientAccess:
    """What the client offered, and the means to reach it for one session."""

    conn: Any
    session_id: str
    read: bool
    write: bool
    terminal: bool
    files: FileTexts
    show_terminal: Callable[[str, str], None]
    """(call id, terminal id): the session tells the client the call runs in that terminal."""

    @classmethod
    def from_capabilities(
        cls,
        conn: Any,
        session_id: str,
        capabilities: Any,
        files: FileTexts,
        show_terminal: Callable[[str, str], None],
    ) -> ClientAccess:
        fs = getattr(capabilities, "fs", None)
        return cls(
            conn,
            session_id,
            read=bool(getattr(fs, "read_text_file", False)),
            write=bool(getattr(fs, "write_text_file", False)),
            terminal=bool(getattr(capabilities, "terminal", False)),
            files=files,
            show_terminal=show_terminal,
        )

    @property
    def any(self) -> bool:
        return self.read or self.write or self.terminal

    async def read_text(self, path: Path) -> str:
        answer = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        return str(answer.content)

    async def write_text(self, path: Path, text: str) -> None:
        await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)


def _looks_binary(path: Path) -> bool:
    """Whether the file on disk is an image or binary (the client's text call cannot carry it)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    return image_mime_type(head[:16]) is not None or b"\0" in head


def _client_error(action: str, raw: str, error: BaseException) -> ToolError:
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    return ToolError(f"The editor could not {action} {raw}: {message}")


class _Wrapped(WrappedTool):
    def __init__(self, inner: AgentTool, access: ClientAccess) -> None:
        super().__init__(inner)
        self.access = access


class ClientRead(_Wrapped):
    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(ReadArguments, self.name, args)
        path = resolve_path(arguments.path, ctx.cwd)
        if path.is_dir() or await asyncio.to_thread(_looks_binary, path):
            return await self.inner.execute(call_id, args, ctx)
        try:
            text = await self.access.read_text(path)
        except asyncio.CancelledError:
            raise
        except Exception:
            return await self.inner.execute(call_id, args, ctx)  # the disk may still have it
        return text_read_result(text, arguments.path, arguments.offset, arguments.limit)


class ClientWrite(_Wrapped):
    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(WriteArguments, self.name, args)
        path = resolve_path(arguments.path, ctx.cwd)
        if path.is_dir():
            raise ToolError(f"{arguments.path} is a directory; give the path of a file to write.")
        self.access.files.after[call_id] = arguments.content
        try:
            await self.access.write_text(path, arguments.content)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise _client_error("write", arguments.path, error) from None
        size = len(arguments.content.encode("utf-8", "surrogateescape"))
        return ToolResult.text(f"Wrote {size} bytes to {arguments.path}")


class ClientEdit(_Wrapped):
    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = parse_arguments(EditArguments, self.name, args).path
        replacements = parse_edits(args)
        path = resolve_path(raw, ctx.cwd)
        if not self.access.read and not path.is_file():
            raise ToolError(f"File not found: {raw}. Use write to create a new file.")
        try:
            text = (
                await self.access.read_text(path)
                if self.access.read
                else path.read_text("utf-8", "surrogateescape")
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise _client_error("read", raw, error) from None
        new_text, result = edit_text(text, raw, replacements)
        self.access.files.before[call_id] = (str(path), text)
        self.access.files.after[call_id] = new_text
        try:
            await self.access.write_text(path, new_text)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise _client_error("write", raw, error) from None
        return result


class ClientBash(_Wrapped):
    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(BashArguments, self.name, args)
        timeout = arguments.timeout if arguments.timeout is not None and arguments.timeout > 0 else None
        command = arguments.command
        if ctx.command_prefix:
            command = f"{ctx.command_prefix}\n{command}"
        shell = ctx.shell_path or user_shell()
        env = [{"name": key, "value": value} for key, value in (ctx.env or {}).items()]
        conn, session_id = self.access.conn, self.access.session_id
        try:
            created = await conn.create_terminal(
                session_id=session_id,
                command=shell,
                args=["-c", command],
                env=env or None,
                cwd=str(ctx.cwd),
                output_byte_limit=TERMINAL_OUTPUT_LIMIT,
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            return await self.inner.execute(call_id, args, ctx)  # the editor would not run it
        terminal = created.terminal_id
        self.access.show_terminal(call_id, terminal)
        timed_out = False
        try:
            waiting = conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)
            try:
                exited = await asyncio.wait_for(waiting, timeout)
            except TimeoutError:
                timed_out = True
                await conn.kill_terminal(session_id=session_id, terminal_id=terminal)
                exited = None
            output = await conn.terminal_output(session_id=session_id, terminal_id=terminal)
        except asyncio.CancelledError:
            await _within(conn.kill_terminal(session_id=session_id, terminal_id=terminal))
            raise
        finally:
            await _within(conn.release_terminal(session_id=session_id, terminal_id=terminal))
        buffer = OutputBuffer()
        buffer.add(str(output.output).encode("utf-8", "surrogateescape"))
        text, details = format_output(buffer)
        buffer.finish(keep_file=True)  # a cut output names its full file for the model
        if timed_out:
            raise ToolError(
                f"{text}\n\nCommand timed out after {timeout:g} seconds and was stopped.", details
            )
        status = getattr(output, "exit_status", None) or exited
        code = getattr(status, "exit_code", None)
        signal = getattr(status, "signal", None)
        if signal:
            raise ToolError(f"{text}\n\nCommand was killed by {signal}.", details)
        if code:
            raise ToolError(f"{text}\n\nCommand exited with code {code}", details)
        return ToolResult.text(text, details)


async def _within(call: Awaitable[Any], seconds: float = CLIENT_CLEANUP_SECONDS) -> None:
    """Ask the client to kill or release a terminal, not waiting past ``seconds`` (a client that
    went away never answers) and not stopped by the cancel that asked for it."""
    task = asyncio.ensure_future(call)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen, not logged
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), seconds)


def client_tools(tools: list[AgentTool], access: ClientAccess) -> list[AgentTool]:
    """``tools`` with read, write, edit and bash going through the client where it offered so."""
    out: list[AgentTool] = []
    for tool in tools:
        if tool.name == "read" and access.read:
            out.append(ClientRead(tool, access))
        elif tool.name == "write" and access.write:
            out.append(ClientWrite(tool, access))
        elif tool.name == "edit" and access.write:
            out.append(ClientEdit(tool, access))
        elif tool.name == "bash" and access.terminal:
            out.append(ClientBash(tool, access))
        else:
            out.append(tool)
    return out
