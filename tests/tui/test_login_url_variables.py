"""/login asks for what a provider's base URL names (Cloudflare's account id) and saves it in
the credential's ``env``, as pi's Cloudflare login does; ambient credentials are shown by their
source ("✓ AWS access keys"), not as "not configured"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, settle
from tests.tui.test_more_commands import SECRET, SIZE, type_command


async def test_cloudflare_login_asks_for_the_account_id(
    project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login cloudflare-workers-ai")
        prompt = await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press(*SECRET, "enter")
        await wait_until(
            pilot,
            lambda: app.screen is not prompt and isinstance(app.screen, TextPrompt),
            "the account id prompt",
        )
        assert app.screen.title_text == "Enter Cloudflare account ID:"
        await pilot.press(*"acct-1234", "enter")
        await settle(pilot, app)
    saved = json.loads((agent_dir / "auth.json").read_text())
    assert saved == {
        "cloudflare-workers-ai": {
            "type": "api_key",
            "key": SECRET,
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-1234"},
        }
    }


async def test_ambient_aws_keys_are_shown_by_their_source(
    project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        row = next(label for _value, label in menu.choices if label.startswith("Amazon Bedrock"))
        assert row == "Amazon Bedrock  ✓ AWS access keys"
        await pilot.press("escape")


async def test_a_broken_auth_file_is_a_notice_at_startup(project: Path, agent_dir: Path) -> None:
    from tests.tui.test_more_commands import infos

    auth = agent_dir / "auth.json"
    auth.write_text('{"deepseek": {"type": "api_key", "key": "k"},')
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        said = " ".join(item.text for item in infos(app))
        assert f"Saved credentials were not read: {auth}" in said and "invalid JSON" in said
        assert "sign in to a subscription" in said  # the demo's hint: /login signs in, too


async def test_sign_ins_carry_pis_provider_names_and_say_when_a_key_is_there_instead(
    project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-from-env")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        labels = [label for _value, label in menu.choices]
        assert "OpenRouter [account]  • API key configured" in labels  # not "not configured"
        assert "OpenAI [subscription]  • not configured" in labels
        assert "OpenAI Codex [subscription]  • not configured" in labels  # told apart from OpenAI
        await pilot.press("escape")
