"""pi's OpenAI-compatible providers work from their environment variable alone (issue 33).

A pi user with ``DEEPSEEK_API_KEY`` (or Together's, Groq's, ...) set runs ``pi --provider
deepseek`` and it works. pi-tui must too: the provider, its default model and its key variable
come from the generated catalogue, and a models.json ``baseUrl`` override is the only thing the
test adds, to point the provider at the loopback model server. What arrives there is checked:
the path of the chat completions API, ``Authorization: Bearer <the variable's value>``, the
catalogue's model id and the provider's headers; the reply streams back to stdout.

The providers run in process (``pi_tui.cli.main``, output read with ``capfd``), one through the
installed ``pi-tui`` script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES, PROVIDERS, builtin_models
from pi_tui.cli import main
from tests.support.model_server import ModelServer

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))

PROVIDERS_UNDER_TEST = ("deepseek", "together", "fireworks", "groq", "cerebras", "openrouter", "nvidia")


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the variable a test sets is there (not a developer's own keys)."""
    for name in KEY_ENV_VAR_NAMES:
        monkeypatch.delenv(name, raising=False)


def point_at(agent_dir: Path, provider: str, server: ModelServer) -> None:
    """models.json that only moves the built-in provider to the loopback server."""
    document = {"providers": {provider: {"baseUrl": server.base_url}}}
    (agent_dir / "models.json").write_text(json.dumps(document))


@pytest.mark.parametrize("provider", PROVIDERS_UNDER_TEST)
def test_provider_works_from_its_environment_variable(
    provider: str,
    agent_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    info = PROVIDERS[provider]
    default = next(m for m in builtin_models() if m.provider == provider and m.id == info.default_model)
    assert default.api == "openai-completions"  # what this test is about
    assert info.env_var is not None
    secret = f"sk-{provider}-7f3a"
    monkeypatch.setenv(info.env_var, secret)
    monkeypatch.chdir(tmp_path)
    with ModelServer() as server:
        point_at(agent_dir, provider, server)
        code = main(["--no-session", "--provider", provider, "-p", f"hello {provider}"])
        out, err = capfd.readouterr()
        assert (code, out) == (0, f"echo: hello {provider}\n"), err
        request = server.last_request
    assert request.path == "/chat/completions"
    assert request.header("authorization") == f"Bearer {secret}"
    assert request.body["model"] == info.default_model
    assert request.body["stream"] is True
    for name, value in default.headers.items():  # nvidia's NVCF-POLL-SECONDS, from pi's catalogue
        assert request.header(name) == value


def test_missing_variable_is_one_line_naming_it(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with ModelServer() as server:
        point_at(agent_dir, "together", server)
        code = main(["--no-session", "--provider", "together", "-p", "hi"])
        out, err = capfd.readouterr()
        assert server.requests == []
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "TOGETHER_API_KEY" in err and "Traceback" not in err


def test_installed_script_with_deepseek_key(agent_dir: Path, tmp_path: Path) -> None:
    """The same through the installed console script, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENV_VAR_NAMES and not k.endswith("_API_KEY")}
    env.update(PI_CODING_AGENT_DIR=str(agent_dir), DEEPSEEK_API_KEY="sk-deepseek-env-51d0")
    with ModelServer() as server:
        point_at(agent_dir, "deepseek", server)
        done = subprocess.run(
            [SCRIPT, "--no-session", "--model", "deepseek/deepseek-flash", "-p", "ni hao"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: ni hao\n"
        request = server.last_request
    assert request.header("authorization") == "Bearer sk-deepseek-env-51d0"
    assert request.body["model"] == "deepseek-flash"


def test_cloudflare_account_variable_fills_the_base_url(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Cloudflare Workers AI's URL names ``{CLOUDFLARE_ACCOUNT_ID}``: a models.json ``baseUrl``
    keeping that variable, on the loopback server, gets it from auth.json's ``env`` for the
    provider (its key from there too)."""
    monkeypatch.chdir(tmp_path)
    env = {"CLOUDFLARE_ACCOUNT_ID": "acct-5e1"}
    auth = {"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key-93", "env": env}}
    (agent_dir / "auth.json").write_text(json.dumps(auth))
    with ModelServer() as server:
        document = {
            "providers": {
                "cloudflare-workers-ai": {"baseUrl": f"{server.base_url}/{{CLOUDFLARE_ACCOUNT_ID}}/v1"}
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(document))
        code = main(["--no-session", "--provider", "cloudflare-workers-ai", "-p", "hi"])
        out, err = capfd.readouterr()
        assert (code, out) == (0, "echo: hi\n"), err
        request = server.last_request
    assert request.path == "/acct-5e1/v1/chat/completions"
    assert request.header("authorization") == "Bearer cf-key-93"
