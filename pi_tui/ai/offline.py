"""The offline demo model ``offline/demo``: a scripted "LLM" that needs no network and no key.

It exists so that a new user can try the whole program (streaming, thinking, tool cards,
sessions, /tree) on a machine with nothing configured, and so tests get a model whose output is
fully determined by the context. It goes through the same :class:`MessageBuilder` as the real
APIs, so everything downstream sees the ordinary event stream.

What it answers depends only on the context:

- the last message is a tool result -> a short summary of the result(s), then ``stop``;
- the last user message starts with ``read <path>``, ``run <command>`` (or ``!<command>``),
  ``edit <path>: <old> -> <new>`` or ``write <path>: <content>`` -> one matching tool call, if that
  tool is in ``context.tools``;
- anything else -> an explanation of what the demo can do.

The first reply of a conversation always says that this is the demo model and how to configure a
real one. Text streams a few words per tick; ``PI_TUI_OFFLINE_DELAY`` (seconds per tick, ``0`` for
as fast as possible) overrides :data:`TICK_SECONDS`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.types import Context, Model, ModelCost, StreamOptions
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

TICK_SECONDS = 0.02
"""Pause between two chunks: slow enough to watch text arrive, fast enough not to bore."""
WORDS_PER_TICK = 3
ARGUMENT_CHARS_PER_TICK = 24
DELAY_ENV = "PI_TUI_OFFLINE_DELAY"
SUMMARY_LINES = 6
SUMMARY_LINE_CHARS = 160

DEMO_MODEL = Model(
    id="demo",
    name="Offline demo (no network)",
    api="offline",
    provider="offline",
    base_url="",
    reasoning=True,
    input=["text"],
    context_window=128_000,
    max_tokens=8_192,
    cost=ModelCost(),
)

INTRO = (
    "**This is the offline demo model (`offline/demo`).** It runs without network or API key and "
    "its replies are scripted, so it cannot really help with your code. To talk to a real model, "
    "type `/login` and paste an API key, set one such as `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` "
    "(or pass `--api-key`), or add a provider to `models.json` in your agent folder, then pick it "
    "with `/model` or `--model`.\n\n"
)

EXAMPLES = {
    "read": "`read README.md`",
    "bash": "`run ls`",
    "edit": "`edit notes.txt: old text -> new text`",
    "write": "`write notes.txt: hello`",
}

_POLITE = r"(?:(?:please|can you|could you)\s+)?"
_READ = re.compile(rf"^{_POLITE}read\s+(?P<path>`[^`]+`|\"[^\"]+\"|'[^']+'|\S+)\s*[.!?]?\s*$", re.I)
_RUN = re.compile(rf"^{_POLITE}(?:run|execute)\s+(?P<command>.+)$", re.I | re.S)
_BANG = re.compile(r"^[!$]\s*(?P<command>\S.*)$", re.S)
_EDIT = re.compile(
    rf"^{_POLITE}edit\s+(?P<path>[^:\n]+?)\s*:\s*(?P<old>.+?)\s*->\s?(?P<new>.*)$", re.I | re.S
)
_WRITE = re.compile(rf"^{_POLITE}write\s+(?P<path>[^:\s]+)\s*:[ \t]?(?P<content>.*)$", re.I | re.S)


@dataclass(frozen=True, slots=True)
class Plan:
    """What the demo will say and do for one context (pure data, so it can be tested alone)."""

    text: str
    thinking: str | None = None
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    call_id: str = ""


def tick_seconds() -> float:
    """Seconds between chunks: ``$PI_TUI_OFFLINE_DELAY`` when it is a number >= 0, else the default."""
    configured = os.environ.get(DELAY_ENV)
    if configured:
        try:
            return max(float(configured), 0.0)
        except ValueError:
            pass
    return TICK_SECONDS


async def run_offline(
    model: Model,
    context: Context,
    options: StreamOptions,
    builder: MessageBuilder,
    flush: Callable[[], None],
) -> None:
    """Stream the scripted reply for ``context`` into ``builder``, flushing after every tick.

    Cancellation (abort) arrives at one of the ``asyncio.sleep`` calls; the runner turns it into
    an ``aborted`` message, keeping what streamed.
    """
    delay = tick_seconds()
    plan = plan_reply(context, options.thinking if model.reasoning else "off")
    budget = options.max_tokens * 4 if options.max_tokens else None
    input_tokens = _estimate_input(context)
    builder.start()
    builder.set_usage(input=input_tokens, output=0)
    flush()
    produced = 0
    truncated = False

    if plan.thinking:
        index = builder.thinking_start()
        for chunk in _word_chunks(plan.thinking):
            builder.thinking_delta(index, chunk)
            produced += len(chunk)
            await _tick(flush, delay)
        builder.end(index)

    index = builder.text_start()
    for chunk in _word_chunks(plan.text):
        if budget is not None and produced + len(chunk) > budget:
            builder.text_delta(index, chunk[: max(budget - produced, 0)])
            truncated = True
            break
        builder.text_delta(index, chunk)
        produced += len(chunk)
        await _tick(flush, delay)
    builder.end(index)

    if plan.tool_name is not None and not truncated:
        index = builder.toolcall_start(plan.call_id, plan.tool_name)
        encoded = json.dumps(plan.arguments or {}, ensure_ascii=False)
        for start in range(0, len(encoded), ARGUMENT_CHARS_PER_TICK):
            fragment = encoded[start : start + ARGUMENT_CHARS_PER_TICK]
            builder.toolcall_delta(index, fragment)
            produced += len(fragment)
            await _tick(flush, delay)
        builder.end(index)

    builder.set_usage(input=input_tokens, output=max(produced // 4, 1))
    builder.finish("length" if truncated else None)
    flush()


async def _tick(flush: Callable[[], None], delay: float) -> None:
    flush()
    await asyncio.sleep(delay)  # also with 0: yields, so an abort can land between chunks


def _word_chunks(text: str) -> list[str]:
    """``WORDS_PER_TICK`` words (with their trailing whitespace) per chunk."""
    words = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
    return ["".join(words[i : i + WORDS_PER_TICK]) for i in range(0, len(words), WORDS_PER_TICK)]


# --- deciding what to say ---------------------------------------------------------------------


def plan_reply(context: Context, thinking: str = "off") -> Plan:
    """The reply for ``context``; the same context always gives the same plan."""
    messages = context.messages
    intro = "" if any(isinstance(m, AssistantMessage) for m in messages) else INTRO
    if messages and isinstance(messages[-1], ToolResultMessage):
        results = _trailing_tool_results(messages)
        plan = Plan(text=intro + _summarise(results))
        note = f"{len(results)} tool result(s) came back; summarise them and stop."
    else:
        prompt = _last_user_text(messages)
        plan = _plan_for_prompt(prompt, {tool.name for tool in context.tools}, len(messages))
        plan = Plan(intro + plan.text, None, plan.tool_name, plan.arguments, plan.call_id)
        note = _thinking_note(prompt, plan)
    if thinking != "off":
        plan = Plan(plan.text, note, plan.tool_name, plan.arguments, plan.call_id)
    return plan


def _plan_for_prompt(prompt: str, tools: set[str], position: int) -> Plan:
    text = prompt.strip()
    request = _parse_request(text)
    if request is None:
        return Plan(text=_chat_reply(text, tools))
    name, arguments, preface = request
    if name not in tools:
        return Plan(
            text=f"I would use the `{name}` tool for that, but it is not enabled in this session "
            "(see `--tools` / `--no-tools`), so there is nothing I can do here."
        )
    call_id = _call_id(position, name, arguments)
    return Plan(text=preface, tool_name=name, arguments=arguments, call_id=call_id)


def _parse_request(text: str) -> tuple[str, dict[str, Any], str] | None:
    """``(tool, arguments, preface)`` when ``text`` is one of the demo's tool phrases."""
    if match := _READ.match(text):
        path = _unquote(match["path"])
        return "read", {"path": path}, f"Let me read `{path}`."
    if match := _EDIT.match(text):
        path, old, new = _unquote(match["path"]), match["old"], match["new"].rstrip()
        edits = [{"oldText": old, "newText": new}]
        return "edit", {"path": path, "edits": edits}, f"Editing `{path}`: `{old}` becomes `{new}`."
    if match := _WRITE.match(text):
        path, content = _unquote(match["path"]), match["content"]
        preface = f"Writing {len(content)} characters to `{path}`."
        return "write", {"path": path, "content": content}, preface
    if match := _RUN.match(text) or _BANG.match(text):
        command = _unquote(match["command"].strip())
        return "bash", {"command": command}, f"Running `{command}`."
    return None


def _chat_reply(prompt: str, tools: set[str]) -> str:
    words = len(prompt.split())
    first_line = prompt.splitlines()[0] if prompt else ""
    quoted = first_line if len(first_line) <= 80 else first_line[:77] + "..."
    opening = (
        f"You wrote “{quoted}” ({words} word{'s' if words != 1 else ''}). "
        if prompt
        else "There is no question for me to answer. "
    )
    body = (
        "I am only the offline demo, so I answer every chat message with this same script "
        "instead of a real answer."
    )
    examples = [example for tool, example in EXAMPLES.items() if tool in tools]
    if examples:
        lines = "\n".join(f"- {example}" for example in examples)
        return f"{opening}{body}\n\nTo watch the tools at work, send one of:\n{lines}\n"
    return f"{opening}{body}\n\nNo tools are enabled in this session, so I can only chat.\n"


def _thinking_note(prompt: str, plan: Plan) -> str:
    if plan.tool_name is not None:
        return f"The user asked for the `{plan.tool_name}` tool; call it with {json.dumps(plan.arguments)}."
    return f"The message has {len(prompt)} characters and no tool phrase; explain what the demo can do."


def _summarise(results: list[ToolResultMessage]) -> str:
    parts: list[str] = []
    for result in results:
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        images = sum(isinstance(block, ImageContent) for block in result.content)
        lines = text.splitlines()
        shown = [
            line if len(line) <= SUMMARY_LINE_CHARS else line[:SUMMARY_LINE_CHARS] + "…"
            for line in lines[:SUMMARY_LINES]
        ]
        count = f"{len(lines)} line{'s' if len(lines) != 1 else ''}"
        extra = f" and {images} image{'s' if images != 1 else ''}" if images else ""
        if result.is_error:
            head = f"The `{result.tool_name}` tool reported an error ({count}{extra})"
        else:
            head = f"The `{result.tool_name}` tool returned {count}{extra}"
        if shown:
            more = f" (first {len(shown)} shown)" if len(lines) > len(shown) else ""
            parts.append(f"{head}{more}:\n\n```\n" + "\n".join(shown) + "\n```")
        else:
            parts.append(f"{head}.")
    parts.append("That is all the offline demo does with a result; send another command to continue.")
    return "\n\n".join(parts) + "\n"


# --- small helpers ------------------------------------------------------------------------------


def _trailing_tool_results(messages: list[Any]) -> list[ToolResultMessage]:
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolResultMessage):
            break
        results.append(message)
    return results[::-1]


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            return "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    return ""


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "`\"'":
        return value[1:-1]
    return value


def _call_id(position: int, name: str, arguments: dict[str, Any]) -> str:
    """Deterministic, and different for the same request at another point of the conversation."""
    digest = zlib.crc32(json.dumps([position, name, arguments], sort_keys=True).encode())
    return f"offline_{position}_{digest:08x}"


def _estimate_input(context: Context) -> int:
    """Rough token count (characters / 4) of everything the request would send."""
    chars = len(context.system_prompt)
    for message in context.messages:
        chars += len(json.dumps(message.to_json_dict(), ensure_ascii=False))
    for tool in context.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return max(chars // 4, 1)
