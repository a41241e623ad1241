"""Continuing a session on another API kind / provider / model sends what the real pi sends.

Each folder of ``tests/data/cross-provider`` holds a session written by one API kind and, for
each target in its ``targets.json``, the request body the real pi 1.5.2 sent when it continued
that file with ``-p next`` on that target (made by ``make.py`` there). pi-tui's request builder
must produce the same conversation array: ``messages`` (Anthropic, Chat Completions), ``input``
(Responses) or ``contents`` (Google), whole, system prompt aside (that one is ours).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai import anthropic, google, openai_completions, openai_responses
from pi_tui.ai.types import Context, Model
from pi_tui.messages import TextContent, UserMessage
from pi_tui.session import SessionManager, convert_to_llm

DATA = Path(__file__).resolve().parents[1] / "data" / "cross-provider"
CASES = sorted(path.name for path in DATA.iterdir() if (path / "targets.json").is_file())
PAIRS = [(case, label) for case in CASES for label in json.loads((DATA / case / "targets.json").read_text())]


def conversation(api: str, body: dict[str, Any]) -> list[Any]:
    """The conversation part of a request body, without the system prompt."""
    if api == "anthropic-messages":
        return body["messages"]
    if api == "google-generative-ai":
        return body["contents"]
    key = "input" if api == "openai-responses" else "messages"
    return [item for item in body[key] if item.get("role") not in ("system", "developer")]


def ours(api: str, model: Model, context: Context) -> list[Any]:
    if api == "anthropic-messages":
        return anthropic.convert_messages(model, context)
    if api == "openai-completions":
        return openai_completions.convert_messages(model, context)
    if api == "openai-responses":
        return openai_responses.convert_input(model, context)
    return google.convert_messages(model, context)


def context_of(case: str, tmp_path: Path) -> Context:
    copy = tmp_path / "session.jsonl"
    shutil.copy(DATA / case / "session.jsonl", copy)
    manager = SessionManager.open(copy)
    try:
        messages = convert_to_llm(manager.build_session_context().messages)
    finally:
        manager.close()
    messages.append(UserMessage(content=[TextContent(text="next")]))
    return Context(system_prompt="", messages=messages)


@pytest.mark.parametrize(("case", "label"), PAIRS)
def test_same_conversation_as_pi(case: str, label: str, tmp_path: Path) -> None:
    target = json.loads((DATA / case / "targets.json").read_text())[label]
    model = Model(id=target["model"], api=target["api"], provider=target["provider"], input=target["input"])
    expected = conversation(target["api"], json.loads((DATA / case / f"request-{label}.json").read_text()))
    assert ours(target["api"], model, context_of(case, tmp_path)) == expected


def test_every_pair_of_api_kinds_is_covered() -> None:
    sources = {"responses-source", "anthropic-source", "google-source", "completions-source"}
    apis = {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"}
    for case in sources:
        targets = json.loads((DATA / case / "targets.json").read_text())
        assert {target["api"] for target in targets.values()} == apis
