"""Ambient AWS credentials and region for Amazon Bedrock, found where pi 1.5.2 (its AWS SDK
default chain) finds them.

Every variable is read from the request's provider environment (auth.json's ``env`` for
``amazon-bedrock``) before the process environment, as pi's ``getProviderEnvValue`` does.

Order (:func:`resolve_auth`):

1. a bearer token: the request's API key (auth.json ``key``, ``--api-key``), else
   ``AWS_BEARER_TOKEN_BEDROCK``; sent as ``Authorization: Bearer`` (unless
   ``AWS_BEDROCK_SKIP_AUTH=1``);
2. ``AWS_BEDROCK_SKIP_AUTH=1``: a proxy that needs no credentials; requests are signed with
   dummy keys, as pi does;
3. a profile stored with the provider's credential (auth.json ``env.AWS_PROFILE``): it wins over
   ambient keys (pi #6957);
4. ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``);
5. ``AWS_PROFILE`` (else ``default``) in ``~/.aws/credentials`` and ``~/.aws/config``
   (``AWS_SHARED_CREDENTIALS_FILE`` / ``AWS_CONFIG_FILE``): static keys, or a
   ``credential_process`` whose JSON output carries them;
6. container credentials: ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` (on the ECS agent's
   address) or ``AWS_CONTAINER_CREDENTIALS_FULL_URI``, with ``AWS_CONTAINER_AUTHORIZATION_TOKEN``
   (or ``_FILE``) as its Authorization; fetched when the request is signed, and kept until
   shortly before they expire.

Nothing found: :class:`~pi_tui.ai.errors.ConfigError` with one line naming what to set. Profiles
that need an AWS service call of their own (``role_arn``, ``sso_*``, web identity) are named as
such in that line: pi-tui does not call STS or SSO.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

from pi_tui.ai.aws_sigv4 import Credentials
from pi_tui.ai.errors import ConfigError, ProviderError

ECS_HOST = "http://169.254.170.2"
"""Where the ECS agent serves a task's credentials (RELATIVE_URI is a path on it)."""
DEFAULT_REGION = "us-east-1"
NO_CREDENTIALS = (
    'No AWS credentials for provider "amazon-bedrock": set AWS_BEARER_TOKEN_BEDROCK, or '
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE for a profile in ~/.aws/credentials"
)
_EXPIRY_MARGIN = 300.0
"""Seconds before expiry at which container credentials are fetched again."""


def lookup(name: str, env: Mapping[str, str] | None) -> str | None:
    """``env`` (auth.json's values for the provider) over the process environment; empty is unset."""
    value = (env or {}).get(name) or os.environ.get(name) or ""
    return value.strip() or None


@dataclass(frozen=True, slots=True)
class BearerAuth:
    token: str


@dataclass(frozen=True, slots=True)
class StaticAuth:
    credentials: Credentials
    source: str
    """Where they came from, for messages: ``AWS_ACCESS_KEY_ID``, ``profile "dev"``..."""


@dataclass(slots=True)
class ContainerAuth:
    """Credentials served over HTTP by the container agent, fetched on first use."""

    url: str
    token: str | None
    cached: Credentials | None = None
    expires: float = 0.0

    async def credentials(self, http: httpx.AsyncClient | None = None) -> Credentials:
        if self.cached is not None and time.time() < self.expires - _EXPIRY_MARGIN:
            return self.cached
        headers = {"Authorization": self.token} if self.token else {}
        try:
            if http is None:
                async with httpx.AsyncClient(timeout=10.0) as client:
                    response = await client.get(self.url, headers=headers)
            else:
                response = await http.get(self.url, headers=headers, timeout=10.0)
        except httpx.HTTPError as error:
            raise ProviderError(
                f"Cannot reach the container credentials endpoint {self.url}: {error}"
            ) from error
        if response.status_code != 200:
            raise ProviderError(
                f"The container credentials endpoint {self.url} answered HTTP {response.status_code}"
            )
        try:
            data = orjson.loads(response.content)
            self.cached = Credentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("Token"))
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise ProviderError(
                f"The container credentials endpoint {self.url} sent no credentials"
            ) from None
        self.expires = _expiry(data.get("Expiration"))
        return self.cached


AwsAuth = BearerAuth | StaticAuth | ContainerAuth


def _expiry(value: Any) -> float:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time() + 3600.0


def resolve_auth(api_key: str | None, env: Mapping[str, str] | None) -> AwsAuth:
    """The credentials a Bedrock request uses (see the module docstring for the order)."""
    skip = lookup("AWS_BEDROCK_SKIP_AUTH", env) == "1"
    token = api_key if api_key and api_key != "<authenticated>" else None
    token = token or lookup("AWS_BEARER_TOKEN_BEDROCK", env)
    if token and not skip:
        return BearerAuth(token)
    if skip:
        return StaticAuth(Credentials("dummy-access-key", "dummy-secret-key"), "AWS_BEDROCK_SKIP_AUTH")
    stored_profile = (env or {}).get("AWS_PROFILE", "").strip()
    if stored_profile:
        return _profile_auth(stored_profile, env)
    key_id, secret = lookup("AWS_ACCESS_KEY_ID", env), lookup("AWS_SECRET_ACCESS_KEY", env)
    if key_id and secret:
        return StaticAuth(Credentials(key_id, secret, lookup("AWS_SESSION_TOKEN", env)), "AWS_ACCESS_KEY_ID")
    profile = lookup("AWS_PROFILE", env)
    if profile is not None:
        return _profile_auth(profile, env)
    default = _profile_section("default", env)
    if (
        "aws_access_key_id" in default and "aws_secret_access_key" in default
    ) or "credential_process" in default:
        return _profile_auth("default", env)
    container = _container_auth(env)
    if container is not None:
        return container
    if lookup("AWS_WEB_IDENTITY_TOKEN_FILE", env):
        raise ConfigError(
            "AWS_WEB_IDENTITY_TOKEN_FILE needs an STS call pi-tui does not make: "
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) instead"
        )
    raise ConfigError(NO_CREDENTIALS)


def _container_auth(env: Mapping[str, str] | None) -> ContainerAuth | None:
    relative = lookup("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", env)
    full = lookup("AWS_CONTAINER_CREDENTIALS_FULL_URI", env)
    if relative is None and full is None:
        return None
    url = ECS_HOST + relative if relative is not None else full or ""
    token = lookup("AWS_CONTAINER_AUTHORIZATION_TOKEN", env)
    token_file = lookup("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", env)
    if token_file is not None:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigError(
                f"Cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {token_file}: {error}"
            ) from None
    key = (url, token)
    if key not in _CONTAINER_AGENTS:  # one fetch serves every request until it nears expiry
        _CONTAINER_AGENTS[key] = ContainerAuth(url, token)
    return _CONTAINER_AGENTS[key]


_CONTAINER_AGENTS: dict[tuple[str, str | None], ContainerAuth] = {}


# --- shared config files ------------------------------------------------------------------------


def _files(env: Mapping[str, str] | None) -> tuple[Path, Path]:
    home = Path.home() / ".aws"
    credentials = lookup("AWS_SHARED_CREDENTIALS_FILE", env)
    config = lookup("AWS_CONFIG_FILE", env)
    return (
        Path(credentials).expanduser() if credentials else home / "credentials",
        Path(config).expanduser() if config else home / "config",
    )


def _read(path: Path) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(default_section="\0none")
    try:
        parser.read_string(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        pass
    except (OSError, configparser.Error) as error:
        raise ConfigError(f"Cannot read {path}: {' '.join(str(error).split())}") from None
    return parser


def _profile_section(profile: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """The profile's settings: ~/.aws/config's ``[profile NAME]`` (``[default]``) under
    ~/.aws/credentials' ``[NAME]``, which wins."""
    credentials_path, config_path = _files(env)
    merged: dict[str, str] = {}
    config = _read(config_path)
    for section in (f"profile {profile}", profile) if profile == "default" else (f"profile {profile}",):
        if config.has_section(section):
            merged.update(config.items(section))
            break
    credentials = _read(credentials_path)
    if credentials.has_section(profile):
        merged.update(credentials.items(profile))
    return merged


def _profile_auth(profile: str, env: Mapping[str, str] | None) -> StaticAuth:
    settings = _profile_section(profile, env)
    where = f'AWS profile "{profile}"'
    key_id, secret = settings.get("aws_access_key_id"), settings.get("aws_secret_access_key")
    if key_id and secret:
        return StaticAuth(Credentials(key_id, secret, settings.get("aws_session_token") or None), where)
    command = settings.get("credential_process")
    if command:
        return StaticAuth(_run_credential_process(command, where), where)
    if not settings:
        credentials_path, config_path = _files(env)
        raise ConfigError(f"{where} is not in {credentials_path} or {config_path}")
    needs = next((name for name in ("role_arn", "sso_session", "sso_start_url") if name in settings), None)
    if needs is not None:
        raise ConfigError(
            f"{where} uses {needs}, which needs an AWS call pi-tui does not make: give it "
            "aws_access_key_id and aws_secret_access_key, or a credential_process"
        )
    raise ConfigError(f"{where} has no aws_access_key_id and aws_secret_access_key")


_PROCESS_RESULTS: dict[str, tuple[Credentials, float]] = {}
"""credential_process answers by command, kept until shortly before their ``Expiration`` (for
the whole run when they have none, as the AWS SDKs keep them): the command may be slow or ask
for a second factor, and every request resolves its credentials."""


def _run_credential_process(command: str, where: str) -> Credentials:
    kept = _PROCESS_RESULTS.get(command)
    if kept is not None and time.time() < kept[1] - _EXPIRY_MARGIN:
        return kept[0]
    try:
        done = subprocess.run(command, shell=True, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ConfigError(f"{where}: credential_process failed: {error}") from None
    if done.returncode != 0:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        raise ConfigError(f"{where}: credential_process exited {done.returncode}: {detail}")
    try:
        data = orjson.loads(done.stdout)
        credentials = Credentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("SessionToken"))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise ConfigError(
            f"{where}: credential_process printed no AccessKeyId/SecretAccessKey JSON"
        ) from None
    expires = _expiry(data["Expiration"]) if "Expiration" in data else float("inf")
    _PROCESS_RESULTS[command] = (credentials, expires)
    return credentials


def profile_region(env: Mapping[str, str] | None) -> str | None:
    """The ``region`` of the ambient profile (``AWS_PROFILE`` or ``default``) in the config files."""
    profile = (env or {}).get("AWS_PROFILE") or lookup("AWS_PROFILE", env) or "default"
    try:
        return _profile_section(profile, env).get("region") or None
    except ConfigError:
        return None
