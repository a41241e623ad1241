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
   (``AWS_SHARED_CREDENTIALS_FILE`` / ``AWS_CONFIG_FILE``): a role (``role_arn`` with
   ``source_profile``, ``credential_source`` or ``web_identity_token_file``: AWS STS), static
   keys, a ``credential_process`` whose JSON output carries them, or an IAM Identity Center
   (SSO) login cached by ``aws sso login``;
6. ``AWS_WEB_IDENTITY_TOKEN_FILE`` with ``AWS_ROLE_ARN`` (EKS service accounts): AWS STS;
7. container credentials: ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` (on the ECS agent's
   address) or ``AWS_CONTAINER_CREDENTIALS_FULL_URI``, with ``AWS_CONTAINER_AUTHORIZATION_TOKEN``
   (or ``_FILE``) as its Authorization.

Credentials that take a call (STS, the SSO portal, the container agent) are fetched when the
first request is signed and kept for the run until shortly before they expire;
``AWS_ENDPOINT_URL_STS`` / ``AWS_ENDPOINT_URL_SSO`` (or ``AWS_ENDPOINT_URL``) move those services.
Nothing found: :class:`~pi_tui.ai.errors.ConfigError` with one line naming what to set. Not
done: renewing an expired SSO login (``aws sso login`` does that) and EC2 instance metadata.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from xml.etree import ElementTree

import httpx
import orjson

from pi_tui.ai.aws_sigv4 import Credentials, sign
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

    async def credentials(self, region: str = "") -> Credentials:
        """The agent's credentials (``region`` plays no part: the same signature as
        :meth:`RoleAuth.credentials`)."""
        if self.cached is not None and time.time() < self.expires - _EXPIRY_MARGIN:
            return self.cached
        headers = {"Authorization": self.token} if self.token else {}
        try:
            async with httpx.AsyncClient(timeout=10.0) as client:
                response = await client.get(self.url, headers=headers)
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


@dataclass(slots=True)
class RoleAuth:
    """A role's temporary credentials from AWS STS, asked for on first use and kept until
    shortly before they expire: ``AssumeRole`` signed with the source credentials (a profile's
    ``role_arn`` with ``source_profile`` or ``credential_source``), or
    ``AssumeRoleWithWebIdentity`` with a token file (``AWS_WEB_IDENTITY_TOKEN_FILE`` and
    ``AWS_ROLE_ARN``, EKS service accounts; or a profile's ``web_identity_token_file``), which
    needs no signature. STS is asked in the request's region (``AWS_ENDPOINT_URL_STS`` or
    ``AWS_ENDPOINT_URL`` moves it)."""

    role_arn: str
    session_name: str
    source: StaticAuth | ContainerAuth | RoleAuth | SsoAuth | None
    """None: web identity."""
    token_file: str | None = None
    external_id: str | None = None
    duration: str | None = None
    endpoint: str | None = None
    cached: Credentials | None = None
    expires: float = 0.0

    async def credentials(self, region: str) -> Credentials:
        if self.cached is not None and time.time() < self.expires - _EXPIRY_MARGIN:
            return self.cached
        suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
        url = (self.endpoint or f"https://sts.{region}{suffix}").rstrip("/") + "/"
        form = {"Version": "2011-06-15", "RoleArn": self.role_arn, "RoleSessionName": self.session_name}
        if self.external_id:
            form["ExternalId"] = self.external_id
        if self.duration:
            form["DurationSeconds"] = self.duration
        if self.source is None:
            form["Action"] = "AssumeRoleWithWebIdentity"
            form["WebIdentityToken"] = _read_token(self.token_file or "")
        else:
            form["Action"] = "AssumeRole"
        payload = urlencode(form).encode()
        headers = {"content-type": "application/x-www-form-urlencoded; charset=utf-8"}
        if self.source is not None:
            source = self.source
            keys = source.credentials if isinstance(source, StaticAuth) else await source.credentials(region)
            headers.update(sign("POST", url, headers.items(), payload, keys, region, "sts"))
        try:
            async with httpx.AsyncClient(timeout=30.0) as client:
                response = await client.post(url, content=payload, headers=headers)
        except httpx.HTTPError as error:
            raise ProviderError(
                f"Cannot reach AWS STS at {url} to assume {self.role_arn}: {error}"
            ) from error
        self.cached, self.expires = _sts_credentials(response, self.role_arn)
        return self.cached


def _read_token(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ProviderError(f"Cannot read the web identity token file {path}: {error}") from None


def _xml_text(root: ElementTree.Element | None, name: str) -> str:
    """The text of the first element named ``name`` (any namespace) under ``root``."""
    if root is None:
        return ""
    for node in root.iter():
        if node.tag == name or node.tag.endswith("}" + name):
            return "".join(node.itertext()).strip()
    return ""


def _sts_credentials(response: httpx.Response, role_arn: str) -> tuple[Credentials, float]:
    """The ``Credentials`` of an STS answer, or its ``Error`` as one line."""
    try:
        root: ElementTree.Element | None = ElementTree.fromstring(response.content)
    except ElementTree.ParseError:
        root = None
    if response.status_code != 200:
        code, message = _xml_text(root, "Code"), _xml_text(root, "Message")
        detail = (
            f"{code}: {message}" if code and message else code or message or f"HTTP {response.status_code}"
        )
        raise ProviderError(f"AWS STS refused to let us assume {role_arn}: {' '.join(detail.split())[:300]}")
    key_id, secret = _xml_text(root, "AccessKeyId"), _xml_text(root, "SecretAccessKey")
    if not key_id or not secret:
        raise ProviderError(f"AWS STS sent no credentials for {role_arn}")
    token = _xml_text(root, "SessionToken") or None
    return Credentials(key_id, secret, token), _expiry(_xml_text(root, "Expiration"))


@dataclass(slots=True)
class SsoAuth:
    """An IAM Identity Center (SSO) profile: the access token ``aws sso login`` cached in
    ``~/.aws/sso/cache/`` buys the role's credentials from the SSO portal
    (``GetRoleCredentials``, no signature), kept until shortly before they expire. An expired
    login is one line asking for ``aws sso login`` (pi-tui does not renew it)."""

    profile: str
    cache_file: Path
    region: str
    account_id: str
    role_name: str
    endpoint: str | None = None
    cached: Credentials | None = None
    expires: float = 0.0

    async def credentials(self, region: str = "") -> Credentials:
        if self.cached is not None and time.time() < self.expires - _EXPIRY_MARGIN:
            return self.cached
        login = f"aws sso login --profile {self.profile}"
        try:
            cached = orjson.loads(self.cache_file.read_bytes())
            token, expires_at = cached["accessToken"], _expiry(cached.get("expiresAt"))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            raise ProviderError(f'No AWS SSO login for profile "{self.profile}": run {login}') from None
        if time.time() >= expires_at:
            raise ProviderError(f'The AWS SSO login for profile "{self.profile}" has expired: run {login}')
        url = (self.endpoint or f"https://portal.sso.{self.region}.amazonaws.com").rstrip("/")
        query = urlencode({"account_id": self.account_id, "role_name": self.role_name})
        try:
            async with httpx.AsyncClient(timeout=30.0) as client:
                response = await client.get(
                    f"{url}/federation/credentials?{query}", headers={"x-amz-sso_bearer_token": token}
                )
        except httpx.HTTPError as error:
            raise ProviderError(f"Cannot reach the AWS SSO portal at {url}: {error}") from error
        if response.status_code != 200:
            if response.status_code == 401:
                raise ProviderError(
                    f'The AWS SSO portal refused the login of profile "{self.profile}": run {login}'
                )
            raise ProviderError(
                f"The AWS SSO portal answered HTTP {response.status_code} for {self.role_name}"
            )
        try:
            role = orjson.loads(response.content)["roleCredentials"]
            self.cached = Credentials(role["accessKeyId"], role["secretAccessKey"], role.get("sessionToken"))
            expiration = role.get("expiration")
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise ProviderError("The AWS SSO portal sent no role credentials") from None
        self.expires = expiration / 1000 if isinstance(expiration, int | float) else time.time() + 3600.0
        return self.cached


AwsAuth = BearerAuth | StaticAuth | ContainerAuth | RoleAuth | SsoAuth


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
    if any(name in default for name in ("aws_access_key_id", "credential_process", "role_arn")):
        return _profile_auth("default", env)
    token_file = lookup("AWS_WEB_IDENTITY_TOKEN_FILE", env)
    if token_file is not None:
        role_arn = lookup("AWS_ROLE_ARN", env)
        if role_arn is None:
            raise ConfigError("AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not")
        session = lookup("AWS_ROLE_SESSION_NAME", env)
        return _role(
            role_arn,
            None,
            token_file=token_file,
            session_name=session,
            external_id=None,
            duration=None,
            env=env,
        )
    container = _container_auth(env)
    if container is not None:
        return container
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


def _profile_auth(
    profile: str, env: Mapping[str, str] | None, seen: tuple[str, ...] = ()
) -> StaticAuth | RoleAuth | ContainerAuth | SsoAuth:
    """A profile's credentials, as the SDK's ini provider reads them: a role first (``role_arn``
    with a source or a web identity token file), then static keys, then ``credential_process``,
    then an SSO login."""
    settings = _profile_section(profile, env)
    where = f'AWS profile "{profile}"'
    if not settings:
        credentials_path, config_path = _files(env)
        raise ConfigError(f"{where} is not in {credentials_path} or {config_path}")
    role_arn = settings.get("role_arn")
    if role_arn:
        return _profile_role(profile, role_arn, settings, env, seen)
    key_id, secret = settings.get("aws_access_key_id"), settings.get("aws_secret_access_key")
    if key_id and secret:
        return StaticAuth(Credentials(key_id, secret, settings.get("aws_session_token") or None), where)
    command = settings.get("credential_process")
    if command:
        return StaticAuth(_run_credential_process(command, where), where)
    if "sso_session" in settings or "sso_start_url" in settings:
        return _sso(profile, settings, env)
    raise ConfigError(f"{where} has no aws_access_key_id and aws_secret_access_key")


def _sso(profile: str, settings: Mapping[str, str], env: Mapping[str, str] | None) -> SsoAuth:
    """The profile's SSO settings (its ``[sso-session NAME]`` section, or the legacy
    ``sso_start_url`` / ``sso_region`` in the profile) and the token cache file the AWS CLI
    names after them (SHA-1 of the session name, or of the start URL)."""
    where = f'AWS profile "{profile}"'
    session = settings.get("sso_session")
    merged = dict(settings)
    if session:
        config = _read(_files(env)[1])
        section = f"sso-session {session}"
        if not config.has_section(section):
            raise ConfigError(f"{where} names sso_session {session!r}, which has no [{section}] section")
        merged = {**dict(config.items(section)), **settings}
    region, account, role = (
        merged.get("sso_region"),
        merged.get("sso_account_id"),
        merged.get("sso_role_name"),
    )
    if not (region and account and role):
        raise ConfigError(f"{where} needs sso_region, sso_account_id and sso_role_name")
    key = session or merged.get("sso_start_url", "")
    cache = Path.home() / ".aws" / "sso" / "cache" / f"{hashlib.sha1(key.encode()).hexdigest()}.json"
    endpoint = lookup("AWS_ENDPOINT_URL_SSO", env) or lookup("AWS_ENDPOINT_URL", env)
    identity = (profile, str(cache), account, role, endpoint)
    found = _SSO.get(identity)
    if found is None:
        found = _SSO[identity] = SsoAuth(profile, cache, region, account, role, endpoint)
    return found


_SSO: dict[tuple[str, str, str, str, str | None], SsoAuth] = {}


def _profile_role(
    profile: str,
    role_arn: str,
    settings: Mapping[str, str],
    env: Mapping[str, str] | None,
    seen: tuple[str, ...],
) -> RoleAuth:
    where = f'AWS profile "{profile}"'
    source: StaticAuth | ContainerAuth | RoleAuth | SsoAuth | None
    token_file = settings.get("web_identity_token_file")
    source_profile = settings.get("source_profile")
    credential_source = settings.get("credential_source")
    if token_file:
        source = None
    elif source_profile:
        if source_profile in seen:
            raise ConfigError(f"{where}: source_profile {source_profile!r} leads back to itself")
        if source_profile == profile:
            # A profile that is its own source uses its own keys for the call (the SDKs allow it).
            key_id, secret = settings.get("aws_access_key_id"), settings.get("aws_secret_access_key")
            if not (key_id and secret):
                raise ConfigError(f"{where} is its own source_profile but has no keys")
            source = StaticAuth(Credentials(key_id, secret, settings.get("aws_session_token") or None), where)
        else:
            source = _profile_auth(source_profile, env, (*seen, profile))
    elif credential_source == "Environment":
        key_id, secret = lookup("AWS_ACCESS_KEY_ID", env), lookup("AWS_SECRET_ACCESS_KEY", env)
        if not (key_id and secret):
            raise ConfigError(f"{where}: credential_source Environment, but AWS_ACCESS_KEY_ID is not set")
        source = StaticAuth(
            Credentials(key_id, secret, lookup("AWS_SESSION_TOKEN", env)), "AWS_ACCESS_KEY_ID"
        )
    elif credential_source == "EcsContainer":
        container = _container_auth(env)
        if container is None:
            raise ConfigError(
                f"{where}: credential_source EcsContainer, but no container credentials are set"
            )
        source = container
    else:
        raise ConfigError(
            f"{where} has role_arn but no source_profile, web_identity_token_file or usable credential_source"
        )
    return _role(
        role_arn,
        source,
        token_file=token_file,
        session_name=settings.get("role_session_name"),
        external_id=settings.get("external_id"),
        duration=settings.get("duration_seconds"),
        env=env,
    )


def _role(
    role_arn: str,
    source: StaticAuth | ContainerAuth | RoleAuth | SsoAuth | None,
    *,
    token_file: str | None,
    session_name: str | None,
    external_id: str | None,
    duration: str | None,
    env: Mapping[str, str] | None,
) -> RoleAuth:
    """The role's :class:`RoleAuth`, one per role and source for the run, so every request uses
    the credentials STS gave until they near expiry."""
    if isinstance(source, StaticAuth):
        origin = source.credentials.access_key_id
    elif isinstance(source, ContainerAuth):
        origin = source.url
    elif isinstance(source, RoleAuth):
        origin = source.role_arn
    elif isinstance(source, SsoAuth):
        origin = f"{source.account_id}/{source.role_name}"
    else:
        origin = token_file or ""
    endpoint = lookup("AWS_ENDPOINT_URL_STS", env) or lookup("AWS_ENDPOINT_URL", env)
    key = (role_arn, origin, external_id, duration, endpoint)
    role = _ROLES.get(key)
    if role is None:
        name = session_name or f"pi-tui-{int(time.time() * 1000)}"
        role = _ROLES[key] = RoleAuth(role_arn, name, source, token_file, external_id, duration, endpoint)
    return role


_ROLES: dict[tuple[str, str, str | None, str | None, str | None], RoleAuth] = {}


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
