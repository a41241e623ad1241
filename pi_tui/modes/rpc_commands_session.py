"""rpc mode's session statistics and user shell commands, in pi 1.x's shapes.

Registered by :class:`pi_tui.modes.rpc_mode.RpcServer` through :func:`session_handlers` (kept
apart so that module stays one readable size); the server mode inherits them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_tui.compaction.tokens import context_tokens
from pi_tui.modes.rpc_protocol import BusyError, CommandError, Handler, RpcHost


def session_handlers(server: RpcHost) -> dict[str, tuple[Handler, bool]]:
    """name -> (handler, runs as its own task), for :attr:`RpcServer._handlers`."""
    commands = SessionCommandsPi1(server)
    return {
        "get_session_stats": (commands.get_session_stats, False),
        "bash": (commands.bash, True),
    }


class SessionCommandsPi1:
    """The handlers, working on the server's current agent (it changes on new/switch/fork)."""

    def __init__(self, server: RpcHost) -> None:
        self.server = server

    async def get_session_stats(self, command: dict[str, Any]) -> Any:
        """pi's getSessionStats: counts and totals over every entry of the file (all branches,
        as pi counts them), the totals by the one rule of ``stats.add_raw_usage``."""
        from pi_tui.view.stats import session_usage

        manager = self.server.agent.manager
        raws = list(manager.iter_raw_entries())
        totals = session_usage(raws)
        tokens = {
            "input": totals.input,
            "output": totals.output,
            "cacheRead": totals.cache_read,
            "cacheWrite": totals.cache_write,
        }
        cost = totals.cost
        counts = {"user": 0, "assistant": 0, "toolCalls": 0, "toolResults": 0, "messages": 0}
        for raw in raws:
            message = raw.get("message") if raw.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            counts["messages"] += 1
            role = message.get("role")
            if role == "user":
                counts["user"] += 1
            elif role == "toolResult":
                counts["toolResults"] += 1
            elif role == "assistant":
                counts["assistant"] += 1
                content = message.get("content")
                if isinstance(content, list):
                    counts["toolCalls"] += sum(
                        isinstance(block, dict) and block.get("type") == "toolCall" for block in content
                    )
        messages = self.server.agent.messages
        stats: dict[str, Any] = {
            "sessionFile": str(manager.session_file) if manager.session_file else None,
            "sessionId": manager.session_id,
            "userMessages": counts["user"],
            "assistantMessages": counts["assistant"],
            "toolCalls": counts["toolCalls"],
            "toolResults": counts["toolResults"],
            "totalMessages": counts["messages"],
            "tokens": {**tokens, "total": sum(tokens.values())},
            "cost": cost,
        }
        window = self.server.agent.model.context_window
        if window:
            used = context_tokens(messages)
            stats["contextUsage"] = {
                "tokens": used,
                "contextWindow": window,
                "percent": round(used / window * 100, 2),
            }
        return stats

    async def bash(self, command: dict[str, Any]) -> Any:
        """Run a user shell command; its output streams as ``bash_execution_update`` (with the
        command's ``id``) and the answer is pi's result (output, exitCode, cancelled, truncated,
        fullOutputPath). ``excludeFromContext`` keeps it in the session but not in the model's
        context (``!!`` in the TUI)."""
        text = command.get("command")
        if not isinstance(text, str) or not text.strip():
            raise CommandError('bash needs a non-empty "command"')
        exclude = command.get("excludeFromContext", False)
        if not isinstance(exclude, bool):
            raise CommandError('"excludeFromContext" must be true or false')
        if self.server.busy:
            # Appending mid-run would wedge the record between a tool call and its result.
            raise BusyError("Cannot run bash while the agent is running; wait for it or abort")
        if self.server.bash_running:
            raise BusyError("A bash command is already running")
        self.server.bash_task = asyncio.current_task()
        request_id = command.get("id")

        def chunk(delta: str) -> None:
            update: dict[str, Any] = {"type": "bash_execution_update", "delta": delta}
            if request_id is not None:
                update["id"] = request_id
            self.server.output.send(update)

        try:
            message = await self.server.agent.run_bash(text, exclude_from_context=exclude, on_chunk=chunk)
        finally:
            self.server.bash_task = None
        result = {
            "output": message.output,
            "exitCode": message.exit_code,
            "cancelled": message.cancelled,
            "truncated": message.truncated,
        }
        if message.full_output_path:
            result["fullOutputPath"] = message.full_output_path
        return result
