"""A provider-neutral view of a conversation, to compare our context with pi's real requests.

pi's recorded requests are in the wire format of one API (openai-completions or
anthropic-messages). Both sides are reduced to the same plain shape: a list of
``{"role": ..., "parts": [...]}`` where a part is a tuple such as ``("text", text)``. The API
specific packing (OpenAI's ``tool`` role and the extra user message carrying tool-result images,
Anthropic's tool_result blocks inside a user message) is undone on the request side or applied
on ours, so what remains is exactly "role by role, text by text".
"""

from __future__ import annotations

import json
from typing import Any

from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

Canonical = list[dict[str, Any]]
TOOL_IMAGES_NOTE = "Attached image(s) from tool result:"


def from_openai_request(body: dict[str, Any]) -> Canonical:
    out: Canonical = []
    for message in body["messages"]:
        role = message["role"]
        if role in ("system", "developer"):
            continue
        if role == "user":
            out.append({"role": "user", "parts": _openai_user_parts(message["content"])})
        elif role == "assistant":
            parts: list[tuple[Any, ...]] = []
            if message.get("content"):
                parts.append(("text", message["content"]))
            for call in message.get("tool_calls") or []:
                function = call["function"]
                parts.append(("toolCall", call["id"], function["name"], json.loads(function["arguments"])))
            out.append({"role": "assistant", "parts": parts})
        elif role == "tool":
            out.append(
                {"role": "toolResult", "id": message["tool_call_id"], "parts": [("text", message["content"])]}
            )
        else:
            raise AssertionError(f"unexpected role {role}")
    return out


def _openai_user_parts(content: Any) -> list[tuple[Any, ...]]:
    if isinstance(content, str):
        return [("text", content)]
    parts: list[tuple[Any, ...]] = []
    for part in content:
        if part["type"] == "text":
            parts.append(("text", part["text"]))
        elif part["type"] == "image_url":
            url = part["image_url"]["url"]
            header, _, data = url.partition(",")
            parts.append(("image", header.removeprefix("data:").removesuffix(";base64"), data))
    return parts


def from_anthropic_request(body: dict[str, Any]) -> Canonical:
    out: Canonical = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if message["role"] == "user":
            parts: list[tuple[Any, ...]] = []
            for block in content:
                if block["type"] == "tool_result":
                    result = block["content"]
                    texts = [("text", result)] if isinstance(result, str) else _anthropic_parts(result)
                    out.append({"role": "toolResult", "id": block["tool_use_id"], "parts": texts})
                else:
                    parts.extend(_anthropic_parts([block]))
            if parts:
                out.append({"role": "user", "parts": parts})
        else:
            out.append({"role": "assistant", "parts": _anthropic_parts(content)})
    return out


def _anthropic_parts(blocks: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    parts: list[tuple[Any, ...]] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text":
            parts.append(("text", block["text"]))
        elif kind == "image":
            parts.append(("image", block["source"]["media_type"], block["source"]["data"]))
        elif kind == "thinking":
            parts.append(("thinking", block["thinking"], block.get("signature")))
        elif kind == "tool_use":
            parts.append(("toolCall", block["id"], block["name"], block["input"]))
    return parts


def from_llm_messages(messages: list[Any], api: str) -> Canonical:
    """Our converted context in the same shape, packed the way ``api`` packs it."""
    out: Canonical = []
    for message in messages:
        if isinstance(message, UserMessage):
            content = message.content
            blocks = [TextContent(text=content)] if isinstance(content, str) else content
            out.append({"role": "user", "parts": [_block(block) for block in blocks]})
        elif isinstance(message, AssistantMessage):
            out.append({"role": "assistant", "parts": _assistant_parts(message, api)})
        elif isinstance(message, ToolResultMessage):
            texts = [("text", b.text) for b in message.content if isinstance(b, TextContent)]
            images = [_block(b) for b in message.content if isinstance(b, ImageContent)]
            if api == "openai-completions":
                joined = "\n".join(text for _, text in texts)
                out.append({"role": "toolResult", "id": message.tool_call_id, "parts": [("text", joined)]})
                if images:
                    out.append({"role": "user", "parts": [("text", TOOL_IMAGES_NOTE), *images]})
            else:
                out.append({"role": "toolResult", "id": message.tool_call_id, "parts": texts + images})
        else:
            raise AssertionError(f"not a provider message: {message!r}")
    return out


def _assistant_parts(message: AssistantMessage, api: str) -> list[tuple[Any, ...]]:
    parts: list[tuple[Any, ...]] = []
    if api == "openai-completions":
        text = "".join(b.text for b in message.content if isinstance(b, TextContent))
        if text:
            parts.append(("text", text))
    for block in message.content:
        if isinstance(block, ToolCall):
            parts.append(("toolCall", block.id, block.name, block.arguments))
        elif api != "openai-completions" and isinstance(block, TextContent):
            parts.append(("text", block.text))
        elif api != "openai-completions" and isinstance(block, ThinkingContent):
            parts.append(("thinking", block.thinking, block.thinking_signature))
    return parts


def _block(block: Any) -> tuple[Any, ...]:
    if isinstance(block, TextContent):
        return ("text", block.text)
    if isinstance(block, ImageContent):
        return ("image", block.mime_type, block.data)
    raise AssertionError(f"unexpected user block {block!r}")
