"""``pi-tui auth`` refuses what pi refuses instead of doing something else quietly: an API key for
a provider that only signs in (OpenAI Codex) never replaces its login, an empty ``--api-key ""``
saves nothing, an unknown provider is named as such by ``logout`` and ``print-bearer-token``, and
a missing key in ``-p`` names the shell command as well as ``/login``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.test_auth_config_commands import one_line_error, run

CODEX_LOGIN = {
    "type": "oauth",
    "access": "a.b.c",
    "refresh": "rt",
    "expires": 4102444800000,
    "accountId": "acct",
}


@pytest.fixture
def env(agent_dir: Path) -> dict[str, str]:
    """This process's environment without any provider key (the machine's must not count)."""
    return {name: value for name, value in os.environ.items() if not name.endswith("_API_KEY")}


def test_an_api_key_never_replaces_a_codex_login(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    auth = agent_dir / "auth.json"
    auth.write_text(json.dumps({"openai-codex": CODEX_LOGIN}))
    before = auth.read_bytes()
    result = run("auth", "login", "openai-codex", "--api-key", "oops", env=env, cwd=tmp_path)
    one_line_error(result, "OpenAI Codex has no API key login. Omit --api-key to sign in.")
    assert auth.read_bytes() == before


def test_an_empty_key_is_refused(agent_dir: Path, tmp_path: Path, env: dict[str, str]) -> None:
    result = run("auth", "login", "deepseek", "--api-key", "", env=env, cwd=tmp_path)
    one_line_error(result, "the key for deepseek is empty")
    assert not (agent_dir / "auth.json").exists()


def test_unknown_providers_are_named(agent_dir: Path, tmp_path: Path, env: dict[str, str]) -> None:
    for command in ("logout", "print-bearer-token"):
        one_line_error(run("auth", command, "nosuch", env=env, cwd=tmp_path), 'Unknown provider "nosuch"')


def test_logout_still_removes_a_credential_of_a_provider_no_longer_known(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    auth = agent_dir / "auth.json"
    auth.write_text(json.dumps({"gone-local": {"type": "api_key", "key": "k"}}))
    result = run("auth", "logout", "gone-local", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(auth.read_text()) == {}


def test_a_missing_key_in_print_mode_names_the_shell_command(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    result = run("-p", "--provider", "deepseek", "hello", env=env, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "pi-tui auth login deepseek" in result.stderr
