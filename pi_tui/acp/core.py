"""The ACP methods that work on sessions, behind :class:`~pi_tui.acp.agent.PiAcpAgent`.

Each ``session/new`` or ``session/load`` makes an :class:`~pi_tui.acp.session.AcpSession` the
way ``pi-tui serve`` makes its sessions: :func:`pi_tui.startup.start` with the command line's
options and the session's folder (its project trust decides what of the folder loads: an
editor cannot answer the TUI's trust question, so an undecided folder loads nothing of its own,
unless ``pi-tui acp --approve``). The session id is the pi session id, so ``session/load`` and
``session/list`` work across restarts and with pi's own sessions.

This module (and everything a session needs: the agent loop, tools, providers) is imported
after ``initialize`` has been answered, so an editor's first question is answered before the
bulk of pi-tui is loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionInfo,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from pi_tui.acp.client_mcp import ClientMcpError, client_servers
from pi_tui.acp.errors import user_error
from pi_tui.acp.options import OptionError, set_option
from pi_tui.acp.prompt_input import PromptInputError, prompt_parts
from pi_tui.acp.session import AcpSession, PromptFailed
from pi_tui.acp.slash import EXTENSION_METHODS, available_commands, run_slash
from pi_tui.acp.updates import message_chunk
from pi_tui.ai.http import shared_client
from pi_tui.modes.rpc_protocol import CommandError
from pi_tui.session import SessionError, SessionManager
from pi_tui.session.errors import SessionLockedError
from pi_tui.start_options import StartOptions

PAGE = 50
"""Sessions per ``session/list`` page."""


class AcpCore:
    """The sessions of one ``pi-tui acp`` process and the methods on them."""

    def __init__(self, options: StartOptions, start_mode: str, conn: Any, client_capabilities: Any) -> None:
        self.options = options
        self.start_mode = start_mode
        self.conn = conn
        self.client_capabilities = client_capabilities
        self.sessions: dict[str, AcpSession] = {}
        self._opening = asyncio.Lock()

    # --- sessions -------------------------------------------------------------------------

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        folder = _folder(cwd)
        servers = _servers(mcp_servers)
        from pi_tui.config.session_dir import chosen_session_dir

        try:
            manager = SessionManager.create(
                str(folder), chosen_session_dir(str(folder), self.options.session_dir)
            )
            manager.check_writable()
        except SessionError as error:
            raise user_error(str(error)) from None
        session = await self._open(manager, servers)
        response = NewSessionResponse.model_validate(
            {"sessionId": session.id, "modes": session.modes(), "configOptions": session.options()}
        )
        _after_opening(session)
        return response

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        servers = _servers(mcp_servers)
        live = self.sessions.get(session_id)
        if live is None:
            path = await _find(session_id)
            other = next(
                (s for s in self.sessions.values() if _same_file(s.agent.manager.session_file, path)), None
            )
            if other is not None:  # updates name the session by the id it was opened with
                raise user_error(f"Session {session_id} is open here as {other.id}; load it by that id")
        if live is not None:  # loaded again: the history again, the same session
            session = live
        else:
            try:
                manager = await asyncio.to_thread(SessionManager.open, path)
            except SessionLockedError as error:
                holder = f"pi-tui process {error.pid}" if error.pid else "another pi-tui process"
                raise user_error(f"Session {session_id} is open in {holder}; close it there first") from None
            except (SessionError, OSError) as error:
                raise user_error(f"Cannot open session {session_id}: {error}") from None
            session = await self._open(manager, servers, key=session_id, cwd=cwd)
        for update in session.history():
            session.post(update)
        await session.flush()  # the history is drawn before the answer
        _after_opening(session)
        return LoadSessionResponse.model_validate(
            {"modes": session.modes(), "configOptions": session.options()}
        )

    async def _open(
        self, manager: SessionManager, servers: list[Any], key: str | None = None, cwd: str | None = None
    ) -> AcpSession:
        """A live session on ``manager``; its tools work in ``cwd`` (the folder the editor
        has open) when that is a folder, else in the session's own folder."""
        from pi_tui.mcp.attach import ensure_manager
        from pi_tui.startup import StartupError, start

        if cwd is None or not os.path.isabs(cwd) or not os.path.isdir(cwd):
            cwd = manager.cwd if os.path.isdir(manager.cwd) else os.getcwd()
        options = dataclasses.replace(
            self.options, cwd=cwd, session=None, fork=None, continue_recent=False, no_session=False
        )
        async with self._opening:
            try:
                started = start(options, manager)
            except StartupError as error:
                manager.close()
                raise user_error(str(error)) from None
            session = AcpSession(key or manager.session_id, started, self.conn, self.client_capabilities)
            if servers:
                mcp = ensure_manager(started.agent, cwd)
                if mcp is None:
                    print("pi-tui acp: the editor's MCP servers are not started: --no-mcp", file=sys.stderr)
                else:
                    for server in servers:
                        mcp.register(server)
                    session.watch_client_servers(mcp, [server.name for server in servers])
            self.sessions[session.id] = session
        await session.start()
        if self.start_mode != "code":
            set_option(session.agent, started.registry, session.choices, "mode", self.start_mode)
        return session

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        from pi_tui.session.listing import list_all_sessions

        infos = await asyncio.to_thread(list_all_sessions)
        if cwd:
            wanted = os.path.realpath(cwd)
            infos = [info for info in infos if os.path.realpath(info.cwd) == wanted]
        infos = [info for info in infos if info.agent is None]  # pi sessions; not other agents' transcripts
        if cursor is not None and not cursor.isdigit():
            raise user_error(f"Unknown cursor {cursor!r}: pass the nextCursor of the previous page")
        start = int(cursor) if cursor else 0
        page = infos[start : start + PAGE]
        sessions = [
            SessionInfo(
                session_id=info.id,
                cwd=info.cwd,
                title=info.name or (info.first_message[:80] if info.first_message else None),
                updated_at=info.modified.isoformat(),
            )
            for info in page
        ]
        more = start + PAGE < len(infos)
        return ListSessionsResponse(sessions=sessions, next_cursor=str(start + PAGE) if more else None)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise user_error(
                f"No open session {session_id}; create one (session/new) or load it (session/load)"
            )
        return session

    # --- choices --------------------------------------------------------------------------

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        try:
            set_option(session.agent, session.started.registry, session.choices, "mode", mode_id)
        except OptionError as error:
            raise user_error(str(error)) from None
        session.post({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
        session.post_options()
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if session.busy and config_id == "mode":
            raise user_error("Wait for the reply to finish (or cancel it) before changing the mode")
        try:
            set_option(session.agent, session.started.registry, session.choices, config_id, value)
        except OptionError as error:
            raise user_error(str(error)) from None
        if config_id == "mode":
            session.post({"sessionUpdate": "current_mode_update", "currentModeId": session.choices.mode})
        return SetSessionConfigOptionResponse.model_validate({"configOptions": session.options()})

    # --- prompts --------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        try:
            text, images = prompt_parts(prompt)
        except PromptInputError as error:
            raise user_error(str(error)) from None
        if not text.strip() and not images:
            raise user_error("The prompt is empty")
        if images and "image" not in session.agent.model.input:
            session.post(
                message_chunk(f"pi-tui: {session.agent.model.id} does not take images; they are left out.\n")
            )
        async with session.turn() as ours:
            if not ours:
                return PromptResponse(stop_reason="cancelled")
            if not images and await run_slash(session, text.strip()):
                await session.flush()
                return PromptResponse(stop_reason="end_turn")
            try:
                reason = await session.run_prompt(text, images)
            except PromptFailed as error:
                raise RequestError(-32603, str(error)) from None
        return PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    def cancel(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        handler = EXTENSION_METHODS.get(method)
        if handler is None:
            raise RequestError.method_not_found(f"_{method}")
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise user_error(f'_{method} needs a "sessionId"')
        session = self._session(session_id)
        try:
            return await handler(session, params)
        except CommandError as error:
            raise user_error(str(error)) from None

    def cancel_all(self) -> None:
        for session in self.sessions.values():
            session.cancel()

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await session.close()
        self.sessions.clear()


def _after_opening(session: AcpSession) -> None:
    """Sent after the answer (the client knows the session by then): the commands, and what
    the user should know about how the session started (a project folder whose extensions and
    settings did not load because it is not trusted, a model that was not found)."""
    commands = available_commands(session)
    session.post({"sessionUpdate": "available_commands_update", "availableCommands": commands})
    # The HTTP client (TLS context, HTTP/2) is made while the user types the first prompt,
    # not after they send it (it took ~130 ms of the first prompt's wait).
    asyncio.get_running_loop().call_later(0.05, shared_client)
    notice = session.started.notice
    if notice:
        print(f"pi-tui acp: {notice}", file=sys.stderr, flush=True)
        session.post(message_chunk(f"pi-tui: {notice}\n"))
        session.started.notice = None  # said once, not again when the session is loaded again


def _same_file(one: Path | None, other: Path) -> bool:
    return one is not None and Path(one).resolve() == other.resolve()


def _folder(cwd: str) -> Path:
    folder = Path(cwd).expanduser()
    if not folder.is_absolute():
        raise user_error(f"cwd must be an absolute path (got {cwd!r})")
    if not folder.is_dir():
        raise user_error(f"No such folder: {cwd}")
    return folder.resolve()


def _servers(mcp_servers: list[Any] | None) -> list[Any]:
    try:
        return client_servers(mcp_servers)
    except ClientMcpError as error:
        raise user_error(str(error)) from None


async def _find(session_id: str) -> Path:
    """The file of the session with this id (or an id prefix naming one), in any folder."""
    from pi_tui.session.listing import SessionLookupError, list_all_sessions, path_of_session

    infos = await asyncio.to_thread(list_all_sessions)
    try:
        return path_of_session(infos, session_id)
    except SessionLookupError as error:
        raise user_error(str(error)) from None
