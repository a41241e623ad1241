"""The headers GitHub Copilot's API wants on each request, which depend on the conversation.

pi sends them with every Copilot request whatever the API kind (Anthropic Messages, OpenAI
completions or Responses): ``X-Initiator`` says whether the user asked (the last message is
the user's) or the agent goes on by itself (after a tool result), ``Openai-Intent`` names the
kind of work, and ``Copilot-Vision-Request`` announces images. The static editor headers come
with the models (the catalogue's ``headers``) and with the login (:mod:`.refresh`).
"""

from __future__ import annotations

from pi_tui.ai.types import Context
from pi_tui.messages import ImageContent, ToolResultMessage, UserMessage

COPILOT_PROVIDER = "github-copilot"


def has_images(context: Context) -> bool:
    """An image in a user message or a tool result (Copilot routes those to its vision models)."""
    return any(
        isinstance(block, ImageContent)
        for message in context.messages
        if isinstance(message, (UserMessage, ToolResultMessage)) and not isinstance(message.content, str)
        for block in message.content
    )


def copilot_headers(context: Context) -> dict[str, str]:
    """pi's per-request Copilot headers for ``context``."""
    last = context.messages[-1] if context.messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and not isinstance(last, UserMessage) else "user",
        "Openai-Intent": "conversation-edits",
    }
    if has_images(context):
        headers["Copilot-Vision-Request"] = "true"
    return headers
