"""The commands a client posts to one session: rpc mode's, answered with an HTTP status.

The handlers are rpc mode's own (:class:`~pi_tui.modes.rpc_mode.RpcServer`), so ``prompt``,
``steer``, ``abort``, ``compact``, ``bash``... mean exactly what they mean there and in the TUI.
What the server adds:

- every outcome is a ``(status, record)`` pair, the record being rpc mode's ``response``
  object; the status says what kind of failure it was (400 a bad command, 409 the session is
  busy or read-only, 502 the model request behind it failed, 500 our bug);
- ``set_label`` (``navigate_tree``, ``undo_file_restore`` and ``get_file_changes`` are rpc
  mode's own, :mod:`pi_tui.modes.rpc_commands_tree`, inherited here);
- the commands that would swap this agent's session file (``new_session``,
  ``switch_session``, ``fork``) are resources here (``POST /sessions``, ``.../fork``), because a
  server session's id must keep naming one file;
- a session another process writes is read-only: only the reading commands run.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import Any

from pi_tui.modes.rpc_mode import RpcServer
from pi_tui.modes.rpc_protocol import (
    NO_DATA,
    CommandError,
    Deferred,
    Output,
    response_record,
)
from pi_tui.startup import Started

Outcome = tuple[int, dict[str, Any]]

READING_COMMANDS = frozenset(
    {
        "get_state",
        "get_commands",
        "get_messages",
        "get_available_models",
        "get_fork_messages",
        "get_session_stats",
        "get_last_assistant_text",
        "get_entries",
        "get_tree",
        "get_available_thinking_levels",
        "get_file_changes",
    }
)
ALIASES = {"label": "set_label", "name": "set_session_name", "set_name": "set_session_name"}
ELSEWHERE = {
    "new_session": "POST /sessions",
    "switch_session": 'POST /sessions with {"path": ...}',
    "fork": "POST /sessions/{id}/fork",
    "clone": "POST /sessions/{id}/clone",
}
BACKGROUND = frozenset({"compact", "bash", "navigate_tree"})
"""Commands that may take long: they run beside the queue, so ``abort`` can reach them."""


class SessionCommands(RpcServer):
    """rpc mode's command set for one server session (see the module docstring)."""

    def __init__(self, started: Started, output: Output, read_only_reason: str | None = None) -> None:
        super().__init__(started, output)
        self.read_only_reason = read_only_reason
        for name in ELSEWHERE:
            self._handlers.pop(name, None)
        self._handlers["set_label"] = (self.cmd_set_label, False)

    # --- running one command ----------------------------------------------------------------

    def check(self, command: Any) -> Outcome | None:
        """An immediate refusal for a command that cannot run here at all, else None."""
        if not isinstance(command, dict):
            return 400, response_record("unknown", None, error='A command is a JSON object with a "type"')
        name = command.get("type")
        request_id = command.get("id")
        if not isinstance(name, str) or not name:
            return 400, response_record("unknown", request_id, error='Command has no "type" field')
        name = ALIASES.get(name, name)
        if name in ELSEWHERE:
            return 400, response_record(
                name, request_id, error=f"{name} is a resource here: use {ELSEWHERE[name]}"
            )
        if name != "extension_ui_response" and name not in self._handlers:
            return 400, response_record(name, request_id, error=f"Unknown command: {name}")
        if self.read_only_reason is not None and name not in READING_COMMANDS:
            return 409, response_record(
                name, request_id, error=f"This session is read-only here: {self.read_only_reason}"
            )
        return None

    def runs_beside_queue(self, command: dict[str, Any]) -> bool:
        return ALIASES.get(command["type"], command["type"]) in BACKGROUND

    async def execute(self, command: dict[str, Any]) -> Outcome | Deferred:
        """Run one checked command. A failure, even a bug, is an outcome (it costs one command,
        never the session); only cancellation propagates. A :class:`Deferred` holds an outcome
        that comes later (see :meth:`_outcome`)."""
        name = ALIASES.get(command["type"], command["type"])
        request_id = command.get("id")
        if name == "extension_ui_response":
            answered = self.extension_ui is not None and self.extension_ui.answer(command)
            if answered:
                return 200, response_record(name, request_id, data=NO_DATA)
            return 404, response_record(name, request_id, error=f"No open dialog has the id {request_id!r}")
        handler, _background = self._handlers[name]
        try:
            data = await handler(command)
            if isinstance(data, Deferred):
                # A prompt's disposition, known once the agent has decided (after an extension
                # command has run): answered later, so the queue goes on meanwhile.
                return Deferred(self._outcome(name, request_id, data.answer))
        except Exception as error:
            return _failed(name, request_id, error)
        return 200, response_record(name, request_id, data=data)

    async def _outcome(self, name: str, request_id: Any, answer: Any) -> Outcome:
        """The outcome of a command whose answer is awaited after it was started."""
        try:
            data = await answer
        except Exception as error:
            return _failed(name, request_id, error)
        return 200, response_record(name, request_id, data=data)

    def respond(
        self, command: str, request_id: Any, *, data: Any = NO_DATA, error: str | None = None
    ) -> None:
        """Unused here: outcomes are returned, not written (kept so rpc code paths stay safe)."""

    # --- state ------------------------------------------------------------------------------

    @property
    def prompt_task(self) -> asyncio.Task[Any] | None:
        """The accepted prompt's run, if one is going."""
        return self._prompt_task

    @property
    def compacting(self) -> bool:
        return self._compacting

    def abort_all(self) -> None:
        """What ``abort`` stops, for the session closing."""
        self._abort_all()

    # --- the tree ---------------------------------------------------------------------------

    async def cmd_set_label(self, command: dict[str, Any]) -> Any:
        """``{"type": "set_label", "entryId": ..., "label": "text"}``; null or "" removes it."""
        entry_id = command.get("entryId")
        label = command.get("label")
        if not isinstance(entry_id, str) or not entry_id:
            raise CommandError('set_label needs an "entryId"')
        if label is not None and not isinstance(label, str):
            raise CommandError('"label" must be a string or null')
        manager = self.agent.manager
        if manager.get_entry(entry_id) is None:
            raise CommandError(f"Entry {entry_id} not found")
        text = (label or "").strip() or None
        manager.append_label_change(entry_id, text)
        manager.sync()
        self.session_changed("label", {"entryId": entry_id, "label": text})
        return NO_DATA

    async def cmd_set_session_name(self, command: dict[str, Any]) -> Any:
        data = await super().cmd_set_session_name(command)
        self.session_changed("name", {"name": self.agent.manager.get_session_name()})
        return data

    async def cmd_compact(self, command: dict[str, Any]) -> Any:
        data = await super().cmd_compact(command)
        self.session_changed("tree", {"leafId": self.agent.manager.get_leaf_id()})
        return data


def _failed(name: str, request_id: Any, error: Exception) -> Outcome:
    """A command that raised: the user's mistake as its status, a bug as 500 with the
    traceback on stderr (it costs one command, never the session)."""
    if isinstance(error, CommandError):
        return error.status, response_record(name, request_id, error=str(error))
    print(f"pi-tui serve: {name} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
    return 500, response_record(name, request_id, error=f"{name} failed: {type(error).__name__}: {error}")
