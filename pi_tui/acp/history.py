"""A saved branch as ACP ``session/update`` payloads, for ``session/load``.

The editor rebuilds the conversation from these before ``session/load`` answers: the user's
prompts as ``user_message_chunk``, replies as thought and message chunks, every tool call as a
finished ``tool_call`` (its title, kind, locations, input, output and status: the result
message that answered it decides ``completed`` or ``failed``), the user's own ``!command`` runs
as finished ``execute`` calls, and summaries (compaction, a branch left behind) and extension
messages as the agent's text. The whole branch from the root to the leaf is replayed, not only
what the model still sees after a compaction: the user scrolls their history, not the context.

Pure: entries in, payloads out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pi_tui.acp.tool_calls import plan_entries, tool_kind, tool_locations, tool_title
from pi_tui.acp.updates import Update, message_chunk, result_blocks, text_block, thought_chunk
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.session.entries import MessageEntry


def branch_messages(entries: Iterable[Any]) -> list[Any]:
    """The messages of a branch's entries, in order (labels, model changes and the like say
    nothing an editor draws)."""
    return [entry.message for entry in entries if isinstance(entry, MessageEntry)]


def _user_blocks(content: Any) -> Iterator[dict[str, Any]]:
    if isinstance(content, str):
        if content:
            yield text_block(content)
        return
    for block in content or ():
        if isinstance(block, TextContent) and block.text:
            yield text_block(block.text)
        elif isinstance(block, ImageContent):
            yield {"type": "image", "data": block.data, "mimeType": block.mime_type}


def replay(messages: Iterable[Any], cwd: str | Path) -> list[Update]:
    """The updates that draw ``messages`` (a branch) in a client that has nothing yet."""
    messages = list(messages)
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    out: list[Update] = []
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            out += [
                {"sessionUpdate": "user_message_chunk", "content": b} for b in _user_blocks(message.content)
            ]
        elif isinstance(message, AssistantMessage):
            out += _assistant(message, results, cwd)
        elif isinstance(message, BashExecutionMessage):
            out.append(_bash(message, index))
        elif isinstance(message, CustomMessage) and message.display:
            text = "\n".join(
                block["text"] for block in _user_blocks(message.content) if block["type"] == "text"
            )
            if text:
                out.append(message_chunk(text + "\n"))
        elif isinstance(message, CompactionSummaryMessage):
            out.append(thought_chunk(f"[Earlier conversation, summarised]\n{message.summary}\n"))
        elif isinstance(message, BranchSummaryMessage):
            out.append(thought_chunk(f"[A branch left behind, summarised]\n{message.summary}\n"))
    return out


def _assistant(
    message: AssistantMessage, results: dict[str, ToolResultMessage], cwd: str | Path
) -> list[Update]:
    out: list[Update] = []
    for block in message.content:
        if isinstance(block, ThinkingContent) and block.thinking and not block.redacted:
            out.append(thought_chunk(block.thinking))
        elif isinstance(block, TextContent) and block.text:
            out.append(message_chunk(block.text))
        elif isinstance(block, ToolCall):
            out += _tool_call(block, results.get(block.id), cwd)
    if message.stop_reason == "error" and message.error_message:
        out.append(message_chunk(f"\n[Error: {message.error_message}]\n"))
    return out


def _tool_call(call: ToolCall, result: ToolResultMessage | None, cwd: str | Path) -> list[Update]:
    update: Update = {
        "sessionUpdate": "tool_call",
        "toolCallId": call.id,
        "title": tool_title(call.name, call.arguments),
        "kind": tool_kind(call.name),
        "rawInput": call.arguments,
        # a call with no result was cut short (an abort, a crash): it never finished
        "status": "failed" if result is None or result.is_error else "completed",
    }
    locations = tool_locations(call.name, call.arguments, cwd)
    if locations:
        update["locations"] = locations
    if result is None:
        return [update]
    content = result_blocks(result)
    diff = result.details.get("diff") if isinstance(result.details, dict) else None
    if call.name == "edit" and isinstance(diff, str) and diff:
        content.append({"type": "content", "content": text_block(f"```diff\n{diff}\n```")})
    update["content"] = content
    out = [update]
    entries = plan_entries(result.details)
    if entries is not None and not result.is_error:
        out.append({"sessionUpdate": "plan", "entries": entries})
    return out


def _bash(message: BashExecutionMessage, index: int) -> Update:
    failed = message.cancelled or (message.exit_code not in (None, 0))
    output = message.output or "(no output)"
    if message.exit_code not in (None, 0):
        output += f"\n\nCommand exited with code {message.exit_code}"
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": f"user-bash-{index}-{message.timestamp}",
        "title": message.command,
        "kind": "execute",
        "status": "failed" if failed else "completed",
        "rawInput": {"command": message.command},
        "content": [{"type": "content", "content": text_block(output)}],
    }
