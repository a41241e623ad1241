"""Agent events -> ACP ``session/update`` payloads, for the live stream.

One :class:`LiveUpdates` per session turns the agent's events into the updates an editor
draws: text and thinking deltas become ``agent_message_chunk`` / ``agent_thought_chunk``; a
tool call is announced (``tool_call``, pending) as soon as the model starts writing it, then
``tool_call_update`` carries its final arguments, ``in_progress`` when it runs, a command's
output as it grows, and the end: ``completed`` or ``failed`` with its output, a ``diff`` for
``write`` / ``edit`` (the file's text before and after), or the client's terminal for ``bash``
run there. A todo tool's list becomes a ``plan``. Rule interruptions (TTSR), retries and
compactions are said as thoughts, so the user sees why the answer paused.

The payloads are plain dicts in the protocol's own field names (what goes on the wire), built
without I/O except reading a file's text before and after an edit (:class:`FileTexts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.acp.tool_calls import (
    TODO_TOOLS,
    absolute_path,
    plan_entries,
    tool_kind,
    tool_locations,
    tool_title,
)
from pi_tui.agent.events import AgentEvent

Update = dict[str, Any]
MAX_DIFF_BYTES = 1024 * 1024
"""Files larger than this are not sent whole as a diff's before/after (the output says what
changed instead)."""


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def message_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": text_block(text)}


def thought_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_thought_chunk", "content": text_block(text)}


def result_blocks(result: Any) -> list[dict[str, Any]]:
    """A tool result's content as ACP tool-call content (text and images)."""
    content = getattr(result, "content", None)
    if content is None and isinstance(result, dict):
        content = result.get("content")
    blocks: list[dict[str, Any]] = []
    for block in content or ():
        kind = getattr(block, "type", None) if not isinstance(block, dict) else block.get("type")
        get = block.get if isinstance(block, dict) else lambda key, b=block: getattr(b, key, None)
        if kind == "text" and get("text"):
            blocks.append({"type": "content", "content": text_block(str(get("text")))})
        elif kind == "image" and get("data"):
            mime = get("mime_type") or get("mimeType") or "image/png"
            blocks.append(
                {"type": "content", "content": {"type": "image", "data": get("data"), "mimeType": mime}}
            )
    return blocks


def read_text(path: str) -> str | None:
    """The file's text for a diff, or None (missing, binary, too large, unreadable)."""
    try:
        file = Path(path)
        if not file.is_file() or file.stat().st_size > MAX_DIFF_BYTES:
            return None
        data = file.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


@dataclass(slots=True)
class FileTexts:
    """Before/after texts of files written by the session's tools, by tool call id.

    Tools that write through the client (its buffers, which may differ from the disk) record
    the texts they saw here; for pi-tui's own tools the file is read from disk around the call.
    """

    before: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """call id -> (absolute path, text before the call; None for a new file)."""
    after: dict[str, str] = field(default_factory=dict)
    """call id -> the text the tool wrote (tools writing through the client)."""


@dataclass(slots=True)
class _Call:
    name: str
    announced: bool = False
    args: Any = None


class LiveUpdates:
    """Stateful: which tool calls were announced, and what each edit's file held before."""

    def __init__(self, cwd: str | Path, files: FileTexts | None = None) -> None:
        self.cwd = str(cwd)
        self.files = files or FileTexts()
        self.calls: dict[str, _Call] = {}
        self.terminals: dict[str, str] = {}
        """call id -> the client terminal running it (its output is shown there, live)."""

    # --- the entry point ------------------------------------------------------------------

    def updates(self, event: AgentEvent) -> list[Update]:
        handler: Callable[[AgentEvent], list[Update]] | None = getattr(self, f"_on_{event.type}", None)
        return handler(event) if handler is not None else []

    # --- the model's stream ---------------------------------------------------------------

    def _on_message_update(self, event: AgentEvent) -> list[Update]:
        stream = event.get("assistantMessageEvent")
        kind = getattr(stream, "type", None)
        if kind == "text_delta" and stream.delta:
            return [message_chunk(stream.delta)]
        if kind == "thinking_delta" and stream.delta:
            return [thought_chunk(stream.delta)]
        call = getattr(stream, "tool_call", None)
        if kind == "toolcall_start" and call is not None and call.id and call.name:
            return self._announce(call.id, call.name, None)
        if kind == "toolcall_end" and call is not None:
            return self._arguments(call.id, call.name, call.arguments)
        return []

    def _announce(self, call_id: str, name: str, args: Any) -> list[Update]:
        known = self.calls.get(call_id)
        if known is not None and known.announced:
            return []
        self.calls[call_id] = _Call(name, announced=True, args=args)
        update: Update = {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": tool_title(name, args),
            "kind": tool_kind(name),
            "status": "pending",
        }
        if args is not None:
            update["rawInput"] = args
            locations = tool_locations(name, args, self.cwd)
            if locations:
                update["locations"] = locations
        return [update]

    def _arguments(self, call_id: str, name: str, args: Any) -> list[Update]:
        if call_id not in self.calls:
            return self._announce(call_id, name, args)
        self.calls[call_id].args = args
        update: Update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "title": tool_title(name, args),
            "rawInput": args,
        }
        locations = tool_locations(name, args, self.cwd)
        if locations:
            update["locations"] = locations
        return [update]

    # --- tools running --------------------------------------------------------------------

    def _on_tool_execution_start(self, event: AgentEvent) -> list[Update]:
        call_id, name, args = event["toolCallId"], event["toolName"], event.get("args")
        out = self._announce(call_id, name, args) if call_id not in self.calls else []
        if name in ("write", "edit") and isinstance(args, dict) and isinstance(args.get("path"), str):
            path = absolute_path(args["path"], self.cwd)
            self.files.before.setdefault(call_id, (path, read_text(path)))
        out.append({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})
        return out

    def _on_tool_execution_update(self, event: AgentEvent) -> list[Update]:
        call_id = event["toolCallId"]
        if call_id in self.terminals:
            return []  # the client shows its terminal's output itself
        blocks = result_blocks(event.get("partialResult"))
        if not blocks:
            return []
        return [{"sessionUpdate": "tool_call_update", "toolCallId": call_id, "content": blocks}]

    def _on_tool_execution_end(self, event: AgentEvent) -> list[Update]:
        call_id, name = event["toolCallId"], event["toolName"]
        result, failed = event.get("result"), bool(event.get("isError"))
        content = self._final_content(call_id, name, result, failed)
        update: Update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "failed" if failed else "completed",
            "content": content,
        }
        details = result.get("details") if isinstance(result, dict) else getattr(result, "details", None)
        raw = {"content": [block["content"] for block in result_blocks(result)]}
        if details is not None:
            raw["details"] = details
        update["rawOutput"] = raw
        out = [update]
        if name.lower() in TODO_TOOLS and not failed:
            entries = plan_entries(details)
            if entries is not None:
                out.append({"sessionUpdate": "plan", "entries": entries})
        self.files.before.pop(call_id, None)
        self.files.after.pop(call_id, None)
        return out

    def _final_content(self, call_id: str, name: str, result: Any, failed: bool) -> list[dict[str, Any]]:
        if call_id in self.terminals:
            terminal = [{"type": "terminal", "terminalId": self.terminals[call_id]}]
            return terminal + (result_blocks(result) if failed else [])
        if name in ("write", "edit") and not failed and call_id in self.files.before:
            path, old = self.files.before[call_id]
            new = self.files.after.get(call_id)
            if new is None:
                new = read_text(path)
            if new is not None:
                diff: dict[str, Any] = {"type": "diff", "path": path, "newText": new}
                if old is not None:
                    diff["oldText"] = old
                return [diff, *result_blocks(result)]
        return result_blocks(result)

    # --- what the user should know --------------------------------------------------------

    def _on_ttsr_triggered(self, event: AgentEvent) -> list[Update]:
        rules = event.get("rules") or []
        names = [rule.get("name") for rule in rules if isinstance(rule, dict)]
        named = ", ".join(str(name) for name in names if name) or "a project rule"
        return [thought_chunk(f"\n[Rule {named} stopped the reply; retrying with the rule in context.]\n")]

    def _on_auto_retry_start(self, event: AgentEvent) -> list[Update]:
        wait = int(event.get("delayMs") or 0) // 1000
        reason = str(event.get("errorMessage") or "Request failed")
        attempt = f"{event.get('attempt', 1)}/{event.get('maxAttempts', 1)}"
        return [thought_chunk(f"\n[{reason}; retrying in {wait} s, attempt {attempt}.]\n")]

    def _on_compaction_start(self, event: AgentEvent) -> list[Update]:
        return [thought_chunk("\n[Compacting the conversation to free context...]\n")]

    def _on_session_info_changed(self, event: AgentEvent) -> list[Update]:
        name = event.get("name")
        if isinstance(name, str) or name is None:
            return [{"sessionUpdate": "session_info_update", "title": name}]
        return []
