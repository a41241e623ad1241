"""Amazon Bedrock (``bedrock-converse-stream``) over real loopback HTTP.

The server (tests/support/bedrock_server.py) recomputes every SigV4 signature on its own and
answers with AWS event-stream frames built from the ConverseStream scripts in
tests/data/bedrock/, written a few bytes at a time. Text, thinking and tool calls must stream
into the right message; usage and stop reasons must map; exceptions must fail with a clear
message (and be retried where AWS says so); a bearer token must go out as ``Bearer``; and
``pi-tui -p`` must run end to end against it through a models.json ``baseUrl`` override.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.stream import RetryInfo, stream_message
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from tests.support.bedrock_server import BedrockServer, FakeSsoPortal, FakeSts, HttpError, Keys, load_script
from tests.support.builders import tool_result, user

KEYS = Keys("AKIDLOOPBACKTEST", "loopback/secret+key/EXAMPLE", region="eu-west-3")
TOKEN_KEYS = Keys(
    "ASIALOOPBACKTEST", "another/secret", session_token="FwoGZXIvYXdzE-session", region="us-east-1"
)
CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.fixture(autouse=True)
def _no_ambient_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Only what a test gives counts: no AWS variables or ~/.aws of the machine."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


def bedrock_model(server: BedrockServer, model_id: str = CLAUDE, **extra: Any) -> Model:
    return Model(
        id=model_id,
        name=extra.pop("name", "Claude Sonnet 4.5"),
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        base_url=server.base_url,
        reasoning=True,
        input=["text", "image"],
        max_tokens=64_000,
        **extra,
    )


def key_env(keys: Keys) -> dict[str, str]:
    env = {"AWS_ACCESS_KEY_ID": keys.access_key_id, "AWS_SECRET_ACCESS_KEY": keys.secret_access_key}
    if keys.session_token:
        env["AWS_SESSION_TOKEN"] = keys.session_token
    env["AWS_REGION"] = keys.region
    return env


async def run(model: Model, context: Context, options: StreamOptions) -> tuple[AssistantMessage, list[str]]:
    stream = stream_message(model, context, options)
    kinds = [event.type async for event in stream]
    return await stream.result(), kinds


def ask(text: str = "hello") -> Context:
    return Context(system_prompt="You are terse.", messages=[user(text)])


async def test_text_streams_and_the_signature_covers_what_was_sent() -> None:
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        message, kinds = await run(bedrock_model(server), ask(), StreamOptions(provider_env=key_env(KEYS)))
    assert message.stop_reason == "stop", message.error_message
    assert message.content == [TextContent(text="Hello from Bédrock 🪨")]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("text_delta") == 2
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (25, 9, 1200, 300)
    assert usage.total_tokens == 1534
    (request,) = server.requests
    assert request.auth_ok, request.auth_problem
    assert request.path == "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert "Credential=AKIDLOOPBACKTEST/" in request.headers["authorization"]
    assert "/eu-west-3/bedrock/aws4_request" in request.headers["authorization"]
    body = request.json
    assert body["system"] == [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}]
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "hello"}, {"cachePoint": {"type": "default"}}]}
    ]
    assert body["inferenceConfig"] == {"maxTokens": 64_000}
    assert "additionalModelRequestFields" not in body


async def test_thinking_streams_with_its_signature_and_maps_max_tokens() -> None:
    with BedrockServer([load_script("thinking.json")], keys=TOKEN_KEYS) as server:
        options = StreamOptions(provider_env=key_env(TOKEN_KEYS), thinking="medium", max_tokens=4000)
        message, kinds = await run(bedrock_model(server), ask("6*7?"), options)
    assert message.stop_reason == "length", message.error_message
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "The user wants a short answer."
    assert thinking.thinking_signature == "EqQBCkYIBxgCKkBsigpart2=="
    assert text == TextContent(text="Forty-two.")
    assert "thinking_start" in kinds and "thinking_end" in kinds
    (request,) = server.requests
    assert request.auth_ok, request.auth_problem
    assert request.headers["x-amz-security-token"] == TOKEN_KEYS.session_token
    body = request.json
    # pi's budget for medium (8192) on top of the answer's 4000 tokens, interleaved thinking on.
    assert body["inferenceConfig"] == {"maxTokens": 12_192}
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }


async def test_adaptive_claude_gets_an_effort_not_a_budget() -> None:
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        model = bedrock_model(server, "us.anthropic.claude-opus-4-6-v1", name="Claude Opus 4.6")
        options = StreamOptions(provider_env=key_env(KEYS), thinking="low")
        message, _ = await run(model, ask(), options)
    assert message.stop_reason == "stop", message.error_message
    fields = server.requests[0].json["additionalModelRequestFields"]
    assert fields == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "low"},
    }


async def test_a_tool_call_streams_into_the_message_and_the_history_goes_back() -> None:
    read = Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}})
    earlier = AssistantMessage(
        content=[
            ThinkingContent(thinking="Check it.", thinking_signature="sig-1"),
            ToolCall(id="tooluse_1", name="read", arguments={"path": "a.txt", "": "dropped"}),
        ],
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        model=CLAUDE,
        stop_reason="toolUse",
        timestamp=1,
    )
    context = Context(
        system_prompt="",
        messages=[user("read a"), earlier, tool_result("tooluse_1", "contents of a"), user("and README")],
        tools=[read],
    )
    with BedrockServer([load_script("tool_call.json")], keys=KEYS) as server:
        message, kinds = await run(bedrock_model(server), context, StreamOptions(provider_env=key_env(KEYS)))
    assert message.stop_reason == "toolUse", message.error_message
    text, call = message.content
    assert text == TextContent(text="Let me look.")
    assert call == ToolCall(
        id="tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", name="read", arguments={"path": "README.md", "limit": 5}
    )
    assert kinds.count("toolcall_delta") == 2 and "toolcall_end" in kinds
    assert (message.usage.input, message.usage.output) == (310, 57)
    body = server.requests[0].json
    assert "system" not in body
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "read",
                    "description": "Read a file",
                    "inputSchema": {"json": read.parameters},
                }
            }
        ]
    }
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "read a"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Check it.", "signature": "sig-1"}}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "read", "input": {"path": "a.txt"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"text": "contents of a"}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "user", "content": [{"text": "and README"}, {"cachePoint": {"type": "default"}}]},
    ]


async def test_encrypted_reasoning_is_kept_as_base64_and_marked_redacted() -> None:
    with BedrockServer([load_script("redacted.json")], keys=KEYS) as server:
        model = bedrock_model(server, "openai.gpt-oss-120b-1:0", name="gpt-oss-120b")
        message, _ = await run(model, ask(), StreamOptions(provider_env=key_env(KEYS), thinking="xhigh"))
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.redacted
    assert thinking.thinking == "[Reasoning redacted]"
    assert thinking.thinking_signature == "AAECAwQFBg=="  # the two chunks' bytes, joined
    assert text == TextContent(text="Done.")
    body = server.requests[0].json
    assert body["additionalModelRequestFields"] == {"reasoning_effort": "high"}
    assert "cachePoint" not in json.dumps(body)  # only Claude gets cache points


async def test_an_exception_after_output_fails_with_a_clear_message_keeping_the_text() -> None:
    with BedrockServer([load_script("throttled_midstream.json")], keys=KEYS) as server:
        message, kinds = await run(bedrock_model(server), ask(), StreamOptions(provider_env=key_env(KEYS)))
    assert message.stop_reason == "error"
    assert message.error_message == "Throttling error: Too many tokens, please wait before trying again."
    assert message.content == [TextContent(text="Partial")]
    assert kinds[-1] == "error" and len(server.requests) == 1


async def test_throttling_before_output_is_retried_and_each_attempt_is_signed_again() -> None:
    retries: list[RetryInfo] = []
    replies = [load_script("throttled_at_start.json"), load_script("text.json")]
    with BedrockServer(replies, keys=KEYS) as server:
        stream = stream_message(
            bedrock_model(server),
            ask(),
            StreamOptions(provider_env=key_env(KEYS), base_delay=0.01),
            on_retry=retries.append,
        )
        async for _ in stream:
            pass
        message = await stream.result()
    assert message.stop_reason == "stop", message.error_message
    assert [r.error for r in retries] == [
        "Throttling error: Too many requests, please wait before trying again."
    ]
    assert len(server.requests) == 2 and all(r.auth_ok for r in server.requests)


async def test_the_signature_covers_the_bytes_after_the_payload_transform() -> None:
    """Secret hiding (the agent's transform_payload) changes the bytes after the body is built;
    the server checks the signature over what it received, so it must be computed after."""

    def hide(_body: Any, payload: bytes, _credentials: Any) -> bytes:
        return payload.replace(b"hunter2", b"*******")

    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        options = StreamOptions(provider_env=key_env(KEYS), transform_payload=hide)
        message, _ = await run(bedrock_model(server), ask("my password is hunter2"), options)
    assert message.stop_reason == "stop", message.error_message
    (request,) = server.requests
    assert request.auth_ok, request.auth_problem
    assert b"hunter2" not in request.body and b"my password is *******" in request.body


async def test_a_validation_exception_is_not_retried() -> None:
    with BedrockServer([load_script("validation.json"), load_script("text.json")], keys=KEYS) as server:
        message, _ = await run(
            bedrock_model(server), ask(), StreamOptions(provider_env=key_env(KEYS), base_delay=0.01)
        )
    assert (
        message.error_message == "Validation error: The model returned the following errors: messages.0: bad"
    )
    assert len(server.requests) == 1


async def test_a_guardrail_stop_is_an_error_naming_the_reason() -> None:
    with BedrockServer([load_script("guardrail.json")], keys=KEYS) as server:
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=key_env(KEYS)))
    assert message.stop_reason == "error"
    assert message.error_message == "Provider stopped with: guardrail_intervened"


async def test_a_wrong_secret_is_refused_by_the_server_and_reported() -> None:
    wrong = {**key_env(KEYS), "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=wrong))
    assert message.stop_reason == "error"
    assert "HTTP 403" in (message.error_message or "") and "signature mismatch" in (
        message.error_message or ""
    )
    assert "not-the-secret" not in (message.error_message or "")


async def test_the_bearer_token_goes_out_as_bearer_without_signing() -> None:
    with BedrockServer([load_script("text.json")], bearer="bedrock-api-key-ABC") as server:
        env = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-ABC", **key_env(KEYS)}
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert message.stop_reason == "stop", message.error_message
    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer bedrock-api-key-ABC"
    assert "x-amz-date" not in request.headers


async def test_keys_from_a_profile_in_the_shared_credentials_file(tmp_path: Path) -> None:
    credentials = tmp_path / "creds"
    credentials.write_text(
        f"[default]\naws_access_key_id = nope\naws_secret_access_key = nope\n\n"
        f"[work]\naws_access_key_id = {KEYS.access_key_id}\n"
        f"aws_secret_access_key = {KEYS.secret_access_key}\n"
    )
    env = {"AWS_PROFILE": "work", "AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_REGION": KEYS.region}
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert message.stop_reason == "stop", message.error_message
    assert server.requests[0].auth_ok


async def test_container_credentials_are_fetched_from_the_full_uri() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Agent(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            data = json.dumps(
                {
                    "AccessKeyId": TOKEN_KEYS.access_key_id,
                    "SecretAccessKey": TOKEN_KEYS.secret_access_key,
                    "Token": TOKEN_KEYS.session_token,
                    "Expiration": "2099-01-01T00:00:00Z",
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    agent = ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    threading.Thread(target=agent.serve_forever, daemon=True).start()
    try:
        env = {
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": f"http://127.0.0.1:{agent.server_address[1]}/creds",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN": "agent-token",
            "AWS_REGION": TOKEN_KEYS.region,
        }
        with BedrockServer([load_script("text.json")], keys=TOKEN_KEYS) as server:
            message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    finally:
        agent.shutdown()
        agent.server_close()
    assert message.stop_reason == "stop", message.error_message
    assert seen == ["agent-token"] and server.requests[0].auth_ok


ROLE_KEYS = Keys("ASIAROLEGRANTED", "role/secret", session_token="role-session-token", region="eu-west-3")


async def test_a_role_profile_is_assumed_through_sts_with_the_source_keys(tmp_path: Path) -> None:
    source = Keys("AKIDSOURCE", "source/secret", region="eu-west-3")
    config = tmp_path / "config"
    config.write_text(
        "[profile base]\n"
        f"aws_access_key_id = {source.access_key_id}\naws_secret_access_key = {source.secret_access_key}\n\n"
        "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/Admin\nsource_profile = base\n"
        "external_id = ext-1\nrole_session_name = pi-tui-test\n"
    )
    with FakeSts(ROLE_KEYS, source=source) as sts:
        env = {
            "AWS_PROFILE": "admin",
            "AWS_CONFIG_FILE": str(config),
            "AWS_REGION": "eu-west-3",
            "AWS_ENDPOINT_URL_STS": sts.url,
        }
        with BedrockServer([load_script("text.json"), load_script("text.json")], keys=ROLE_KEYS) as server:
            for _ in range(2):
                message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
                assert message.stop_reason == "stop", message.error_message
    assert [request.auth_ok for request in server.requests] == [True, True]
    assert server.requests[0].headers["x-amz-security-token"] == "role-session-token"
    (call,) = sts.calls  # the role's credentials serve the second request too
    assert call["Action"] == "AssumeRole" and call["RoleArn"] == "arn:aws:iam::123456789012:role/Admin"
    assert call["ExternalId"] == "ext-1" and call["RoleSessionName"] == "pi-tui-test"


async def test_a_web_identity_token_is_exchanged_for_role_credentials(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("eyJhbGciOi.service-account-token\n")
    with FakeSts(ROLE_KEYS, web_token="eyJhbGciOi.service-account-token") as sts:
        env = {
            "AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file),
            "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/eks-pod",
            "AWS_REGION": "eu-west-3",
            "AWS_ENDPOINT_URL_STS": sts.url,
        }
        with BedrockServer([load_script("text.json")], keys=ROLE_KEYS) as server:
            message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert message.stop_reason == "stop", message.error_message
    assert server.requests[0].auth_ok
    assert sts.calls[0]["Action"] == "AssumeRoleWithWebIdentity"


async def test_sts_refusing_the_role_is_one_line() -> None:
    with FakeSts(ROLE_KEYS, web_token="the-right-one") as sts, BedrockServer([], keys=ROLE_KEYS) as server:
        env = {
            "AWS_WEB_IDENTITY_TOKEN_FILE": __file__,  # a file whose text is not the token
            "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/other",
            "AWS_REGION": "eu-west-3",
            "AWS_ENDPOINT_URL_STS": sts.url,
        }
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert message.error_message == (
        "AWS STS refused to let us assume arn:aws:iam::123456789012:role/other: "
        "AccessDenied: wrong web identity token"
    )
    assert server.requests == []


def _sso_setup(tmp_path: Path, expires_at: str) -> Path:
    """An ``[sso-session]`` profile and the token cache ``aws sso login`` would have written."""
    config = tmp_path / "config"
    config.write_text(
        "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Developer\n\n"
        "[sso-session corp]\nsso_region = eu-west-1\nsso_start_url = https://corp.awsapps.com/start\n"
    )
    cache = Path(os.environ["HOME"]) / ".aws" / "sso" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(b"corp").hexdigest()
    (cache / f"{name}.json").write_text(
        json.dumps({"accessToken": "sso-access-token", "expiresAt": expires_at})
    )
    return config


async def test_an_sso_login_buys_the_role_credentials_from_the_portal(tmp_path: Path) -> None:
    config = _sso_setup(tmp_path, "2099-01-01T00:00:00Z")
    with FakeSsoPortal(ROLE_KEYS, token="sso-access-token") as portal:
        env = {"AWS_PROFILE": "dev", "AWS_CONFIG_FILE": str(config), "AWS_ENDPOINT_URL_SSO": portal.url}
        env["AWS_REGION"] = ROLE_KEYS.region
        with BedrockServer([load_script("text.json")], keys=ROLE_KEYS) as server:
            message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert message.stop_reason == "stop", message.error_message
    assert server.requests[0].auth_ok
    assert portal.calls == [{"account_id": "123456789012", "role_name": "Developer"}]


async def test_an_expired_sso_login_asks_for_aws_sso_login(tmp_path: Path) -> None:
    config = _sso_setup(tmp_path, "2001-01-01T00:00:00Z")
    with (
        FakeSsoPortal(ROLE_KEYS, token="sso-access-token") as portal,
        BedrockServer([], keys=ROLE_KEYS) as server,
    ):
        env = {"AWS_PROFILE": "dev", "AWS_CONFIG_FILE": str(config), "AWS_ENDPOINT_URL_SSO": portal.url}
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=env))
    assert (
        message.error_message
        == 'The AWS SSO login for profile "dev" has expired: run aws sso login --profile dev'
    )
    assert portal.calls == [] and server.requests == []


async def test_no_credentials_is_one_line_naming_what_to_set() -> None:
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        message, _ = await run(bedrock_model(server), ask(), StreamOptions())
    assert message.stop_reason == "error"
    assert message.error_message == (
        'No AWS credentials for provider "amazon-bedrock": set AWS_BEARER_TOKEN_BEDROCK, or '
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE for a profile in ~/.aws/credentials"
    )
    assert server.requests == []


async def test_an_http_error_answer_is_reported() -> None:
    with BedrockServer([HttpError(400, "Malformed input request")], keys=KEYS) as server:
        message, _ = await run(bedrock_model(server), ask(), StreamOptions(provider_env=key_env(KEYS)))
    assert message.error_message == "HTTP 400: Malformed input request"


def test_pi_tui_print_mode_against_the_loopback_bedrock(tmp_path: Path) -> None:
    """The installed script, with amazon-bedrock's ``baseUrl`` overridden in models.json and AWS
    keys in the environment: the reply prints and the request was signed."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    with BedrockServer([load_script("text.json")], keys=KEYS) as server:
        # Only the endpoint moves: the model, its API kind and its limits are the catalogue's.
        models = {"providers": {"amazon-bedrock": {"baseUrl": server.base_url}}}
        (agent_dir / "models.json").write_text(json.dumps(models))
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("AWS_") and key != "PI_CODING_AGENT_DIR"
        }
        env.update(key_env(KEYS), PI_CODING_AGENT_DIR=str(agent_dir), HOME=str(tmp_path / "home"))
        done = subprocess.run(
            [
                "pi-tui",
                "-p",
                "--no-session",
                "--provider",
                "amazon-bedrock",
                "--model",
                CLAUDE,
                "hello there",
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from Bédrock 🪨"
    (request,) = server.requests
    assert request.auth_ok, request.auth_problem
    assert request.path == "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    body = request.json
    assert body["messages"][-1]["content"][0] == {"text": "hello there"}
    assert body["inferenceConfig"]["maxTokens"] == 64_000  # the catalogue's limit for this model
