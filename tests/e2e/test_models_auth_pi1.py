"""pi 1.x's models.json / auth.json through the installed script, against the loopback server.

What is checked is what reaches the wire: the ``Authorization`` header for ``"$MY_KEY"``, a
literal and ``"!echo ..."``; pi 0.73's bare variable name (still honoured, with one notice);
a failing command (one line, exit 2); the ``azure`` provider's path, query, ``api-key``
header and deployment name, with its endpoint from the environment or from auth.json's ``env``;
and the ``httpProxy`` / ``httpIdleTimeoutMs`` settings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support.model_server import ModelServer, text_reply

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


def _run(
    agent_dir: Path, cwd: Path, model: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_OPENAI_")}
    return subprocess.run(
        [SCRIPT, "--no-session", "--model", model, "-p", "hello"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**clean, "PI_CODING_AGENT_DIR": str(agent_dir), **(env or {})},
        timeout=60,
    )


def _provider(server: ModelServer, api_key: str) -> dict[str, object]:
    return {
        "baseUrl": server.base_url,
        "api": "openai-completions",
        "apiKey": api_key,
        "models": [{"id": "m"}],
    }


def test_api_keys_reach_the_wire_as_pi1_reads_them(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer() as server:
        providers = {
            "by-env": _provider(server, "$MY_KEY"),
            "by-env-braces": _provider(server, "${MY_KEY}-suffix"),
            "literal": _provider(server, "sk-literal-text"),
            "command": _provider(server, "!echo key-from-command"),
            "old-style": _provider(server, "MY_OLD_KEY"),
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        env = {"MY_KEY": "secret-from-env", "MY_OLD_KEY": "value-of-old-var"}
        expected = {
            "by-env": "secret-from-env",
            "by-env-braces": "secret-from-env-suffix",
            "literal": "sk-literal-text",
            "command": "key-from-command",
            "old-style": "value-of-old-var",
        }
        for provider, key in expected.items():
            done = _run(agent_dir, tmp_path, f"{provider}/m", env)
            assert done.returncode == 0, done.stderr
            assert done.stdout == "echo: hello\n"
            assert server.requests[-1].header("authorization") == f"Bearer {key}"
            notices = [line for line in done.stderr.splitlines() if "MY_OLD_KEY" in line]
            # pi 0.73's bare name still works, and says once how pi 1.x would write it.
            assert len(notices) == 1, done.stderr
            assert "providers.old-style.apiKey" in notices[0] and '"$MY_OLD_KEY"' in notices[0]
            assert "secret-from-env" not in done.stderr and "value-of-old-var" not in done.stderr


def test_a_failing_key_command_or_unset_variable_is_one_line(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer() as server:
        providers = {
            "broken": _provider(server, "!echo vault locked >&2; exit 5"),
            "unset": _provider(server, "$NOT_SET_ANYWHERE_29"),
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        broken = _run(agent_dir, tmp_path, "broken/m")
        unset = _run(agent_dir, tmp_path, "unset/m")
        assert not server.requests
    assert broken.returncode == 2 and unset.returncode == 2
    for done in (broken, unset):
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "providers.broken.apiKey" in broken.stderr and "exit code 5" in broken.stderr
    assert "vault locked" in broken.stderr
    assert "NOT_SET_ANYWHERE_29" in unset.stderr and "providers.unset.apiKey" in unset.stderr


def test_azure_path_query_header_and_deployment(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer() as server:
        done = _run(
            agent_dir,
            tmp_path,
            "azure/gpt-5.4",
            {
                "AZURE_OPENAI_API_KEY": "azure-key-1",
                "AZURE_OPENAI_BASE_URL": f"{server.base_url}/openai/v1/",
                "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-5.5=other, gpt-5.4=my-gpt-deployment",
            },
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: hello\n"
        request = server.requests[-1]
        assert request.path == "/openai/v1/responses"
        assert request.query == {"api-version": "v1"}
        assert request.header("api-key") == "azure-key-1"
        assert request.header("authorization") is None
        assert request.body["model"] == "my-gpt-deployment"

        # The endpoint, API version and key from auth.json's env for "azure" (pi 1.x).
        (agent_dir / "auth.json").write_text(
            json.dumps(
                {
                    "azure": {
                        "type": "api_key",
                        "key": "$AZ_KEY",
                        "env": {
                            "AZ_KEY": "azure-key-2",
                            "AZURE_OPENAI_BASE_URL": f"{server.base_url}/custom/v1",
                            "AZURE_OPENAI_API_VERSION": "2025-04-01-preview",
                        },
                    }
                }
            )
        )
        done = _run(agent_dir, tmp_path, "azure/o4-mini")
        assert done.returncode == 0, done.stderr
        request = server.requests[-1]
        assert request.path == "/custom/v1/responses"
        assert request.query == {"api-version": "2025-04-01-preview"}
        assert request.header("api-key") == "azure-key-2"
        assert request.body["model"] == "o4-mini"


def test_azure_without_an_endpoint_is_one_line(agent_dir: Path, tmp_path: Path) -> None:
    done = _run(agent_dir, tmp_path, "azure/gpt-5.4", {"AZURE_OPENAI_API_KEY": "k"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "AZURE_OPENAI_BASE_URL" in done.stderr


def test_azure_foundry_model_on_chat_completions(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer() as server:
        models = {
            "providers": {
                "azure": {
                    "baseUrl": server.base_url,
                    "models": [{"id": "my-foundry", "api": "openai-completions"}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(models))
        done = _run(agent_dir, tmp_path, "azure/my-foundry", {"AZURE_OPENAI_API_KEY": "foundry-key"})
        assert done.returncode == 0, done.stderr
        request = server.requests[-1]
        assert request.path == "/chat/completions"
        assert request.header("authorization") == "Bearer foundry-key"
        assert request.body["model"] == "my-foundry"


def test_http_proxy_from_user_settings_carries_model_requests(agent_dir: Path, tmp_path: Path) -> None:
    """``httpProxy`` (pi 1.x): the request for an unreachable host goes to the proxy (the
    loopback server, which sees the absolute URL a client sends a proxy)."""
    with ModelServer() as proxy:
        models = {
            "providers": {
                "far": {
                    "baseUrl": "http://model.invalid:9/v1",
                    "api": "openai-completions",
                    "apiKey": "k",
                    "models": [{"id": "m"}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(models))
        (agent_dir / "settings.json").write_text(json.dumps({"httpProxy": proxy.base_url}))
        env = {"HTTP_PROXY": "", "HTTPS_PROXY": "", "http_proxy": "", "https_proxy": "", "ALL_PROXY": ""}
        clean = {k: v for k, v in os.environ.items() if k.lower() not in {n.lower() for n in env}}
        done = subprocess.run(
            [SCRIPT, "--no-session", "--model", "far/m", "-p", "hello"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**clean, "PI_CODING_AGENT_DIR": str(agent_dir)},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: hello\n"
        assert proxy.requests[-1].path == "/v1/chat/completions"
        assert proxy.requests[-1].header("host") == "model.invalid:9"


def test_http_idle_timeout_ms_wins_over_the_retry_limits(agent_dir: Path, tmp_path: Path) -> None:
    """``httpIdleTimeoutMs: 1000``: a server silent for 20 s before its first byte is given up
    after about a second (pi-tui's own first-byte limit is 120 s)."""
    with ModelServer(text_reply("late", first_byte_delay=20)) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(
            json.dumps({"httpIdleTimeoutMs": 1000, "retry": {"enabled": False}})
        )
        started = time.monotonic()
        done = _run(agent_dir, tmp_path, "test/m")
        elapsed = time.monotonic() - started
    assert done.returncode != 0
    assert "No data from the server for 1 s" in done.stderr, done.stderr
    assert elapsed < 15
