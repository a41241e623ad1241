"""Gemini CLI chats (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl``, and the older
single ``.json`` files) as pi entries.

A JSONL chat is a metadata line, message lines, ``$set`` lines (metadata updates) and
``$rewindTo`` lines: a rewind to message M means the next message continues from M's parent,
so the messages after M become an abandoned branch (pi keeps both). A legacy ``.json`` file is
one object whose ``messages`` list is the same records. The mapping:

- ``user``: a pi user message (``content`` a string or Part list; inline images kept);
- ``gemini``: a pi assistant message (thoughts as thinking, text, tool calls), then one pi tool
  result per call from the call's own ``result`` (its ``functionResponse``), paired by id;
- ``info``, ``error``, ``warning`` and anything else: a ``custom`` entry ``gemini/<type>``.
"""

from __future__ import annotations

import json
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
    parts_text,
    tool_result_entry,
    usage_of,
    user_entry,
)

AGENT = "gemini"


def convert_gemini(data: bytes, *, fallback_time: str) -> Converted:
    """A whole chat file, JSONL or legacy JSON."""
    result = Converted(AGENT, "", "", fallback_time)
    stripped = data.lstrip()
    records: Iterable[Any]
    if stripped.startswith(b"{") and b"\n" in stripped.strip() and _is_single_object(stripped):
        document = jsonio.loads(stripped)
        _metadata(result, document, fallback_time)
        records = document.get("messages") or []
    else:
        records = json_records(data.splitlines(), result)
    build = _Builder(result)
    for record in records:
        if not isinstance(record, dict):
            result.count("skipped")
            continue
        if "sessionId" in record and "projectHash" in record and "type" not in record:
            _metadata(result, record, fallback_time)
        elif "$set" in record:
            build.custom_record("$set", record, fallback_time)
        elif "$rewindTo" in record:
            build.rewind(str(record["$rewindTo"]))
        else:
            build.message(record, fallback_time)
    if result.entries:
        result.leaf = build.last
    return result


def _is_single_object(data: bytes) -> bool:
    try:
        value = jsonio.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _metadata(result: Converted, record: dict[str, Any], fallback: str) -> None:
    if isinstance(record.get("sessionId"), str):
        result.session_id = record["sessionId"]
    result.started = iso_time(record.get("startTime"), fallback)
    if isinstance(record.get("summary"), str):
        result.title = record["summary"]


class _Builder:
    def __init__(self, result: Converted) -> None:
        self.result = result
        self.last: str | None = None
        self.parents: dict[str, str | None] = {}
        """Message id -> the entry before it, for ``$rewindTo``."""
        self.ids: dict[str, str] = {}

    def add(self, entry: dict[str, Any]) -> None:
        entry["parentId"] = self.last
        self.result.entries.append(entry)
        self.last = entry["id"]

    def custom_record(self, kind: str, record: dict[str, Any], fallback: str) -> None:
        """A record kept as it is (metadata updates), in the chain where it was written."""
        key = f"{self.result.session_id}:{kind}:{len(self.result.entries)}"
        stamp = iso_time(record.get("$set", {}).get("lastUpdated") if kind == "$set" else None, fallback)
        self.add(custom_entry(entry_id(AGENT, key), stamp, f"{AGENT}/{kind}", record))
        self.result.count("custom")

    def rewind(self, message_id: str) -> None:
        """The next message continues from before ``message_id``: a branch point."""
        if message_id in self.parents:
            self.last = self.parents[message_id]
            self.result.count("rewinds")
        else:
            self.result.count("skipped")

    def message(self, record: dict[str, Any], fallback: str) -> None:
        result = self.result
        stamp = iso_time(record.get("timestamp"), fallback)
        source_id = str(record.get("id") or f"{len(result.entries)}")
        self.parents[source_id] = self.last
        own = entry_id(AGENT, f"{result.session_id}:{source_id}")
        kind = record.get("type")
        if kind == "user":
            content: list[dict[str, Any]] = []
            text = parts_text(record.get("content"))
            if text:
                content.append({"type": "text", "text": text})
            parts = record.get("content")
            for part in parts if isinstance(parts, list) else []:
                inline = part.get("inlineData") if isinstance(part, dict) else None
                if isinstance(inline, dict) and isinstance(inline.get("data"), str):
                    content.append(
                        {
                            "type": "image",
                            "data": inline["data"],
                            "mimeType": str(inline.get("mimeType") or "image/png"),
                        }
                    )
            self.add(user_entry(own, stamp, content))
            result.count("users")
            return
        if kind == "gemini":
            self._assistant(record, own, stamp)
            return
        self.add(custom_entry(own, stamp, f"{AGENT}/{kind or 'message'}", record))
        result.count("custom")

    def _assistant(self, record: dict[str, Any], own: str, stamp: str) -> None:
        result = self.result
        content: list[dict[str, Any]] = []
        thoughts = [
            f"**{t.get('subject', '')}**\n{t.get('description', '')}".strip()
            for t in record.get("thoughts") or []
            if isinstance(t, dict)
        ]
        if thoughts:
            content.append({"type": "thinking", "thinking": "\n\n".join(thoughts)})
        text = parts_text(record.get("content"))
        if text:
            content.append({"type": "text", "text": text})
        calls = [call for call in record.get("toolCalls") or [] if isinstance(call, dict)]
        for call in calls:
            arguments = call.get("args") if isinstance(call.get("args"), dict) else {}
            content.append(
                {
                    "type": "toolCall",
                    "id": str(call.get("id") or ""),
                    "name": str(call.get("name") or "tool"),
                    "arguments": arguments,
                }
            )
            result.count("tool_calls")
        usage = usage_of(
            record.get("tokens"), {"input": "input", "output": "output", "cacheRead": "cached"}, "total"
        )
        self.add(
            {
                "type": "message",
                "id": own,
                "timestamp": stamp,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "api": "google-generative-ai",
                    "provider": "google",
                    "model": str(record.get("model") or "gemini"),
                    "usage": usage,
                    "stopReason": "toolUse" if calls else "stop",
                    "timestamp": epoch_ms(stamp),
                },
            }
        )
        result.count("assistants")
        for number_, call in enumerate(calls):
            self._result(call, f"{own}:{number_}", stamp)

    def _result(self, call: dict[str, Any], key: str, stamp: str) -> None:
        result = self.result
        outputs = []
        for part in call.get("result") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                body = response.get("response")
                output = body.get("output", body.get("error", body)) if isinstance(body, dict) else body
                outputs.append(output if isinstance(output, str) else json.dumps(output))
        status = str(call.get("status") or "")
        text = "\n".join(outputs) or str(call.get("resultDisplay") or "")
        call_id, name = str(call.get("id") or ""), str(call.get("name") or "tool")
        failed = status not in ("", "success")
        self.add(
            tool_result_entry(
                entry_id(AGENT, key), stamp, call_id, name, [{"type": "text", "text": text}], failed
            )
        )
        result.count("tool_results")
        result.count("paired")
