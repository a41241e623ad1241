"""Claude Code transcripts (``~/.claude/projects/<folder>/<session id>.jsonl``) as pi entries.

Each line is a record; those with a ``uuid`` form a tree through ``parentUuid`` (edited or
rewound prompts are siblings; a ``compact_boundary`` starts a new root but names the old leaf in
``logicalParentUuid``, which is followed so the tree stays whole). The mapping:

- a user line: its text and images become a pi user message; each ``tool_result`` block a pi
  tool result (its tool name from the call it answers);
- an assistant line: a pi assistant message (text, thinking with its signature, tool calls with
  their input, usage, model, stop reason). Claude writes one line per content block of the same
  API message; consecutive lines of one message become one pi message again;
- ``compact_boundary`` + the ``isCompactSummary`` user line after it: a pi compaction (nothing
  kept before it, as in Claude); ``summary`` lines name the session;
- every other record with a uuid (progress, hook summaries, attachments, local commands) and
  every record without one (file-history snapshots, queue operations) is kept as a ``custom``
  entry ``claude-code/<type>`` holding the record, so nothing is lost;
- sidechain (sub-agent) lines in a session's own file stay out of the conversation: one
  ``custom`` entry each. A sub-agent's own file (``agent-<id>.jsonl``, every line a sidechain)
  is converted as a conversation with ``sidechain=True``; the importer hangs it on its parent
  session's ``Task`` call (``call_entries``, ``agent_calls``, ``prompt_calls`` say where).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_tui import jsonio
from pi_tui.transcripts.common import (
    Converted,
    custom_entry,
    entry_id,
    epoch_ms,
    iso_time,
    json_records,
    tool_result_entry,
    usage_of,
)

AGENT = "claude-code"
_ROOT = "\0root"
_STOP = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "stop_sequence": "stop"}


class _Builder:
    def __init__(self, result: Converted, sidechain: bool = False) -> None:
        self.result = result
        self.sidechain = sidechain
        """Sidechain lines are the conversation (a sub-agent's own file)."""
        self.ids: dict[str, str] = {}
        """Source uuid -> the pi entry standing for it (merged lines and summaries map too)."""
        self.tool_names: dict[str, str] = {}
        self.open_assistant: dict[str, dict[str, Any]] = {}
        """API message id -> its pi entry, while its lines keep coming."""
        self.last: str | None = None
        self.pending_compaction: dict[str, Any] | None = None
        self.tail: dict[str, str] = {}
        """Entry (or ``_ROOT``) -> the record kept as ``custom`` just after it (a snapshot, a
        progress line, a hook summary, a sidechain line): a later child of the entry hangs
        under that record instead, so keeping such records never makes a branch point or a
        second root; only the source's own branches (edited prompts) stay branches."""

    def resolve(self, entry: str | None) -> str | None:
        """Where a child of ``entry`` (None: a root) goes: after the records inserted below it."""
        key = _ROOT if entry is None else entry
        seen = 0
        while key in self.tail and seen < 1_000_000:
            key = self.tail[key]
            seen += 1
        return None if key == _ROOT else key

    def named_parent(self, record: dict[str, Any]) -> str | None:
        """The entry standing for the record's ``parentUuid`` itself (records kept after it aside)."""
        parent = record.get("parentUuid") or record.get("logicalParentUuid")
        return self.ids.get(parent, entry_id(AGENT, parent)) if isinstance(parent, str) else None

    def parent_of(self, record: dict[str, Any]) -> str | None:
        parent = record.get("parentUuid") or record.get("logicalParentUuid")
        if isinstance(parent, str):
            return self.resolve(self.ids.get(parent, entry_id(AGENT, parent)))
        return self.resolve(None)

    def add(self, entry: dict[str, Any], uuid: str | None) -> None:
        self.result.entries.append(entry)
        if uuid:
            self.ids[uuid] = entry["id"]
        self.last = entry["id"]

    def custom(self, record: dict[str, Any], kind: str, stamp: str, uuid: str | None) -> None:
        key = uuid or f"{kind}:{self.last}:{len(self.result.entries)}"
        parent = self.parent_of(record) if uuid else self.resolve(self.last)
        entry = {**custom_entry(entry_id(AGENT, key), stamp, f"{AGENT}/{kind}", record), "parentId": parent}
        self.add(entry, uuid)
        self.tail[_ROOT if parent is None else parent] = entry["id"]
        self.result.count("custom")


def convert_claude(lines: Iterable[bytes], *, fallback_time: str, sidechain: bool = False) -> Converted:
    """The pi entries of a Claude Code transcript; unreadable lines are counted, never fatal.
    ``sidechain``: the file is a sub-agent's, whose sidechain lines are its conversation."""
    result = Converted(AGENT, "", "", fallback_time)
    build = _Builder(result, sidechain)
    for record in json_records(lines, result):
        _record(build, record, fallback_time)
    # The source's current branch ends at its last conversation entry; records kept after it
    # hang below it, so the last of them ends that branch.
    conversation = [entry["id"] for entry in result.entries if entry["type"] in ("message", "compaction")]
    if conversation:
        result.leaf = build.resolve(conversation[-1])
    elif result.entries:
        result.leaf = result.entries[-1]["id"]
    return result


def _record(build: _Builder, record: dict[str, Any], fallback_time: str) -> None:
    result = build.result
    kind = str(record.get("type") or "unknown")
    stamp = iso_time(record.get("timestamp"), fallback_time)
    uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
    if not result.session_id and isinstance(record.get("sessionId"), str):
        result.session_id = record["sessionId"]
    if not result.cwd and isinstance(record.get("cwd"), str):
        result.cwd = record["cwd"]
    if result.started == fallback_time and record.get("timestamp"):
        result.started = stamp
    if kind == "summary":
        if isinstance(record.get("summary"), str) and result.title is None:
            result.title = record["summary"]
        build.custom(record, "summary", stamp, None)
        return
    if record.get("isSidechain"):
        result.count("sidechain")
        if not build.sidechain:
            build.custom(record, "sidechain", stamp, None)
            return
        if result.sub_agent is None and isinstance(record.get("agentId"), str):
            result.sub_agent = record["agentId"]
    if kind == "system" and record.get("subtype") == "compact_boundary" and uuid:
        metadata = record.get("compactMetadata")
        if not isinstance(metadata, dict):
            metadata = {}
        own = entry_id(AGENT, uuid)
        compaction = {
            "type": "compaction",
            "id": own,
            "parentId": build.parent_of(record),
            "timestamp": stamp,
            "summary": "",
            "firstKeptEntryId": own,
            "tokensBefore": metadata.get("preTokens") if isinstance(metadata.get("preTokens"), int) else 0,
        }
        build.add(compaction, uuid)
        build.pending_compaction = compaction
        result.count("compactions")
        return
    message = record.get("message")
    if kind == "user" and isinstance(message, dict):
        if record.get("isCompactSummary") and build.pending_compaction is not None and uuid:
            build.pending_compaction["summary"] = _text_of(message.get("content"))
            build.ids[uuid] = build.pending_compaction["id"]
            build.pending_compaction = None
            return
        _user(build, record, message, stamp, uuid)
        return
    if kind == "assistant" and isinstance(message, dict):
        _assistant(build, record, message, stamp, uuid)
        return
    build.custom(
        record, kind if kind != "system" else f"system/{record.get('subtype') or 'message'}", stamp, uuid
    )


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _image(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        return {
            "type": "image",
            "data": source["data"],
            "mimeType": str(source.get("media_type") or "image/png"),
        }
    return None


def _result_content(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                blocks.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "image":
                image = _image(block)
                if image is not None:
                    blocks.append(image)
            else:  # tool_reference and kinds to come: kept as text so the model still sees them
                blocks.append({"type": "text", "text": jsonio.dumps(block).decode("utf-8", "replace")})
    return blocks or [{"type": "text", "text": ""}]


def _user(
    build: _Builder, record: dict[str, Any], message: dict[str, Any], stamp: str, uuid: str | None
) -> None:
    result = build.result
    content = message.get("content")
    parent = build.parent_of(record)
    blocks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    if isinstance(content, str):
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                results.append(block)
            elif kind == "text" and isinstance(block.get("text"), str):
                blocks.append({"type": "text", "text": block["text"]})
            elif kind == "image":
                image = _image(block)
                if image is not None:
                    blocks.append(image)
    key = uuid or f"user:{build.last}:{len(result.entries)}"
    outcome = record.get("toolUseResult")
    if len(results) == 1 and isinstance(outcome, dict) and isinstance(outcome.get("agentId"), str):
        # A Task / Agent call's result names the sub-agent it ran (its agent-<id>.jsonl).
        result.agent_calls.setdefault(outcome["agentId"], str(results[0].get("tool_use_id") or ""))
    for number, block in enumerate(results):
        call_id = str(block.get("tool_use_id") or "")
        name = build.tool_names.get(call_id, "tool")
        own = entry_id(AGENT, f"{key}#result{number}")
        content = _result_content(block.get("content"))
        entry = tool_result_entry(own, stamp, call_id, name, content, bool(block.get("is_error")))
        entry["parentId"] = parent
        build.add(entry, None)
        # Parallel calls answered on separate lines all name the assistant line as parent: the
        # results follow one another, as pi writes them, instead of branching there.
        build.tail[_ROOT if parent is None else parent] = entry["id"]
        parent = entry["id"]
        result.count("tool_results")
        if call_id in build.tool_names:
            result.count("paired")
    if blocks:
        entry = {
            "type": "message",
            "id": entry_id(AGENT, key),
            "parentId": parent,
            "timestamp": stamp,
            "message": {"role": "user", "content": blocks, "timestamp": epoch_ms(stamp)},
        }
        build.add(entry, None)
        result.count("users")
        parent = entry["id"]
    if uuid:
        build.ids[uuid] = parent or entry_id(AGENT, key)
    if not blocks and not results:  # an empty user line still holds its place in the tree
        build.custom(record, "user", stamp, uuid)


def _assistant(
    build: _Builder, record: dict[str, Any], message: dict[str, Any], stamp: str, uuid: str | None
) -> None:
    result = build.result
    content = message.get("content")
    blocks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append({"type": "text", "text": block["text"]})
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            thinking: dict[str, Any] = {"type": "thinking", "thinking": block["thinking"]}
            if isinstance(block.get("signature"), str):
                thinking["thinkingSignature"] = block["signature"]
            blocks.append(thinking)
        elif kind == "tool_use":
            call_id = str(block.get("id") or "")
            name = str(block.get("name") or "tool")
            build.tool_names[call_id] = name
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                arguments = {}
            blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
            result.count("tool_calls")
            if isinstance(arguments.get("prompt"), str):  # Task / Agent: a sub-agent's first prompt
                result.prompt_calls.setdefault(arguments["prompt"], call_id)
    message_id = message.get("id") if isinstance(message.get("id"), str) else None
    parent = build.parent_of(record)
    open_entry = build.open_assistant.get(message_id) if message_id else None
    stop = _STOP.get(str(message.get("stop_reason")), "stop")
    calls = [block["id"] for block in blocks if block["type"] == "toolCall"]
    if open_entry is not None and build.named_parent(record) == open_entry["id"]:
        for call_id in calls:
            result.call_entries.setdefault(call_id, open_entry["id"])
        open_entry["message"]["content"].extend(blocks)
        if any(block["type"] == "toolCall" for block in open_entry["message"]["content"]):
            stop = "toolUse"
        open_entry["message"]["stopReason"] = stop
        _add_usage(open_entry["message"], message.get("usage"))
        if uuid:
            build.ids[uuid] = open_entry["id"]
        build.last = open_entry["id"]
        return
    if any(block["type"] == "toolCall" for block in blocks):
        stop = "toolUse"
    key = uuid or f"assistant:{build.last}:{len(result.entries)}"
    entry: dict[str, Any] = {
        "type": "message",
        "id": entry_id(AGENT, key),
        "parentId": parent,
        "timestamp": stamp,
        "message": {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": str(message.get("model") or "claude"),
            "usage": {},
            "stopReason": stop,
            "timestamp": epoch_ms(stamp),
        },
    }
    _add_usage(entry["message"], message.get("usage"))
    for call_id in calls:
        result.call_entries.setdefault(call_id, entry["id"])
    build.add(entry, uuid)
    if message_id:
        build.open_assistant = {message_id: entry}
    result.count("assistants")


def _add_usage(message: dict[str, Any], usage: object) -> None:
    """pi's usage from Anthropic's (the last line of a message carries the final counts)."""
    names = {
        "input": "input_tokens",
        "output": "output_tokens",
        "cacheRead": "cache_read_input_tokens",
        "cacheWrite": "cache_creation_input_tokens",
    }
    message["usage"] = usage_of(usage, names)
