"""MCP OAuth against a real authorization server and protected MCP server on loopback
(tests/support/oauth_server.py): sign-in, stored tokens, refresh, sign-out. No mocks: the
"browser" is an HTTP client following the authorization URL to pi-tui's loopback callback."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from pi_tui.mcp.model import ConfigSource, ServerConfig
from pi_tui.mcp.oauth import (
    OAuthStoreError,
    SignInError,
    SignInRequired,
    has_sign_in,
    http_auth,
    needs_oauth,
    sign_in,
    sign_in_required,
    sign_out,
    store_path,
)
from tests.support.oauth_server import SCOPE, OAuthMcpServer, running_oauth_server
from tests.support.waiting import poll_until


@pytest.fixture
def oauth_server() -> Iterator[OAuthMcpServer]:
    with running_oauth_server() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "credentials" / "mcp-auth.json"  # a folder the sign-in creates


def config(server: OAuthMcpServer, name: str = "demo", source: Path | None = None) -> ServerConfig:
    return ServerConfig(name=name, transport="http", source=ConfigSource("user", source), url=server.mcp_url)


def follow(url: str) -> httpx.Response:
    """What a browser does with the authorization URL: follow the redirects to the callback."""
    return httpx.get(url, follow_redirects=True, timeout=10)


def browser(url: str) -> None:
    assert follow(url).status_code == 200


def entries(store: Path) -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(store.read_text())
    return stored


async def whoami(server: OAuthMcpServer, auth: httpx.Auth | None) -> str:
    """Connect with the SDK's streamable HTTP client, list the tools, call ``whoami``."""

    async def run() -> str:
        http = httpx.AsyncClient(auth=auth, timeout=httpx.Timeout(30, read=300))
        async with (
            http,
            streamable_http_client(server.mcp_url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            assert [tool.name for tool in tools.tools] == ["whoami"]
            result = await session.call_tool("whoami", {})
            first = result.content[0]
            assert isinstance(first, TextContent)
            return first.text

    return await asyncio.wait_for(run(), 30)


async def connect_refused(server: OAuthMcpServer, auth: httpx.Auth | None) -> SignInRequired:
    with pytest.raises(BaseException) as caught:
        await whoami(server, auth)
    found = sign_in_required(caught.value)  # the SDK's task groups wrap what a request raised
    assert found is not None, f"not SignInRequired: {caught.value!r}"
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_sign_in_with_dynamic_registration_then_call_the_tool(
    oauth_server: OAuthMcpServer, store: Path
) -> None:
    server = config(oauth_server)
    assert needs_oauth(server)
    opened: list[str] = []
    pages: list[httpx.Response] = []

    def open_url(url: str) -> None:
        opened.append(url)
        pages.append(follow(url))

    await sign_in(server, None, store_path=store, open_url=open_url, timeout=30)

    # discovery through the 401's resource_metadata, then path-aware RFC 8414 metadata
    assert oauth_server.log.requests[:4] == [
        "/mcp",
        "/resource-metadata",
        "/.well-known/oauth-authorization-server/as",
        "/as/register",
    ]
    [registration] = oauth_server.log.registrations
    assert registration["client_name"] == "pi-tui"
    query = {key: values[0] for key, values in parse_qs(urlsplit(opened[0]).query).items()}
    assert opened[0].startswith(f"{oauth_server.issuer}/authorize?")
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["scope"] == SCOPE and query["resource"] == oauth_server.mcp_url
    assert urlsplit(query["redirect_uri"]).path == "/callback"
    assert urlsplit(query["redirect_uri"]).hostname == "127.0.0.1"
    assert pages[0].status_code == 200 and "Signed in" in pages[0].text
    assert oauth_server.log.token_grants == ["authorization_code"]

    assert os.stat(store).st_mode & 0o777 == 0o600
    assert os.stat(store.parent).st_mode & 0o777 == 0o700
    assert [path.name for path in store.parent.iterdir()] == ["mcp-auth.json"]  # no temporary left
    entry = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    client_id = entry["clientInformation"]["client_id"]
    assert entry["tokens"]["access_token"] in oauth_server.access_tokens
    assert entry["tokens"]["scope"] == SCOPE

    assert await whoami(oauth_server, http_auth(server, None, store_path=store)) == f"client {client_id}"
    assert oauth_server.log.rejected == [""]  # only the sign-in's probe went without a token

    # a second sign-in keeps the registered client (its redirect URI still fits)
    await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    assert len(oauth_server.log.registrations) == 1
    assert entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]["clientInformation"]["client_id"] == client_id


async def test_refresh_when_the_access_token_expired(oauth_server: OAuthMcpServer, store: Path) -> None:
    server = config(oauth_server)
    oauth_server.access_token_lifetime = 1
    await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    before = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    poll_until(lambda: time.time() * 1000 > before["tokensExpireAt"], "the access token to expire")
    oauth_server.access_token_lifetime = 3600

    client_id = before["clientInformation"]["client_id"]
    assert await whoami(oauth_server, http_auth(server, None, store_path=store)) == f"client {client_id}"

    assert oauth_server.log.token_grants == ["authorization_code", "refresh_token"]
    assert oauth_server.log.rejected == [""]  # refreshed before sending: the server never said no
    after = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
    assert after["tokens"]["refresh_token"] != before["tokens"]["refresh_token"]  # the rotated one
    assert after["tokensExpireAt"] > time.time() * 1000 + 3000 * 1000
    assert os.stat(store).st_mode & 0o777 == 0o600


async def test_refresh_when_the_server_rejects_the_token(oauth_server: OAuthMcpServer, store: Path) -> None:
    server = config(oauth_server)
    await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    before = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]["tokens"]
    oauth_server.revoke_access_tokens()

    assert (await whoami(oauth_server, http_auth(server, None, store_path=store))).startswith("client dyn-")

    assert oauth_server.log.rejected == ["", before["access_token"]]
    assert oauth_server.log.token_grants == ["authorization_code", "refresh_token"]
    after = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]["tokens"]
    assert after["access_token"] != before["access_token"]
    assert after["access_token"] in oauth_server.access_tokens


async def test_no_token_or_a_dead_refresh_asks_for_sign_in(oauth_server: OAuthMcpServer, store: Path) -> None:
    server = config(oauth_server)
    refused = await connect_refused(oauth_server, http_auth(server, None, store_path=store))
    assert str(refused) == (
        "MCP server 'demo' needs sign-in (not signed in): /mcp or `pi-tui mcp login demo` signs in"
    )
    assert "\n" not in str(refused)
    # nothing interactive happened: no registration, no authorization request
    assert oauth_server.log.registrations == [] and oauth_server.log.authorize == []
    assert not store.exists()

    await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    oauth_server.revoke_everything()
    refused = await connect_refused(oauth_server, http_auth(server, None, store_path=store))
    assert "no longer accepts the sign-in" in str(refused)
    assert oauth_server.log.token_grants == ["authorization_code", "refresh_token"]
    entry = entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    assert "tokens" not in entry and "clientInformation" in entry  # the dead grant is gone
    assert len(oauth_server.log.authorize) == 1


async def test_sign_out_deletes_the_credentials(oauth_server: OAuthMcpServer, store: Path) -> None:
    server = config(oauth_server)
    assert not has_sign_in(server, store_path=store)
    await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    assert has_sign_in(server, store_path=store)
    assert sign_out(server, store_path=store) is True
    assert entries(store) == {}
    assert not has_sign_in(server, store_path=store)
    await connect_refused(oauth_server, http_auth(server, None, store_path=store))
    assert sign_out(server, store_path=store) is False


async def test_a_configured_client_is_not_registered(oauth_server: OAuthMcpServer, store: Path) -> None:
    port = free_port()
    oauth_server.add_client("my-client", [f"http://127.0.0.1:{port}/callback"], secret="s3cret")
    settings = {"clientId": "my-client", "clientSecret": "s3cret", "callbackPort": port}
    server = config(oauth_server)

    await sign_in(server, settings, store_path=store, open_url=browser, timeout=30)

    assert oauth_server.log.registrations == []
    assert oauth_server.log.authorize[0]["redirect_uri"] == f"http://127.0.0.1:{port}/callback"
    assert oauth_server.log.token_auth == ["basic"]  # the secret proved the client
    assert "clientInformation" not in entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    assert await whoami(oauth_server, http_auth(server, settings, store_path=store)) == "client my-client"

    oauth_server.revoke_access_tokens()  # the refresh authenticates with the configured secret
    assert await whoami(oauth_server, http_auth(server, settings, store_path=store)) == "client my-client"
    assert oauth_server.log.token_auth == ["basic", "basic"]


async def test_a_pasted_redirect_url_completes_the_sign_in(oauth_server: OAuthMcpServer, store: Path) -> None:
    opened: list[str] = []

    async def paste() -> str:
        """The user's browser is elsewhere: it lands on a callback it cannot reach; its URL is pasted."""
        await asyncio.to_thread(poll_until, lambda: opened, "the authorization URL")
        async with httpx.AsyncClient() as elsewhere:
            redirect = await elsewhere.get(opened[0])
        assert redirect.status_code == 302
        return redirect.headers["location"]

    server = config(oauth_server)
    await sign_in(server, None, store_path=store, open_url=opened.append, pasted_redirect=paste, timeout=30)

    assert "tokens" in entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    assert "/callback" not in " ".join(oauth_server.log.requests)
    assert (await whoami(oauth_server, http_auth(server, None, store_path=store))).startswith("client dyn-")


def with_state(url: str, state: str) -> str:
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    return urlunsplit(parts._replace(query=urlencode({**query, "state": state})))


async def test_a_response_with_another_state_is_refused(oauth_server: OAuthMcpServer, store: Path) -> None:
    server = config(oauth_server)
    callbacks: list[int] = []

    def open_url(url: str) -> None:
        location = httpx.get(url).headers["location"]
        callbacks.append(httpx.get(with_state(location, "forged")).status_code)  # ignored: 400
        callbacks.append(httpx.get(location).status_code)  # the real one completes the sign-in

    await sign_in(server, None, store_path=store, open_url=open_url, timeout=30)
    assert callbacks == [400, 200]
    assert oauth_server.log.token_grants == ["authorization_code"]

    opened: list[str] = []

    async def paste() -> str:
        await asyncio.to_thread(poll_until, lambda: opened, "the authorization URL")
        async with httpx.AsyncClient() as elsewhere:
            return with_state((await elsewhere.get(opened[0])).headers["location"], "forged")

    other = config(oauth_server, name="other")
    with pytest.raises(SignInError) as refused:
        await sign_in(
            other, None, store_path=store, open_url=opened.append, pasted_redirect=paste, timeout=30
        )
    assert str(refused.value) == (
        "MCP server 'other': sign-in failed: the pasted URL belongs to a different sign-in "
        "(its state does not match)"
    )
    assert "tokens" not in entries(store).get(f"mcp__other|{oauth_server.mcp_url}", {})
    assert oauth_server.log.token_grants == ["authorization_code"]  # the forged code was never exchanged


async def test_an_authorization_response_from_another_issuer_is_refused(
    oauth_server: OAuthMcpServer, store: Path
) -> None:
    oauth_server.iss_override = "https://attacker.example/as"
    with pytest.raises(SignInError) as refused:
        await sign_in(config(oauth_server), None, store_path=store, open_url=browser, timeout=30)
    assert "comes from issuer 'https://attacker.example/as'" in str(refused.value)
    assert oauth_server.log.token_grants == []


async def test_cimd_is_refused_in_one_line(oauth_server: OAuthMcpServer, store: Path) -> None:
    with pytest.raises(SignInError) as refused:
        await sign_in(
            config(oauth_server),
            {"clientRegistration": "cimd"},
            store_path=store,
            open_url=browser,
            timeout=30,
        )
    assert str(refused.value) == (
        "MCP server 'demo': oauth.clientRegistration \"cimd\" needs a hosted Client ID Metadata "
        'Document, which pi-tui does not have; use "auto" or "dcr", or set oauth.clientId'
    )
    assert oauth_server.log.requests == []


async def test_two_names_for_one_url_sign_in_separately(oauth_server: OAuthMcpServer, store: Path) -> None:
    alpha, beta = config(oauth_server, "alpha"), config(oauth_server, "beta")
    await sign_in(alpha, None, store_path=store, open_url=browser, timeout=30)
    await sign_in(beta, None, store_path=store, open_url=browser, timeout=30)

    stored = entries(store)
    assert sorted(stored) == [f"mcp__alpha|{oauth_server.mcp_url}", f"mcp__beta|{oauth_server.mcp_url}"]
    alpha_client = stored[f"mcp__alpha|{oauth_server.mcp_url}"]["clientInformation"]["client_id"]
    beta_client = stored[f"mcp__beta|{oauth_server.mcp_url}"]["clientInformation"]["client_id"]
    assert alpha_client != beta_client
    assert await whoami(oauth_server, http_auth(alpha, None, store_path=store)) == f"client {alpha_client}"
    assert await whoami(oauth_server, http_auth(beta, None, store_path=store)) == f"client {beta_client}"

    # the same name and URL from another mcp.json shares alpha's sign-in
    project_alpha = config(oauth_server, "alpha", source=Path("/project/.pi/mcp.json"))
    assert (
        await whoami(oauth_server, http_auth(project_alpha, None, store_path=store))
        == f"client {alpha_client}"
    )

    assert sign_out(alpha, store_path=store) is True
    await connect_refused(oauth_server, http_auth(alpha, None, store_path=store))
    assert await whoami(oauth_server, http_auth(beta, None, store_path=store)) == f"client {beta_client}"


async def test_a_configured_metadata_url_replaces_discovery(
    oauth_server: OAuthMcpServer, store: Path
) -> None:
    oauth_server.prm_authorization_server = f"{oauth_server.base}/nowhere"
    server = config(oauth_server)
    with pytest.raises(SignInError) as wrong:
        await sign_in(server, None, store_path=store, open_url=browser, timeout=30)
    assert "sign-in failed" in str(wrong.value)

    settings = {"authServerMetadataUrl": oauth_server.metadata_url}
    await sign_in(server, settings, store_path=store, open_url=browser, timeout=30)
    oauth_server.revoke_access_tokens()  # the refresh finds the token endpoint the same way
    assert (await whoami(oauth_server, http_auth(server, settings, store_path=store))).startswith(
        "client dyn-"
    )

    with pytest.raises(SignInError) as insecure:
        await sign_in(
            server, {"authServerMetadataUrl": "http://example.com/meta"}, store_path=store, open_url=browser
        )
    assert str(insecure.value) == (
        "MCP server 'demo': oauth.authServerMetadataUrl must use https (http only on localhost, "
        "127.0.0.1 or [::1])"
    )


async def test_callback_url_is_sent_as_written_with_a_port_added(
    oauth_server: OAuthMcpServer, store: Path
) -> None:
    port = free_port()
    settings = {"callbackUrl": "http://localhost/oauth/done", "callbackPort": port}
    await sign_in(config(oauth_server), settings, store_path=store, open_url=browser, timeout=30)
    assert oauth_server.log.registrations[0]["redirect_uris"] == [f"http://localhost:{port}/oauth/done"]

    with pytest.raises(SignInError) as remote:
        await sign_in(
            config(oauth_server),
            {"callbackUrl": "https://example.com/cb"},
            store_path=store,
            open_url=browser,
        )
    assert "oauth.callbackUrl must use http on localhost, 127.0.0.1 or [::1]" in str(remote.value)

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        with pytest.raises(SignInError) as in_use:
            await sign_in(config(oauth_server), {"callbackPort": busy}, store_path=store, open_url=print)
    assert str(in_use.value).startswith(
        f"MCP server 'demo': sign-in failed: cannot listen for the callback on 127.0.0.1:{busy}: "
    )


async def test_the_sign_in_is_bounded_by_its_timeout(oauth_server: OAuthMcpServer, store: Path) -> None:
    started = time.monotonic()
    with pytest.raises(SignInError) as late:
        await sign_in(config(oauth_server), None, store_path=store, open_url=lambda url: None, timeout=1.0)
    assert str(late.value) == "MCP server 'demo': sign-in did not finish within 1 s; no tokens were saved"
    assert time.monotonic() - started < 10
    assert "tokens" not in entries(store)[f"mcp__demo|{oauth_server.mcp_url}"]
    assert not has_sign_in(config(oauth_server), store_path=store)  # a registered client is no sign-in


async def test_a_broken_store_is_reported_and_left_alone(oauth_server: OAuthMcpServer, store: Path) -> None:
    store.parent.mkdir(parents=True)
    store.write_text("{not json")
    with pytest.raises(OAuthStoreError) as broken:
        await sign_in(config(oauth_server), None, store_path=store, open_url=browser, timeout=30)
    assert str(broken.value).startswith(f"{store}, line 1 column 2: invalid JSON")
    assert store.read_text() == "{not json"
    with pytest.raises(OAuthStoreError):
        sign_out(config(oauth_server), store_path=store)
    assert store.read_text() == "{not json"


def test_needs_oauth_and_the_store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = ConfigSource("user")
    with_header = ServerConfig(
        "a", "http", source, url="https://x/mcp", headers={"authorization": "Bearer t"}
    )
    plain = ServerConfig("b", "http", source, url="https://x/mcp", headers={"X-Api": "1"})
    stdio = ServerConfig("c", "stdio", source, command="srv")
    assert not needs_oauth(with_header) and needs_oauth(plain) and not needs_oauth(stdio)
    assert http_auth(with_header, None, store_path=tmp_path / "s.json") is None
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agentdir"))
    assert store_path() == tmp_path / "agentdir" / "mcp-auth.json"
