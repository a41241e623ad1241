"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as pi entries.

Current files are ``{timestamp, type, payload}`` lines; the oldest have a bare header line and
bare response items (``record_type: state`` markers between them). A rollout is one straight
conversation (a fork is a new rollout naming ``forked_from_id``). The mapping:

- ``response_item`` user messages: pi user messages; the ones Codex itself writes into the
  conversation (``<environment_context>``, ``<user_instructions>``), developer and system
  messages: ``custom`` entries ``codex/context``;
- reasoning, assistant messages and tool calls (``function_call``, ``custom_tool_call``,
  ``local_shell_call``) up to the next tool output or user message: one pi assistant message
  (reasoning summaries as thinking, a call's JSON arguments parsed; a freeform call's input as
  ``{"input": ...}``), then each output a pi tool result paired by ``call_id``;
- ``compacted``: a pi compaction (its message as the summary);
- ``event_msg`` lines (the UI's copy of the items, token counts, rate limits), ``turn_context``
  (which also gives the model) and anything else: ``custom`` entries ``codex/<type>``, so
  nothing is lost (``/tree`` shows them only under its "all" filter).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pi_tui import jsonio
from pi_tui.transcripts.common import (
    ZERO_COST,
    Converted,
    custom_entry,
    entry_id,
    epoch_ms,
    iso_time,
    json_records,
    parts_text,
    tool_result_entry,
    user_entry,
)

AGENT = "codex"
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions",
)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


class _Builder:
    def __init__(self, result: Converted, fallback: str) -> None:
        self.result = result
        self.fallback = fallback
        self.last: str | None = None
        self.turn: dict[str, Any] | None = None
        """The assistant message being gathered (reasoning, text, calls)."""
        self.tool_names: dict[str, str] = {}
        self.model = "codex"
        self.number = 0

    def next_id(self, kind: str) -> str:
        self.number += 1
        return entry_id(AGENT, f"{self.result.session_id}:{self.number}:{kind}")

    def add(self, entry: dict[str, Any]) -> None:
        entry["parentId"] = self.last
        self.result.entries.append(entry)
        self.last = entry["id"]

    def close_turn(self) -> None:
        self.turn = None

    def assistant(self, stamp: str) -> dict[str, Any]:
        if self.turn is None:
            self.turn = {
                "type": "message",
                "id": self.next_id("assistant"),
                "timestamp": stamp,
                "message": {
                    "role": "assistant",
                    "content": [],
                    "api": "openai-responses",
                    "provider": "openai",
                    "model": self.model,
                    "usage": {
                        "input": 0,
                        "output": 0,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 0,
                        "cost": dict(ZERO_COST),
                    },
                    "stopReason": "stop",
                    "timestamp": epoch_ms(stamp),
                },
            }
            self.add(self.turn)
            self.result.count("assistants")
        return self.turn

    def custom(self, kind: str, data: Any, stamp: str) -> None:
        self.add(custom_entry(self.next_id(kind), stamp, f"{AGENT}/{kind}", data))
        self.result.count("custom")


def convert_codex(lines: Iterable[bytes], *, fallback_time: str) -> Converted:
    """The pi entries of a rollout, read line by line (a huge file is never held whole)."""
    result = Converted(AGENT, "", "", fallback_time)
    build = _Builder(result, fallback_time)
    stamp = fallback_time
    for record in json_records(lines, result):
        stamp = iso_time(record.get("timestamp"), stamp)
        kind = record.get("type")
        payload = record.get("payload")
        if "payload" not in record:  # the oldest layout: bare header and bare items
            if "instructions" in record and "id" in record and not result.session_id:
                _meta(result, record, stamp)
                continue
            if record.get("record_type") == "state":
                result.count("state markers")
                continue
            kind, payload = "response_item", record
        if not isinstance(payload, dict):
            result.count("skipped")
            continue
        if kind == "session_meta":
            _meta(result, payload, stamp)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                build.model = payload["model"]
            if not result.cwd and isinstance(payload.get("cwd"), str):
                result.cwd = payload["cwd"]
            build.custom("turn_context", payload, stamp)
        elif kind == "event_msg":
            build.custom("event_msg", payload, stamp)
        elif kind == "compacted":
            build.close_turn()
            own = build.next_id("compaction")
            summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
            build.add(
                {
                    "type": "compaction",
                    "id": own,
                    "timestamp": stamp,
                    "summary": summary,
                    "firstKeptEntryId": own,
                    "tokensBefore": 0,
                }
            )
            result.count("compactions")
        elif kind == "response_item":
            _item(build, payload, stamp)
        else:
            build.custom(str(kind or "unknown"), record, stamp)
    if result.entries:
        result.leaf = result.entries[-1]["id"]
    return result


def _meta(result: Converted, payload: dict[str, Any], stamp: str) -> None:
    if isinstance(payload.get("id"), str):
        result.session_id = payload["id"]
    if isinstance(payload.get("cwd"), str):
        result.cwd = payload["cwd"]
    result.started = iso_time(payload.get("timestamp"), stamp)
    if isinstance(payload.get("forked_from_id"), str):
        result.forked_from = payload["forked_from_id"]


def _item(build: _Builder, item: dict[str, Any], stamp: str) -> None:
    result = build.result
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        text = parts_text(item.get("content"))
        if role == "assistant":
            turn = build.assistant(stamp)
            if text:
                turn["message"]["content"].append({"type": "text", "text": text})
            return
        build.close_turn()
        if role == "user" and not text.lstrip().startswith(_CONTEXT_PREFIXES):
            images = [
                {
                    "type": "image",
                    "data": part["image_url"].split(",", 1)[1],
                    "mimeType": part["image_url"][5:].split(";", 1)[0],
                }
                for part in item.get("content") or []
                if isinstance(part, dict)
                and str(part.get("image_url", "")).startswith("data:")
                and "," in part["image_url"]
            ]
            content = ([{"type": "text", "text": text}] if text else []) + images
            build.add(user_entry(build.next_id("user"), stamp, content))
            result.count("users")
            return
        build.custom("context", item, stamp)
        return
    if kind == "reasoning":
        summary = "\n\n".join(
            part.get("text", "") for part in item.get("summary") or [] if isinstance(part, dict)
        ) or parts_text(item.get("content"))
        if summary:
            build.assistant(stamp)["message"]["content"].append({"type": "thinking", "thinking": summary})
        return
    if kind in _CALLS:
        call_id = str(item.get("call_id") or item.get("id") or "")
        name = str(item.get("name") or ("shell" if kind == "local_shell_call" else "tool"))
        if kind == "function_call":
            try:
                arguments = jsonio.loads(item.get("arguments") or "{}")
            except ValueError:
                arguments = {"arguments": item.get("arguments")}
        elif kind == "custom_tool_call":
            arguments = {"input": item.get("input")}
        else:
            arguments = item.get("action") if isinstance(item.get("action"), dict) else {}
        turn = build.assistant(stamp)
        turn["message"]["content"].append(
            {
                "type": "toolCall",
                "id": call_id,
                "name": name,
                "arguments": arguments if isinstance(arguments, dict) else {"value": arguments},
            }
        )
        turn["message"]["stopReason"] = "toolUse"
        build.tool_names[call_id] = name
        result.count("tool_calls")
        return
    if kind in _OUTPUTS:
        build.close_turn()
        call_id = str(item.get("call_id") or "")
        output = item.get("output")
        is_error = False
        if isinstance(output, dict):
            is_error = output.get("success") is False
            output = output.get("content", output)
        text = output if isinstance(output, str) else json.dumps(output)
        name = build.tool_names.get(call_id, "tool")
        content = [{"type": "text", "text": text}]
        build.add(tool_result_entry(build.next_id("result"), stamp, call_id, name, content, is_error))
        result.count("tool_results")
        if call_id in build.tool_names:
            result.count("paired")
        return
    build.close_turn()
    build.custom(str(kind or "item"), item, stamp)
