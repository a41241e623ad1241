"""OpenAI Codex (``openai-codex-responses``) over real loopback HTTP: the request pi 1.5.2 sends to
``{baseUrl}/codex/responses`` with a ChatGPT login's access token, and Codex streams (tests/data/
openai_codex, shaped as the Responses API documents its events; see the README there) coming back
as messages.

The access tokens are JWTs made here, carrying (or not) the ChatGPT account id claim.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from pi_tui.ai.http import close_shared_client
from pi_tui.ai.stream import stream_message
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from tests.support.builders import tool_result, user
from tests.support.model_server import HttpError, ModelServer, Recording

DATA = Path(__file__).resolve().parents[1] / "data" / "openai_codex"
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
API = "openai-codex-responses"
ACCOUNT = "acct-7d41c2e9-0b3a"
BASH = Tool(
    name="bash",
    description="Run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)


def b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def access_token(claims: dict[str, Any]) -> str:
    """A JWT as ChatGPT's login issues it (the signature is not checked by the client)."""
    return f"{b64url({'alg': 'RS256', 'typ': 'JWT'})}.{b64url(claims)}.c2lnbmF0dXJl"


TOKEN = access_token(
    {
        "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT, "chatgpt_plan_type": "plus"},
        "exp": 4102444800,
    }
)


def codex_model(server: ModelServer, model_id: str = "gpt-6-sol", **fields: Any) -> Model:
    """A Codex model as pi's catalogue has it: base URL ``.../backend-api``, reasoning."""
    values: dict[str, Any] = {
        "id": model_id,
        "api": API,
        "provider": "openai-codex",
        "base_url": server.base_url + "/backend-api",
        "reasoning": True,
        "input": ["text", "image"],
        "thinking_level_map": {"off": "none", "minimal": "low", "xhigh": "xhigh", "max": "max"},
    }
    values.update(fields)
    return Model(**values)


def options(**overrides: Any) -> StreamOptions:
    values: dict[str, Any] = {"api_key": TOKEN, "base_delay": 0.01, "max_retries": 0}
    values.update(overrides)
    return StreamOptions(**values)


def stream(model: Model, context: Context, opts: StreamOptions | None = None) -> AssistantMessage:
    async def main() -> AssistantMessage:
        async with httpx.AsyncClient() as http:
            try:
                events = stream_message(model, context, opts or options(), http=http)
                async for _ in events:
                    pass
                return await events.result()
            finally:
                await close_shared_client()

    return asyncio.run(asyncio.wait_for(main(), 20))


def texts(message: AssistantMessage, kind: type) -> list[str]:
    return [
        getattr(b, "text", None) or getattr(b, "thinking", "") for b in message.content if isinstance(b, kind)
    ]


def test_text_with_the_headers_and_body_pi_sends() -> None:
    with ModelServer(Recording(DATA / "text.sse", chunk_size=9)) as server:
        context = Context(system_prompt="You are pi.", messages=[user("Say hello")])
        message = stream(codex_model(server), context, options(session_id="0198c2d4-session", max_tokens=999))
        request = server.last_request
    assert request.path == "/backend-api/codex/responses"
    assert request.header("authorization") == f"Bearer {TOKEN}"
    assert request.header("chatgpt-account-id") == ACCOUNT
    assert request.header("openai-beta") == "responses=experimental"
    assert request.header("originator") == "pi"
    assert request.header("session-id") == request.header("x-client-request-id") == "0198c2d4-session"
    assert request.header("accept") == "text/event-stream"
    assert (request.header("user-agent") or "").startswith("pi-tui/")
    assert request.body == {
        "model": "gpt-6-sol",
        "store": False,
        "stream": True,
        "instructions": "You are pi.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Say hello"}]}],
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0198c2d4-session",
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "none"},  # thinking off: the map's "off" effort, not the default
    }
    assert message.stop_reason == "stop" and message.error_message is None
    assert texts(message, TextContent) == ["Hello from Codex."]
    assert message.response_id == "resp_0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f"
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (176, 1024, 9)


def test_reasoning_summary_then_text() -> None:
    with ModelServer(Recording(DATA / "reasoning-summary.sse", chunk_size=17)) as server:
        context = Context(messages=[user("2+2?")])  # no system prompt: pi's default instructions
        message = stream(codex_model(server), context, options(thinking="minimal"))
        body = server.last_request.body
    assert body["instructions"] == "You are a helpful assistant."
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}  # minimal runs as the map's "low"
    assert "prompt_cache_key" not in body and "max_output_tokens" not in body
    assert [type(block) for block in message.content] == [ThinkingContent, TextContent]
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == (
        "**Checking the sum**\n\nTwo plus two is four.\n\n**Answering**\n\nReply with the number."
    )
    item = json.loads(thinking.thinking_signature or "")
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAAAB")
    assert texts(message, TextContent) == ["4"]
    assert (message.usage.input, message.usage.output) == (40, 96)


def test_function_call_ending_with_response_done_and_the_next_turn() -> None:
    with ModelServer(
        Recording(DATA / "function-call.sse", chunk_size=13), Recording(DATA / "text.sse")
    ) as server:
        model = codex_model(server)
        context = Context(system_prompt="sys", messages=[user("list src")], tools=[BASH])
        first = stream(model, context, options(thinking="high"))
        call = first.content[-1]
        assert isinstance(call, ToolCall)
        context.messages += [first, tool_result(call.id, "a.py\nb.py")]
        stream(model, context, options(thinking="high"))
        asked, answered = server.requests
    assert asked.body["tools"] == [
        {
            "type": "function",
            "name": "bash",
            "description": "Run a command",
            "parameters": BASH.parameters,
            "strict": None,
        }
    ]
    assert asked.body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert call.id == "call_Q8mZrT4vXw2NpL6s|fc_2b3c4d5e6f708192a3b4c5d6e7f8091a02"
    assert (call.name, call.arguments) == ("bash", {"command": "ls -la src"})
    assert first.stop_reason == "toolUse"  # response.done ended it, as response.completed would
    assert (first.usage.input, first.usage.cache_read, first.usage.output) == (52, 2048, 31)
    sent = answered.body["input"]
    assert [item.get("type", item.get("role")) for item in sent] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert sent[1]["encrypted_content"].startswith("gAAAAAB")  # the reasoning goes back verbatim
    assert sent[2]["call_id"] == "call_Q8mZrT4vXw2NpL6s" and sent[2]["id"].startswith("fc_")
    assert sent[3] == {
        "type": "function_call_output",
        "call_id": "call_Q8mZrT4vXw2NpL6s",
        "output": "a.py\nb.py",
    }
    assert answered.body["instructions"] == "sys"


def test_error_event_is_the_message_error() -> None:
    with ModelServer(Recording(DATA / "error-event.sse")) as server:
        message = stream(codex_model(server), Context(messages=[user("x")]))
    assert message.stop_reason == "error"
    assert message.error_message == "Codex error: Your input exceeds the context window of this model."


def test_a_usage_limit_is_said_in_pis_words_and_not_retried() -> None:
    """The subscription's limit lifts at ``resets_at`` (hours away): one request, pi's sentence."""
    resets_at = int(time.time()) + 42 * 60
    body = {"error": {"code": "usage_limit_reached", "plan_type": "PLUS", "resets_at": resets_at}}
    with ModelServer() as server:
        server.queue(HttpError(429, body=body), HttpError(429, body=body))
        message = stream(codex_model(server), Context(messages=[user("x")]), options(max_retries=2))
        sent = len(server.requests)
    assert message.stop_reason == "error"
    assert message.error_message in (
        f"You have hit your ChatGPT usage limit (plus plan). Try again in ~{minutes} min."
        for minutes in (41, 42)
    )
    assert sent == 1


def test_a_passing_rate_limit_is_retried_and_then_the_answer_streams() -> None:
    with ModelServer() as server:
        limited = HttpError(429, body={"error": {"code": "rate_limit_exceeded", "message": "slow down"}})
        server.queue(limited, Recording(DATA / "text.sse"))
        message = stream(codex_model(server), Context(messages=[user("x")]), options(max_retries=2))
        sent = len(server.requests)
    assert message.stop_reason == "stop" and sent == 2


def test_configured_headers_cannot_replace_the_credentials() -> None:
    with ModelServer() as server:
        model = codex_model(
            server,
            headers={"Originator": "my-tool", "ChatGPT-Account-Id": "acct-other", "Authorization": "x"},
        )
        message = stream(model, Context(messages=[user("hi")]))
        request = server.last_request
    assert message.stop_reason == "stop", message.error_message
    assert request.header("originator") == "my-tool"
    assert request.header("chatgpt-account-id") == ACCOUNT
    assert request.header("authorization") == f"Bearer {TOKEN}"


def test_a_token_without_the_account_claim_is_one_clear_line_and_no_request() -> None:
    no_claim = access_token({"https://api.openai.com/auth": {"chatgpt_plan_type": "plus"}, "exp": 4102444800})
    with ModelServer() as server:
        model = codex_model(server)
        without = stream(model, Context(messages=[user("hi")]), options(api_key=no_claim))
        opaque = stream(model, Context(messages=[user("hi")]), options(api_key="sk-not-a-jwt"))
        assert server.requests == []
    for message in (without, opaque):
        assert message.stop_reason == "error"
        error = message.error_message or ""
        assert "\n" not in error and "Traceback" not in error
        assert "ChatGPT account id" in error and "/login" in error


def _print_run(
    agent_dir: Path, cwd: Path, server: ModelServer, access: str
) -> subprocess.CompletedProcess[str]:
    """``pi-tui -p`` on openai-codex with a login saved as pi saves it and the base URL moved here."""
    login = {
        "type": "oauth",
        "access": access,
        "refresh": "rt-1",
        "expires": int(time.time() * 1000) + 3_600_000,
    }
    (agent_dir / "auth.json").write_text(json.dumps({"openai-codex": {**login, "accountId": ACCOUNT}}))
    (agent_dir / "auth.json").chmod(0o600)
    moved = {"providers": {"openai-codex": {"baseUrl": server.base_url + "/backend-api"}}}
    (agent_dir / "models.json").write_text(json.dumps(moved))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [SCRIPT, "--no-session", "--model", "openai-codex/gpt-6-sol", "-p", "hi there"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "PI_CODING_AGENT_DIR": str(agent_dir)},
        timeout=60,
    )


def test_pi_tui_print_with_a_chatgpt_login_saved_by_pi(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer() as server:
        done = _print_run(agent_dir, tmp_path, server, TOKEN)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: hi there\n"
        request = server.last_request
    assert request.path == "/backend-api/codex/responses"
    assert request.header("authorization") == f"Bearer {TOKEN}"
    assert request.header("chatgpt-account-id") == ACCOUNT
    assert request.body["prompt_cache_key"] == request.header("session-id")
    assert request.body["instructions"] and request.body["input"][-1]["content"][0]["text"] == "hi there"


def test_pi_tui_print_with_a_token_without_the_claim_is_one_line(agent_dir: Path, tmp_path: Path) -> None:
    no_claim = access_token({"https://api.openai.com/auth": {"chatgpt_plan_type": "plus"}})
    with ModelServer() as server:
        done = _print_run(agent_dir, tmp_path, server, no_claim)
        assert server.requests == []
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "ChatGPT account id" in done.stderr and "/login openai-codex" in done.stderr
