"""/login with a subscription and /logout of either kind, through the real app (pilot), against
the local authorization server: the test plays the browser (it follows the URL the dialog shows,
landing on pi-tui's callback), the user pasting the code, and the user entering a device code."""

from __future__ import annotations

import contextlib
import json
import socket
import stat
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from pi_tui.ai.oauth.providers import ENDPOINTS_ENV
from pi_tui.tui.screens.login_dialog import LoginDialog
from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from pi_tui.tui.transcript import InfoItem
from tests.support.provider_auth_server import ProviderAuthServer, running_auth_server
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text, settle
from tests.tui.test_more_commands import choose, type_command

SIZE = (100, 50)


@pytest.fixture
def auth_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderAuthServer]:
    monkeypatch.delenv("DISPLAY", raising=False)  # no browser is started by the tests
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with running_auth_server() as server:
        monkeypatch.setenv(ENDPOINTS_ENV, str(server.write_endpoints(tmp_path / "endpoints.json")))
        yield server


def infos(app: Any) -> list[InfoItem]:
    return [item for item in app.chat.items if isinstance(item, InfoItem)]


def location(url: str) -> str:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    try:
        urllib.request.build_opener(NoRedirect).open(url, timeout=10)
    except urllib.error.HTTPError as error:
        return str(error.headers["Location"])
    raise AssertionError("no redirect")


def saved(agent_dir: Path) -> dict[str, Any]:
    path = agent_dir / "auth.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def open_dialog(pilot: Any, app: Any, subscription: str, method: str | None) -> LoginDialog:
    await type_command(pilot, app, "/login")
    await choose(pilot, app, subscription)
    if method is not None:
        await choose(pilot, app, method)
    return await wait_for_screen(pilot, app, LoginDialog)


async def test_login_lists_subscriptions_first_and_signs_in_through_the_browser(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        labels = [label for _value, label in menu.choices]
        assert labels[:8] == [  # pi 1.5.2's order: its preferred OpenRouter, then by provider name
            "OpenRouter [account]  • not configured",
            "Anthropic [subscription]  • not configured",
            "GitHub Copilot [subscription]  • not configured",
            "Kimi For Coding [subscription]  • not configured",
            "Meta [subscription]  • not configured",
            "OpenAI [subscription]  • not configured",
            "OpenAI Codex [subscription]  • not configured",
            "xAI [subscription]  • not configured",
        ]
        assert any(label.startswith("Groq") for label in labels[8:])  # then the API keys
        await choose(pilot, app, "Anthropic [subscription]")
        methods = await wait_for_screen(pilot, app, ChoiceMenu)
        assert [label for _v, label in methods.choices] == [
            "Browser login (default)",
            "Copy code login (headless)",
        ]
        await choose(pilot, app, "Browser login")
        dialog = await wait_for_screen(pilot, app, LoginDialog)
        url = await wait_until(pilot, lambda: dialog.url, "the authorization URL")
        assert url in screen_text(app).replace("\n", "") or url[:60] in screen_text(app)
        assert "no display here" in screen_text(app)  # said why no browser was opened
        statuses: list[int] = []
        threading.Thread(
            target=lambda: statuses.append(urllib.request.urlopen(url).status), daemon=True
        ).start()
        await wait_until(pilot, lambda: "anthropic" in saved(agent_dir), "the login to be saved")
        await settle(pilot, app)
        assert not isinstance(app.screen, LoginDialog)
        credential = saved(agent_dir)["anthropic"]
        assert list(credential) == ["type", "refresh", "access", "expires"]
        assert credential["access"] == auth_server.issued["access"][-1]
        assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600
        assert infos(app)[-1].text.startswith("Logged in to Anthropic.")
        assert credential["access"] not in screen_text(app)
        await wait_until(pilot, lambda: statuses == [200], "the browser's page")

        await type_command(pilot, app, "/login")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.choices[1][1] == "Anthropic [subscription]  ✓ logged in"
        await pilot.press("escape")


async def test_copy_code_login_takes_the_pasted_code(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_dialog(pilot, app, "Anthropic [subscription]", "Copy code login")
        url = await wait_until(pilot, lambda: dialog.url, "the authorization URL")
        query = parse_qs(urlsplit(location(url)).query)
        field = await wait_until(pilot, lambda: dialog.query_one("#login-input").display, "the paste field")
        assert field
        await pilot.press(*f"{query['code'][0]}#{query['state'][0]}", "enter")
        await wait_until(pilot, lambda: "anthropic" in saved(agent_dir), "the login to be saved")
        await settle(pilot, app)
        assert saved(agent_dir)["anthropic"]["refresh"] == auth_server.issued["refresh"][-1]


async def test_copilot_device_flow_in_the_dialog(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        await choose(pilot, app, "GitHub Copilot")
        await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press("enter")  # blank: github.com
        dialog = await wait_for_screen(pilot, app, LoginDialog)
        code = await wait_until(pilot, lambda: dialog.user_code, "the device code")
        assert f"Enter code: {code}" in screen_text(app)
        assert f"{auth_server.base_url}/github/login/device" in screen_text(app)
        auth_server.approve(code)
        await wait_until(pilot, lambda: "github-copilot" in saved(agent_dir), "the login to be saved")
        await settle(pilot, app)
        credential = saved(agent_dir)["github-copilot"]
        assert credential["refresh"].startswith("gho_") and credential["availableModelIds"] == ["gpt-4.1"]
        assert infos(app)[-1].text.startswith("Logged in to GitHub Copilot.")


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_escape_cancels_and_closes_the_callback(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer, key: str
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_dialog(pilot, app, "Anthropic [subscription]", "Browser login")
        url = await wait_until(pilot, lambda: dialog.url, "the authorization URL")
        port = urlsplit(parse_qs(urlsplit(url).query)["redirect_uri"][0]).port
        await pilot.press(key)
        await wait_until(
            pilot, lambda: infos(app) and infos(app)[-1].text == "Login cancelled.", "the notice"
        )
        assert not isinstance(app.screen, LoginDialog)
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
        assert saved(agent_dir) == {}


async def test_a_refused_login_says_so(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    auth_server.deny = True
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_dialog(pilot, app, "Anthropic [subscription]", "Browser login")
        url = await wait_until(pilot, lambda: dialog.url, "the authorization URL")
        threading.Thread(target=_get, args=(url,), daemon=True).start()
        await wait_until(pilot, lambda: infos(app) and infos(app)[-1].level == "error", "the failure")
        assert "refused the sign-in: The user said no" in infos(app)[-1].text
        assert saved(agent_dir) == {}


def _get(url: str) -> None:
    """A browser following the URL (the refusal's page is a 400)."""
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(url, timeout=10).close()


async def test_logout_lists_logins_and_keys(project: Path, agent_dir: Path) -> None:
    oauth = {"type": "oauth", "refresh": "r", "access": "a", "expires": 4_102_444_800_000}  # 2100
    (agent_dir / "auth.json").write_text(
        json.dumps({"github-copilot": oauth, "groq": {"type": "api_key", "key": "gsk-1"}})
    )
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/logout")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert [label for _v, label in menu.choices] == ["GitHub Copilot  • subscription", "Groq  • API key"]
        await choose(pilot, app, "GitHub Copilot")
        await settle(pilot, app)
        said = [item.text for item in infos(app)]
        assert any(text.startswith("Removed the subscription login for GitHub Copilot") for text in said), (
            said
        )
        assert saved(agent_dir) == {"groq": {"type": "api_key", "key": "gsk-1"}}


async def test_login_with_a_provider_named_skips_the_list(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login github-copilot")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)  # pi asks: the account or a token
        assert len(menu.choices) == 2
        await choose(pilot, app, "GitHub Copilot [subscription]")
        await wait_for_screen(pilot, app, TextPrompt)  # the Enterprise question, no provider list
        await pilot.press("escape")
        await settle(pilot, app)
        await type_command(pilot, app, "/login groq")
        prompt = await wait_for_screen(pilot, app, TextPrompt)
        assert prompt.title_text == "Enter API key for Groq:"
        await pilot.press("escape")
        await settle(pilot, app)
        await type_command(pilot, app, "/login nope")
        await settle(pilot, app)
        said = infos(app)[-1]
        assert said.level == "error" and said.text.startswith('Unknown provider "nope"')


async def test_meta_device_sign_in_in_the_dialog(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login meta")
        await choose(pilot, app, "Meta [subscription]")  # not the API key; one method: the dialog
        dialog = await wait_for_screen(pilot, app, LoginDialog)
        code = await wait_until(pilot, lambda: dialog.user_code, "the device code")
        assert f"Enter code: {code}" in screen_text(app)
        assert f"{auth_server.base_url}/meta/verify?user_code={code}" in screen_text(app).replace("\n", "")
        auth_server.approve(code)
        await wait_until(pilot, lambda: "meta" in saved(agent_dir), "the login to be saved")
        await settle(pilot, app)
        credential = saved(agent_dir)["meta"]
        assert credential["access"].startswith("meta-key-") and credential["refresh"].startswith(
            "meta-identity-"
        )
        assert infos(app)[-1].text.startswith("Logged in to Meta.")


async def test_login_asks_which_sign_in_and_refuses_radius(
    project: Path, agent_dir: Path, auth_server: ProviderAuthServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login openai")  # ChatGPT or an API key, as pi asks
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert [label.split("  ")[0] for _v, label in menu.choices] == [
            "OpenAI [subscription]",
            "OpenAI",
        ]
        await pilot.press("escape")
        await settle(pilot, app)
        await type_command(pilot, app, "/login radius")
        await settle(pilot, app)
        said = infos(app)[-1]
        assert said.level == "error" and "pi-messages" in said.text and "\n" not in said.text
        assert saved(agent_dir) == {}
