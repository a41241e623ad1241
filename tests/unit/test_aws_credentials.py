"""Which AWS credentials and which endpoint/region a Bedrock request uses, in pi 1.5.2's order,
from real files in a temporary home (the request side is tested over HTTP in
tests/integration/test_bedrock_stream.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.aws_credentials import BearerAuth, ContainerAuth, RoleAuth, StaticAuth, resolve_auth
from pi_tui.ai.aws_sigv4 import Credentials
from pi_tui.ai.bedrock import endpoint
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.types import Model

KEYS = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".aws").mkdir()
    yield tmp_path


def write(home: Path, credentials: str = "", config: str = "") -> None:
    (home / ".aws" / "credentials").write_text(credentials)
    (home / ".aws" / "config").write_text(config)


def test_a_bearer_token_wins_and_the_api_key_comes_first() -> None:
    assert resolve_auth(None, {"AWS_BEARER_TOKEN_BEDROCK": "tok", **KEYS}) == BearerAuth("tok")
    assert resolve_auth("stored-key", {"AWS_BEARER_TOKEN_BEDROCK": "tok"}) == BearerAuth("stored-key")


def test_skip_auth_signs_with_dummy_keys_even_with_a_token() -> None:
    auth = resolve_auth(None, {"AWS_BEDROCK_SKIP_AUTH": "1", "AWS_BEARER_TOKEN_BEDROCK": "tok"})
    assert isinstance(auth, StaticAuth) and auth.credentials.access_key_id == "dummy-access-key"


def test_environment_keys_with_a_session_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDPROC")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "proc-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "proc-token")
    auth = resolve_auth(None, {})
    assert isinstance(auth, StaticAuth)
    assert auth.credentials == Credentials("AKIDPROC", "proc-secret", "proc-token")
    # auth.json's env for the provider is read before the process environment
    auth = resolve_auth(None, KEYS)
    assert isinstance(auth, StaticAuth) and auth.credentials.access_key_id == "AKIDENV"


def test_a_stored_profile_beats_ambient_keys_and_ambient_keys_beat_an_ambient_profile(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home, "[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = dev-secret\n")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDPROC")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "proc-secret")
    stored = resolve_auth(None, {"AWS_PROFILE": "dev"})
    assert isinstance(stored, StaticAuth) and stored.credentials.access_key_id == "AKIDDEV"
    monkeypatch.setenv("AWS_PROFILE", "dev")
    ambient = resolve_auth(None, {})
    assert isinstance(ambient, StaticAuth) and ambient.credentials.access_key_id == "AKIDPROC"


def test_profiles_from_the_config_file_and_a_credential_process(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = home / "creds.py"
    script.write_text(
        'import json; print(json.dumps({"Version": 1, "AccessKeyId": "AKIDPROCESS",'
        ' "SecretAccessKey": "s", "SessionToken": "t"}))'
    )
    write(
        home,
        config=(
            "[default]\nregion = eu-central-1\n\n"
            "[profile cfg]\naws_access_key_id = AKIDCFG\naws_secret_access_key = cfg-secret\n\n"
            f"[profile proc]\ncredential_process = {sys.executable} {script}\n\n"
            "[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = cfg\n\n"
            "[profile sso]\nsso_session = corp\nsso_account_id = 1\n\n"
            "[profile loop]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = loop2\n\n"
            "[profile loop2]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = loop\n"
        ),
    )
    monkeypatch.setenv("AWS_PROFILE", "cfg")
    assert resolve_auth(None, {}) == StaticAuth(Credentials("AKIDCFG", "cfg-secret"), 'AWS profile "cfg"')
    monkeypatch.setenv("AWS_PROFILE", "proc")
    auth = resolve_auth(None, {})
    assert isinstance(auth, StaticAuth) and auth.credentials == Credentials("AKIDPROCESS", "s", "t")
    monkeypatch.setenv("AWS_PROFILE", "role")
    role = resolve_auth(None, {})
    assert isinstance(role, RoleAuth) and role.role_arn == "arn:aws:iam::1:role/x"
    assert role.source == StaticAuth(Credentials("AKIDCFG", "cfg-secret"), 'AWS profile "cfg"')
    assert resolve_auth(None, {}) is role  # one per role for the run: STS is asked once
    monkeypatch.setenv("AWS_PROFILE", "sso")
    with pytest.raises(
        ConfigError, match=r'AWS profile "sso" names sso_session .corp., which has no \[sso-session corp\]'
    ):
        resolve_auth(None, {})
    monkeypatch.setenv("AWS_PROFILE", "loop")
    with pytest.raises(ConfigError, match="leads back to itself"):
        resolve_auth(None, {})
    monkeypatch.setenv("AWS_PROFILE", "missing")
    with pytest.raises(ConfigError, match='AWS profile "missing" is not in'):
        resolve_auth(None, {})


def test_a_default_profile_with_only_a_region_falls_through_to_container_credentials(home: Path) -> None:
    write(home, config="[default]\nregion = eu-central-1\n")
    auth = resolve_auth(None, {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc"})
    assert isinstance(auth, ContainerAuth) and auth.url == "http://169.254.170.2/v2/credentials/abc"
    with pytest.raises(ConfigError, match="No AWS credentials"):
        resolve_auth(None, {})


def _model(base_url: str, model_id: str = "anthropic.claude-sonnet-4-5-20250929-v1:0") -> Model:
    return Model(id=model_id, api="bedrock-converse-stream", provider="amazon-bedrock", base_url=base_url)


STANDARD = "https://bedrock-runtime.us-east-1.amazonaws.com"


def test_endpoint_and_region_as_pi_decides_them(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing configured: the catalogue's endpoint and its region.
    assert endpoint(_model(STANDARD), {}) == (STANDARD, "us-east-1")
    # A configured region moves a standard endpoint to that region's host.
    assert endpoint(_model(STANDARD), {"AWS_REGION": "eu-west-1"}) == (
        "https://bedrock-runtime.eu-west-1.amazonaws.com",
        "eu-west-1",
    )
    assert endpoint(_model(STANDARD), {"AWS_DEFAULT_REGION": "cn-north-1"})[0] == (
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    )
    # A custom endpoint (proxy, VPC, models.json) is kept, signed for the configured region.
    assert endpoint(_model("http://127.0.0.1:9/"), {"AWS_REGION": "ap-south-1"}) == (
        "http://127.0.0.1:9",
        "ap-south-1",
    )
    # An inference-profile ARN names its region.
    arn = "arn:aws:bedrock:eu-north-1:123456789012:application-inference-profile/abc"
    assert endpoint(_model(STANDARD, arn), {"AWS_REGION": "us-west-2"}) == (
        "https://bedrock-runtime.eu-north-1.amazonaws.com",
        "eu-north-1",
    )
    # An ambient profile: its own region from ~/.aws/config.
    write(home, config="[profile work]\nregion = sa-east-1\n")
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert endpoint(_model(STANDARD), {}) == ("https://bedrock-runtime.sa-east-1.amazonaws.com", "sa-east-1")


def test_a_credential_process_runs_once_until_its_answer_nears_expiry(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = home / "runs"
    script = home / "once.py"
    script.write_text(
        "import json, pathlib, sys\n"
        f"p = pathlib.Path({str(runs)!r}); p.write_text(p.read_text() + 'x' if p.exists() else 'x')\n"
        "expiry = sys.argv[1]\n"
        'answer = {"Version": 1, "AccessKeyId": "AKIDONCE", "SecretAccessKey": "s", "Expiration": expiry}\n'
        "print(json.dumps(answer))\n"
    )
    write(
        home,
        config=(
            f"[profile later]\ncredential_process = {sys.executable} {script} 2999-01-01T00:00:00Z\n\n"
            f"[profile soon]\ncredential_process = {sys.executable} {script} 2000-01-01T00:00:00Z\n"
        ),
    )
    monkeypatch.setenv("AWS_PROFILE", "later")
    for _ in range(3):
        auth = resolve_auth(None, {})
        assert isinstance(auth, StaticAuth) and auth.credentials.access_key_id == "AKIDONCE"
    assert runs.read_text() == "x"
    monkeypatch.setenv("AWS_PROFILE", "soon")  # already expired: asked again every time
    resolve_auth(None, {})
    resolve_auth(None, {})
    assert runs.read_text() == "xxx"
