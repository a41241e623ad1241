"""Issue 17: the requests that are not chat turns hide secrets too (compaction, branch summary).

The chat path is proved end to end by tests/e2e/test_secrets_cli.py; these use pi's own fixture
sessions and the loopback server, with secrets taken from the words the summaries must carry.
The summaries get their request options from the agent, which wraps them with
``hiding_secrets``: the provider layer only runs the transformer it is handed.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from pi_tui.ai.types import Model, StreamOptions
from pi_tui.compaction import (
    collect_entries_for_branch_summary,
    compact,
    prepare_compaction,
    summarize_branch,
)
from pi_tui.config.settings import CompactionSettings
from pi_tui.secrets import active
from pi_tui.secrets.active import hiding_secrets
from pi_tui.secrets.entries import SecretEntry
from pi_tui.secrets.obfuscator import Obfuscator
from pi_tui.secrets.sources import SecretsSetup
from tests.integration.test_compaction import FIXTURE_06, FIXTURE_08, entry_of, options, run, session_until
from tests.support.model_server import ModelServer, Scripted


def hide(*values: str) -> None:
    plain = {value: SecretEntry("plain", value, source="test") for value in values}
    active.install(SecretsSetup(Obfuscator(b"k" * 32, plain), [], {"test": len(plain)}, True))


def agent_options(model: Model) -> StreamOptions:
    """The request options as the agent hands them to a summary (see AgentSession)."""
    return hiding_secrets(lambda _model: options())(model)


def sent_with_hidden(secret: str, request_for: Callable[[Model], Coroutine[Any, Any, Any]]) -> bytes:
    """The one request body a summary call sends while ``secret`` is hidden."""
    hide(secret)
    with ModelServer(Scripted(text="summary")) as server:
        run(request_for(server.model("openai-completions", id="fake-model")))
        (request,) = server.requests
    return request.raw_body


def test_a_compaction_request_hides_secrets(tmp_path: Path) -> None:
    stored = entry_of(FIXTURE_08, "compaction")
    manager = session_until(FIXTURE_08, stored["parentId"], tmp_path)
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=40))
    assert preparation is not None
    secret = "tiny demo project"
    assert secret in str([entry.model_dump() for entry in manager.get_branch()])
    body = sent_with_hidden(secret, lambda model: compact(preparation, model, agent_options(model)))
    assert secret.encode() not in body and b"<<secret:" in body


def test_a_branch_summary_request_hides_secrets(tmp_path: Path) -> None:
    manager = session_until(FIXTURE_06, "634488e3", tmp_path)
    entries = collect_entries_for_branch_summary(manager, "634488e3", "ad0a1d25")
    secret = "changed the greeting in src/app.py"
    assert secret in str([entry.model_dump() for entry in entries])
    body = sent_with_hidden(secret, lambda model: summarize_branch(entries, model, agent_options(model)))
    assert secret.encode() not in body and b"<<secret:" in body


def test_the_agent_hands_secret_hiding_to_every_chat_request(tmp_path: Path) -> None:
    """The chat turn's request goes through the transformer the agent adds to its options."""
    from tests.integration.test_agent_session import make_agent
    from tests.integration.test_agent_session import run as run_agent

    secret = "correct horse battery staple"
    hide(secret)
    with ModelServer(Scripted(text="ok")) as server:
        agent, _events = make_agent(server, tmp_path)
        run_agent(lambda: agent.prompt(f"remember {secret}"))
        (request,) = server.requests
    assert secret.encode() not in request.raw_body and b"<<secret:" in request.raw_body


def test_the_provider_layer_sends_what_it_is_given_without_a_transformer() -> None:
    """ai/ knows nothing of secrets: with no transformer in its options, the body goes as built,
    whatever secrets the process holds (the agent is what adds the hiding)."""
    from pi_tui.ai.stream import stream_message
    from pi_tui.ai.types import Context
    from pi_tui.messages import UserMessage

    secret = "correct horse battery staple"
    hide(secret)
    with ModelServer(Scripted(text="ok")) as server:
        context = Context(messages=[UserMessage(content=f"remember {secret}", timestamp=0)])

        async def send() -> None:
            await stream_message(server.model(), context, StreamOptions(api_key="k")).result()

        run(send())
        (request,) = server.requests
    assert secret.encode() in request.raw_body
