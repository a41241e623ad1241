"""``pi-tui auth check`` says ready only when a request could be sent, as pi does: Bedrock
without AWS credentials and Cloudflare without the account id its URL needs are not_ready, in
the table and for the one provider alike, worded by what is missing; ``auth login`` saves
Cloudflare's ids in the credential's ``env`` (pi's shape), after which it is ready."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.test_auth_config_commands import here, run

AMBIENT = ("AWS_", "CLOUDFLARE_", "GOOGLE_")


@pytest.fixture
def env(agent_dir: Path) -> dict[str, str]:
    """No provider key and no AWS, Cloudflare or Google settings (the machine's must not count)."""
    return {
        name: value
        for name, value in os.environ.items()
        if (not name.endswith("_API_KEY") and not name.startswith(AMBIENT)) or name == "AWS_CA_BUNDLE"
    }


def table(env: dict[str, str], cwd: Path) -> dict[str, tuple[str, str]]:
    result = here("auth", "check", env=env, cwd=cwd)  # in process: the table is read many times
    assert result.returncode == 0, result.stderr
    rows = [line.split(None, 2) for line in result.stdout.splitlines()]
    return {row[0]: (row[1], row[2]) for row in rows}


def test_bedrock_without_aws_credentials_is_not_ready_everywhere(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    status, where = table(env, tmp_path)["amazon-bedrock"]
    assert status == "not_ready" and where.startswith("no AWS credentials: set AWS_PROFILE")
    one = run("auth", "check", "amazon-bedrock", env=env, cwd=tmp_path)
    assert (one.returncode, one.stdout) == (1, "not_ready\n")
    assert "no AWS credentials" in one.stderr
    keys = {**env, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s"}
    assert table(keys, tmp_path)["amazon-bedrock"] == ("ready", "ambient credentials (AWS access keys)")
    profile = {**env, "AWS_PROFILE": "work"}
    assert table(profile, tmp_path)["amazon-bedrock"] == ("ready", "ambient credentials (env: AWS_PROFILE)")
    assert here("auth", "check", "amazon-bedrock", env=keys, cwd=tmp_path).returncode == 0


def test_cloudflare_needs_its_account_id_and_login_saves_it(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    keyed = {**env, "CLOUDFLARE_API_KEY": "cf-key"}
    status, where = table(keyed, tmp_path)["cloudflare-workers-ai"]
    assert status == "not_ready" and where.startswith("needs CLOUDFLARE_ACCOUNT_ID for its URL")
    one = run("auth", "check", "cloudflare-workers-ai", env=keyed, cwd=tmp_path)
    assert (one.returncode, one.stdout) == (1, "not_ready\n")
    gateway = here("auth", "check", "cloudflare-ai-gateway", env=keyed, cwd=tmp_path)
    assert "CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_GATEWAY_ID" in gateway.stderr

    ids = {**env, "CLOUDFLARE_ACCOUNT_ID": "acct-1", "CLOUDFLARE_GATEWAY_ID": "gw-1"}
    saved = run("auth", "login", "cloudflare-ai-gateway", "--api-key", "cf-key", env=ids, cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert json.loads((agent_dir / "auth.json").read_text()) == {
        "cloudflare-ai-gateway": {
            "type": "api_key",
            "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-1", "CLOUDFLARE_GATEWAY_ID": "gw-1"},
        }
    }
    assert here("auth", "check", "cloudflare-ai-gateway", env=env, cwd=tmp_path).returncode == 0  # from env
    refused = run("auth", "login", "cloudflare-workers-ai", "--api-key", "cf-key", env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "needs CLOUDFLARE_ACCOUNT_ID" in refused.stderr


def test_a_broken_auth_file_is_named_not_taken_for_no_key(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    auth = agent_dir / "auth.json"
    auth.write_text('{"deepseek": {"type": "api_key", "key": "k"},')
    printed = run("-p", "hello", env=env, cwd=tmp_path)
    assert printed.returncode == 2
    lines = printed.stderr.strip().splitlines()
    assert len(lines) == 1 and str(auth) in lines[0] and "invalid JSON" in lines[0], lines
    assert "No API key found" not in printed.stderr
    checked = run("auth", "check", "deepseek", env=env, cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (2, "invalid\n")
    assert str(auth) in checked.stderr and "invalid JSON" in checked.stderr
    as_json = json.loads(here("auth", "check", "deepseek", "--json", env=env, cwd=tmp_path).stdout)
    assert as_json["status"] == "invalid" and str(auth) in as_json["error"]


@pytest.mark.pi_interop
def test_pi_1_5_2_agrees_on_cloudflare_and_a_broken_file(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """pi reads the ``env`` pi-tui saved with a Cloudflare key (ready), wants the account id as
    pi-tui does (not_ready) and calls an unreadable auth.json invalid, as pi-tui now does."""
    from tests.support.real_pi import run_pi

    def both(provider: str) -> tuple[str, str]:
        ours = run("auth", "check", provider, env=env, cwd=tmp_path).stdout.strip()
        pis = run_pi(["auth", "check", "--provider", provider], agent_dir=agent_dir, cwd=tmp_path, pi="1.5.2")
        return ours, pis.stdout.strip()

    ids = {**env, "CLOUDFLARE_ACCOUNT_ID": "acct-1"}
    saved = run("auth", "login", "cloudflare-workers-ai", "--api-key", "cf-key", env=ids, cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert both("cloudflare-workers-ai") == ("ready", "ready")
    auth = agent_dir / "auth.json"
    auth.write_text(json.dumps({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key"}}))
    assert both("cloudflare-workers-ai") == ("not_ready", "not_ready")
    auth.write_text('{"deepseek": {"type": "api_key", "key": "k"},')
    assert both("deepseek") == ("invalid", "invalid")
