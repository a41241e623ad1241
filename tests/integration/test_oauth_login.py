"""The subscription sign-in flows (pi_tui/ai/oauth/login.py) against the local authorization
server: real loopback HTTP, the test playing the browser (it follows the authorization URL,
whose redirect lands on pi-tui's callback server) and the user (entering the device code)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from pi_tui.ai.oauth.login import enterprise_domain, sign_in
from pi_tui.ai.oauth.login_device import positive, web_page
from pi_tui.ai.oauth.login_errors import LoginCancelled, LoginError
from pi_tui.ai.oauth.providers import ENDPOINTS_ENV
from pi_tui.ai.oauth.tokens import codex_account_id
from tests.support.provider_auth_server import ACCOUNT_ID, ProviderAuthServer, running_auth_server


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with running_auth_server() as auth:
        monkeypatch.setenv(ENDPOINTS_ENV, str(auth.write_endpoints(tmp_path / "endpoints.json")))
        yield auth


def browse(url: str) -> tuple[int, str]:
    """What a browser does with the authorization URL: follow its redirects; (status, final URL)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.geturl()
    except urllib.error.HTTPError as error:
        return error.code, error.geturl()


def location(url: str) -> str:
    """Where the authorization endpoint redirects to, without following it (a browser on
    another machine: the user copies the address bar)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(url, timeout=10)
    except urllib.error.HTTPError as error:
        return str(error.headers["Location"])
    raise AssertionError("the authorization endpoint did not redirect")


class UI:
    """Records what the flow shows; ``on_url`` plays the browser."""

    def __init__(self, on_url: Any = None, on_code: Any = None) -> None:
        self.urls: list[str] = []
        self.codes: list[tuple[str, str]] = []
        self.steps: list[str] = []
        self.on_url = on_url
        self.on_code = on_code

    def show_url(self, url: str, instructions: str) -> None:
        self.urls.append(url)
        if self.on_url is not None:
            threading.Thread(target=self.on_url, args=(url,), daemon=True).start()

    def show_device_code(self, user_code: str, verification_uri: str) -> None:
        self.codes.append((user_code, verification_uri))
        if self.on_code is not None:
            self.on_code(user_code)

    def progress(self, text: str) -> None:
        self.steps.append(text)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_anthropic_browser_login_through_the_loopback_callback(server: ProviderAuthServer) -> None:
    seen: list[tuple[int, str]] = []
    ui = UI(on_url=lambda url: seen.append(browse(url)))
    credential = await sign_in("anthropic", "browser", ui, None)
    assert set(credential) == {"type", "access", "refresh", "expires"}
    assert credential["type"] == "oauth"
    assert credential["access"] == server.issued["access"][-1]
    assert credential["refresh"] == server.issued["refresh"][-1]
    # pi's expiry: now + expires_in - 5 minutes, in milliseconds
    expected = time.time() * 1000 + (3600 - 300) * 1000
    assert abs(credential["expires"] - expected) < 10_000
    query = server.log.authorize[-1]
    assert query["client_id"] == "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
    assert query["code_challenge_method"] == "S256" and query["code"] == "true"
    assert query["redirect_uri"].startswith("http://localhost:") and query["redirect_uri"].endswith(
        "/callback"
    )
    assert "user:inference" in query["scope"]
    token = server.log.token_requests[-1]
    assert token["_content_type"].startswith("application/json")
    assert token["grant_type"] == "authorization_code" and token["state"] == query["state"]
    assert seen and seen[0][0] == 200  # the browser was told it is signed in
    # the callback server is gone once the sign-in ended
    port = urlsplit(query["redirect_uri"]).port
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


async def test_a_stray_request_to_the_callback_does_not_end_the_sign_in(server: ProviderAuthServer) -> None:
    statuses: list[int] = []

    def browser(url: str) -> None:
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        statuses.append(browse(f"{redirect}?code=forged&state=not-the-state")[0])
        statuses.append(browse(url)[0])

    credential = await sign_in("anthropic", "browser", UI(on_url=browser), None)
    assert statuses == [400, 200]
    assert credential["access"] == server.issued["access"][-1]


async def test_pasted_redirect_url_finishes_the_login_and_a_foreign_one_is_refused(
    server: ProviderAuthServer,
) -> None:
    ui = UI()

    async def paste(prompt: str) -> str | None:
        while not ui.urls:
            await asyncio.sleep(0)
        return await asyncio.to_thread(location, ui.urls[-1])

    credential = await sign_in("anthropic", "browser", ui, paste)
    assert credential["access"] == server.issued["access"][-1]

    async def foreign(prompt: str) -> str | None:
        return "http://localhost:53692/callback?code=abc&state=someone-else"

    with pytest.raises(LoginError, match="state mismatch"):
        await sign_in("anthropic", "browser", UI(), foreign)


async def test_anthropic_copy_code_login(server: ProviderAuthServer) -> None:
    ui = UI()

    async def paste(prompt: str) -> str | None:
        redirect = await asyncio.to_thread(location, ui.urls[-1])
        query = parse_qs(urlsplit(redirect).query)
        return f"{query['code'][0]}#{query['state'][0]}"  # what Anthropic's code page shows

    credential = await sign_in("anthropic", "paste", ui, paste)
    assert credential["access"] == server.issued["access"][-1]
    assert server.log.authorize[-1]["redirect_uri"] == "https://platform.claude.com/oauth/code/callback"


async def test_codex_browser_login_on_its_registered_port(
    server: ProviderAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoints = server.endpoints()
    redirect = f"http://localhost:{free_port()}/auth/callback"
    endpoints["openai-codex"]["redirectUri"] = redirect
    (tmp_path / "endpoints.json").write_text(json.dumps(endpoints))
    credential = await sign_in("openai-codex", "browser", UI(on_url=browse), None)
    assert credential["accountId"] == ACCOUNT_ID
    assert set(credential) == {"type", "access", "refresh", "expires", "accountId"}
    query = server.log.authorize[-1]
    assert query["redirect_uri"] == redirect and query["originator"] == "pi"
    assert query["codex_cli_simplified_flow"] == "true"
    token = server.log.token_requests[-1]
    assert token["_content_type"].startswith("application/x-www-form-urlencoded")


async def test_codex_browser_login_with_its_port_taken_takes_the_pasted_url(
    server: ProviderAuthServer, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        endpoints = server.endpoints()
        endpoints["openai-codex"]["redirectUri"] = f"http://localhost:{taken.getsockname()[1]}/auth/callback"
        (tmp_path / "endpoints.json").write_text(json.dumps(endpoints))
        ui = UI()

        async def paste(prompt: str) -> str | None:
            return await asyncio.to_thread(location, ui.urls[-1])

        credential = await sign_in("openai-codex", "browser", ui, paste)
    assert credential["accountId"] == ACCOUNT_ID


async def test_codex_device_code_login(server: ProviderAuthServer) -> None:
    ui = UI(on_code=server.approve)
    credential = await sign_in("openai-codex", "device", ui, None)
    assert credential["accountId"] == ACCOUNT_ID
    assert ui.codes[0][1].endswith("/openai/codex/device")
    assert server.log.token_requests[-1]["redirect_uri"].endswith("/openai/deviceauth/callback")


async def test_copilot_device_flow_with_slow_down_then_copilot_token(server: ProviderAuthServer) -> None:
    server.slow_down_once = True
    polls_before_approval = 3

    def user(code: str) -> None:
        def later() -> None:
            while server.log.device_polls.count(code) < polls_before_approval:
                time.sleep(0.005)
            server.approve(code)

        threading.Thread(target=later, daemon=True).start()

    ui = UI(on_code=user)
    credential = await sign_in("github-copilot", "device", ui, None)
    assert credential["refresh"].startswith("gho_")  # the GitHub token, as pi stores it
    assert credential["access"].startswith("tid=") and "proxy-ep=" in credential["access"]
    assert credential["availableModelIds"] == ["gpt-4.1"]
    assert "enterpriseUrl" not in credential
    assert server.log.copilot_exchanges == [credential["refresh"]]
    assert len(server.log.device_polls) >= polls_before_approval


async def test_an_expired_device_code_is_one_line(server: ProviderAuthServer) -> None:
    def user(code: str) -> None:
        server.expire()

    with pytest.raises(LoginError, match="expired"):
        await sign_in("github-copilot", "device", UI(on_code=user), None)


async def test_cancelling_stops_the_polling_and_closes_the_callback(server: ProviderAuthServer) -> None:
    ui = UI()
    task = asyncio.ensure_future(sign_in("github-copilot", "device", ui, None))
    while len(server.log.device_polls) < 2:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    polls = len(server.log.device_polls)
    await asyncio.sleep(0.1)  # ten poll intervals: none may come now
    assert len(server.log.device_polls) == polls

    browser_ui = UI()
    login = asyncio.ensure_future(sign_in("anthropic", "browser", browser_ui, None))
    while not browser_ui.urls:
        await asyncio.sleep(0.005)
    port = urlsplit(parse_qs(urlsplit(browser_ui.urls[0]).query)["redirect_uri"][0]).port
    login.cancel()
    with pytest.raises(asyncio.CancelledError):
        await login
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


async def test_refusals_and_empty_pastes(server: ProviderAuthServer) -> None:
    server.deny = True
    with pytest.raises(LoginError, match="refused the sign-in: The user said no"):
        await sign_in("anthropic", "browser", UI(on_url=browse), None)

    async def empty(prompt: str) -> str | None:
        return "  "

    with pytest.raises(LoginCancelled):
        await sign_in("anthropic", "paste", UI(), empty)


def test_small_readers() -> None:
    assert enterprise_domain("") is None
    assert enterprise_domain("https://company.ghe.com/") == "company.ghe.com"
    assert enterprise_domain("company.ghe.com") == "company.ghe.com"
    with pytest.raises(LoginError):
        enterprise_domain("not a host")
    assert codex_account_id("a.b") is None
    # a verification page is drawn and opened: an http(s) URL only (xAI's https only, as pi)
    assert web_page("https://accounts.x.ai/device?user_code=AB", https_only=True) is not None
    assert web_page("http://auth.kimi.com/device", https_only=True) is None
    assert web_page("javascript:alert(1)") is None and web_page("https://x.test/\x1b[2J") is None
    assert positive("5") is None and positive(0) is None and positive(True) is None and positive(2.5) == 2.5


# --- the other sign-ins pi 1.5.2 has --------------------------------------------------------


async def test_chatgpt_browser_login_registers_this_installation(
    server: ProviderAuthServer, agent_dir: Path
) -> None:
    seen: list[tuple[int, str]] = []
    credential = await sign_in("openai", "browser", UI(on_url=lambda url: seen.append(browse(url))), None)
    assert seen and seen[0][0] == 200
    assert credential["clientId"] == server.issued_client  # the client OpenAI issued, for renewals
    assert "chatgpt.tokens.use.direct" in credential["scopes"]
    assert credential["access"] == server.issued["access"][-1]
    expected = time.time() * 1000 + (3600 - 180) * 1000  # pi's three-minute margin
    assert abs(credential["expires"] - expected) < 10_000
    query = server.log.authorize[-1]
    device_id = json.loads((agent_dir / "settings.json").read_text())["deviceId"]
    assert query["ext_agent_host_id"] == f"urn:uuid:{device_id}"
    assert query["client_id"] == "dynamic_agent_client" and query["resource"] == "https://api.openai.com/v1"
    assert query["nonce"] and query["state"] and query["code_challenge_method"] == "S256"
    token = server.log.token_requests[-1]
    assert token["client_id"] == server.issued_client and token["resource"] == "https://api.openai.com/v1"

    # the next sign-in is the same installation to OpenAI
    await sign_in("openai", "browser", UI(on_url=browse), None)
    assert server.log.authorize[-1]["ext_agent_host_id"] == f"urn:uuid:{device_id}"


async def test_chatgpt_takes_pi_s_device_id_and_a_pasted_redirect_url(
    server: ProviderAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    pi_id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    (tmp_path / "pi-agent").mkdir()
    (tmp_path / "pi-agent" / "settings.json").write_text(json.dumps({"deviceId": pi_id}))
    ui = UI()

    async def paste(prompt: str) -> str | None:
        while not ui.urls:
            await asyncio.sleep(0)
        return await asyncio.to_thread(location, ui.urls[-1])

    credential = await sign_in("openai", "browser", ui, paste)
    assert credential["clientId"] == server.issued_client
    assert server.log.authorize[-1]["ext_agent_host_id"] == f"urn:uuid:{pi_id}"
    assert not (agent_dir / "settings.json").exists()  # pi's id was used, none made up

    async def without_client(prompt: str) -> str | None:
        while not ui.urls:
            await asyncio.sleep(0)
        redirect = await asyncio.to_thread(location, ui.urls[-1])
        return redirect.split("&client_id=")[0]

    ui = UI()
    with pytest.raises(LoginError, match="no issued client id"):
        await sign_in("openai", "browser", ui, without_client)


async def test_openrouter_login_gives_a_lasting_key(server: ProviderAuthServer) -> None:
    statuses: list[int] = []

    def browser(url: str) -> None:
        callback = parse_qs(urlsplit(url).query)["callback_url"][0]
        stray = callback.rsplit("/", 1)[0] + "/guessed?code=forged"
        statuses.append(browse(stray)[0])  # a guessed path is not the sign-in's
        statuses.append(browse(url)[0])

    ui = UI(on_url=browser)
    credential = await sign_in("openrouter", "browser", ui, None)
    assert credential == {
        "type": "oauth",
        "access": server.issued["access"][-1],
        "refresh": "",
        "expires": 2**53 - 1,
    }
    assert statuses == [404, 200]
    query = server.log.authorize[-1]
    assert "state" not in query and query["code_challenge_method"] == "S256"
    assert urlsplit(query["callback_url"]).hostname == "127.0.0.1"
    exchange = server.log.token_requests[-1]
    assert (
        exchange["_content_type"].startswith("application/json")
        and exchange["code_challenge_method"] == "S256"
    )


@pytest.mark.parametrize("provider", ["kimi-coding", "xai"])
async def test_kimi_and_xai_device_sign_ins(server: ProviderAuthServer, provider: str) -> None:
    server.slow_down_once = True
    ui = UI(on_code=server.approve)
    credential = await sign_in(provider, "device", ui, None)
    assert list(credential) == ["type", "refresh", "access", "expires"]
    assert credential["access"] == server.issued["access"][-1]
    assert credential["refresh"] == server.issued["refresh"][-1]
    margin = 300 if provider == "xai" else 0  # pi stores xAI's five minutes short, Kimi's as said
    assert abs(credential["expires"] - (time.time() * 1000 + (3600 - margin) * 1000)) < 10_000
    user_code, page = ui.codes[0]
    assert page.endswith(f"?user_code={user_code}")  # the page with the code filled in, as pi shows
    start = server.log.device_starts[-1]
    assert start["_content_type"].startswith("application/x-www-form-urlencoded")
    if provider == "xai":
        assert start["referrer"] == "pi" and "grok-cli:access" in start["scope"]
        assert page.startswith("https://")
    else:
        assert start["client_id"] == "17e5f671-d194-4dfb-9706-5516cb48c098"
    assert server.log.device_polls.count(user_code) >= 2  # one slow_down, then the token


async def test_meta_device_sign_in_mints_a_model_api_key(server: ProviderAuthServer) -> None:
    ui = UI(on_code=server.approve)
    credential = await sign_in("meta", "device", ui, None)
    assert credential["refresh"].startswith("meta-identity-")  # the identity token, as pi stores it
    assert credential["access"] == server.issued["access"][-1] and credential["access"].startswith(
        "meta-key-"
    )
    assert abs(credential["expires"] - (time.time() * 1000 + 24 * 3600 * 1000)) < 10_000
    assert server.log.key_mints == [credential["refresh"]]
    assert "Enabling Meta Model API access..." in ui.steps

    server.meta_mint_status = 403
    with pytest.raises(LoginError, match=r"^Meta sign-in failed: Meta ended the session \(HTTP 403\)$"):
        await sign_in("meta", "device", UI(on_code=server.approve), None)


async def test_device_refusals_are_one_line(server: ProviderAuthServer) -> None:
    with pytest.raises(LoginError, match=r"^The xAI device code expired: run the login again$"):
        await sign_in("xai", "device", UI(on_code=lambda code: server.expire()), None)


async def test_radius_is_refused_with_its_reason(server: ProviderAuthServer) -> None:
    with pytest.raises(LoginError, match="pi-messages"):
        await sign_in("radius", "browser", UI(), None)


async def test_a_chatgpt_callback_without_the_issued_client_is_turned_away(
    server: ProviderAuthServer,
) -> None:
    """Without the issued client id the login could never be renewed: the callback answers 400
    and keeps waiting for OpenAI's real redirect, as pi's does."""
    statuses: list[int] = []

    def browser(url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        redirect, state = query["redirect_uri"][0], query["state"][0]
        statuses.append(browse(f"{redirect}?code=no-client&state={state}")[0])
        statuses.append(browse(url)[0])

    credential = await sign_in("openai", "browser", UI(on_url=browser), None)
    assert statuses == [400, 200]
    assert credential["clientId"] == server.issued_client
