"""The rpc commands pi 1.x added: session entries and tree, the queue, thinking levels, retries,
clone and the HTML page.

They live beside :mod:`pi_tui.modes.rpc_mode` (which registers them through
:func:`pi1_handlers`) so that module stays one readable size; the server mode inherits them with
the rest of rpc mode's commands. Answers use pi 1.5.2's field names (docs/rpc.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pi_tui import jsonio
from pi_tui.ai.thinking import supported_levels
from pi_tui.modes.rpc_protocol import NO_DATA, CommandError, Handler, RpcHost

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager
    from pi_tui.session.tree import TreeNode


def pi1_handlers(server: RpcHost) -> dict[str, tuple[Handler, bool]]:
    """name -> (handler, runs as its own task), for :attr:`RpcServer._handlers`."""
    commands = Pi1Commands(server)
    return {
        "get_entries": (commands.get_entries, False),
        "get_tree": (commands.get_tree, False),
        "clear_queue": (commands.clear_queue, False),
        "get_available_thinking_levels": (commands.get_available_thinking_levels, False),
        "set_auto_retry": (commands.set_auto_retry, False),
        "abort_retry": (commands.abort_retry, False),
        "clone": (commands.clone, False),
        "export_html": (commands.export_html, True),
    }


class Pi1Commands:
    """The handlers, working on the server's current agent (it changes on new/switch/fork)."""

    def __init__(self, server: RpcHost) -> None:
        self.server = server

    async def get_entries(self, command: dict[str, Any]) -> Any:
        """Every entry in file order (header left out), or those after ``since``: an entry id
        is a cursor that survives restarts, because entries are only ever appended."""
        manager = self.server.agent.manager
        raws = list(manager.iter_raw_entries())
        since = command.get("since")
        if since is not None:
            if not isinstance(since, str):
                raise CommandError('"since" must be an entry id')
            position = next((i for i, raw in enumerate(raws) if raw.get("id") == since), None)
            if position is None:
                raise CommandError(f"Entry not found: {since}")
            raws = raws[position + 1 :]
        return {"entries": _raw_list(raws), "leafId": manager.get_leaf_id()}

    async def get_tree(self, command: dict[str, Any]) -> Any:
        """The entries as a forest of ``{entry, children, label?, labelTimestamp?}``."""
        manager = self.server.agent.manager
        return {"tree": tree_fragment(manager), "leafId": manager.get_leaf_id()}

    async def clear_queue(self, command: dict[str, Any]) -> Any:
        """Take back the queued steering and follow-up texts (a client puts them back into its
        editor before an abort, as pi's Esc does)."""
        agent = self.server.agent
        steering = [item.text for item in agent.steering if item.message is None]
        follow_up = [item.text for item in agent.follow_ups if item.message is None]
        taken = agent.clear_queues()
        if not taken:
            agent.emit("queue_update", steering=[], followUp=[])  # pi reports the queue either way
        return {"steering": steering, "followUp": follow_up}

    async def get_available_thinking_levels(self, command: dict[str, Any]) -> Any:
        return {"levels": list(supported_levels(self.server.agent.model))}  # ["off"]: no reasoning

    async def set_auto_retry(self, command: dict[str, Any]) -> Any:
        """Switch retries of failed replies on or off for this process (pi 1.x also writes the
        choice into the global settings; so does this, a file that cannot be written does not
        fail the command)."""
        import contextlib

        from pi_tui.config.settings import SettingsError, update_global_settings

        enabled = command.get("enabled")
        if not isinstance(enabled, bool):
            raise CommandError('"enabled" must be true or false')
        self.server.agent.settings.retry.enabled = enabled
        with contextlib.suppress(OSError, SettingsError):
            update_global_settings({"retry": {"enabled": enabled}})
        return NO_DATA

    async def abort_retry(self, command: dict[str, Any]) -> Any:
        """Cancel the wait before a retry; nothing to do when no reply is waiting (as pi)."""
        self.server.agent.abort_retry()
        return NO_DATA

    async def clone(self, command: dict[str, Any]) -> Any:
        """Continue in a new session file holding the current branch (``/clone``)."""
        leaf = self.server.agent.manager.get_leaf_id()
        if leaf is None:
            raise CommandError("Nothing to clone: the session has no entries yet")
        moved = await self.server.branch_off("clone", leaf, "at")
        return {"cancelled": moved.cancelled}

    async def export_html(self, command: dict[str, Any]) -> Any:
        """The session as an HTML page (``/export``'s), secrets hidden as the model sees them;
        ``outputPath`` relative to the working folder, by default pi's file name there."""
        from pi_tui.config.paths import agent_dir
        from pi_tui.html_export import agent_context, default_html_name, export_html
        from pi_tui.secrets.active import current as current_secrets

        agent = self.server.agent
        given = command.get("outputPath")
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise CommandError('"outputPath" must be a file path')
        output = Path(given).expanduser() if given else Path(default_html_name(agent.manager))
        target = agent.cwd / output
        try:
            written = await asyncio.to_thread(
                export_html,
                agent.manager,
                target,
                theme=agent.settings.theme,
                agent_dir=agent_dir(),
                hide=current_secrets(),
                context=agent_context(agent),
            )
        except OSError as error:
            raise CommandError(f"Cannot write {target}: {error.strerror or error}") from None
        return {"path": str(written)}


def _raw_list(raws: list[dict[str, Any]]) -> orjson.Fragment:
    """Entries as one JSON array, each entry encoded on its own (a text from a file may hold a
    lone surrogate, which :func:`jsonio.dumps` writes as its escape)."""
    return orjson.Fragment(b"[" + b",".join(jsonio.dumps(raw) for raw in raws) + b"]")


def tree_fragment(manager: SessionManager) -> orjson.Fragment:
    """The tree as JSON text, built without recursion.

    A session is mostly one long chain, so its tree nests two levels per entry: thousands of
    levels, past any recursive encoder's limit. Each node is written as it is reached and closed
    by an explicit stack.
    """
    out: list[bytes] = [b"["]
    stack: list[tuple[list[TreeNode], int]] = [(manager.get_tree(), 0)]
    while stack:
        nodes, index = stack.pop()
        if index >= len(nodes):
            out.append(b"]" if not stack else b"]}")
            continue
        node = nodes[index]
        stack.append((nodes, index + 1))
        if index:
            out.append(b",")
        out.append(b'{"entry":' + jsonio.dumps(node.raw))
        if node.label is not None:
            out.append(b',"label":' + jsonio.dumps(node.label))
            stamp = manager.get_label_timestamp(node.id)
            if stamp is not None:
                out.append(b',"labelTimestamp":' + jsonio.dumps(stamp))
        out.append(b',"children":[')
        stack.append((node.children, 0))
    return orjson.Fragment(b"".join(out))
