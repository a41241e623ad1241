"""``pi-tui auth login`` with a subscription, through the installed script, against the local
authorization server: the test plays the browser (it GETs the printed URL, whose redirect lands
on pi-tui's loopback callback), the user pasting the redirect URL on stdin, and the user entering
a device code. The saved auth.json is pi's shape, and check / print-bearer-token / logout work on
it; the real pi 1.5.2 reads it."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.provider_auth_server import ACCOUNT_ID, ProviderAuthServer, running_auth_server

WAIT = 20.0
"""Seconds a step may take on a loaded machine (a passing run takes well under one)."""


@pytest.fixture
def server() -> Iterator[ProviderAuthServer]:
    with running_auth_server() as auth:
        yield auth


@pytest.fixture
def env(server: ProviderAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """No provider key, no display (so no browser is started), the endpoints on the server: for
    the installed script (the returned environment) and for :func:`cli` in this process."""
    endpoints = server.write_endpoints(tmp_path / "endpoints.json")
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name in ("DISPLAY", "WAYLAND_DISPLAY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PI_TUI_OAUTH_ENDPOINTS", str(endpoints))
    return dict(os.environ)


def cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """A command after the login, through the installed script's entry point in this process
    (each run of the script costs a second of start-up; the logins themselves run the script)."""
    from pi_tui.cli import main

    capfd.readouterr()
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


class Login:
    """A running ``pi-tui auth login``: its stdout read line by line on a thread."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [SCRIPT, "auth", "login", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def line(self, pattern: str) -> re.Match[str]:
        """The first printed line matching ``pattern`` (waiting for it)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(f"no line matching {pattern!r}; printed: {self.seen}")

    def type(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        """(exit code, the rest of stdout, stderr) once it has ended."""
        self.process.wait(timeout=WAIT)
        self.reader.join(timeout=WAIT)
        assert self.process.stderr is not None
        err = self.process.stderr.read()
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        return self.process.returncode, "\n".join(self.seen + rest), err


def run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def browse(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def location(url: str) -> str:
    """The redirect the authorization endpoint answers with, not followed (a browser elsewhere)."""

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
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return json.loads(path.read_text())


def test_anthropic_login_in_the_browser_then_check_print_and_logout(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    (agent_dir / "auth.json").write_text(json.dumps({"groq": {"type": "api_key", "key": "gsk-kept"}}))
    login = Login(["anthropic"], env, tmp_path)
    url = login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)
    assert browse(url) == 200  # the browser lands on pi-tui's callback, which says signed in
    code, out, err = login.finish()
    assert code == 0, (out, err)
    assert "Logged in to Anthropic (Claude Pro/Max)" in out and str(agent_dir / "auth.json") in out
    stored = saved(agent_dir)
    assert stored["groq"] == {"type": "api_key", "key": "gsk-kept"}  # the rest is kept
    credential = stored["anthropic"]
    assert list(credential) == ["type", "refresh", "access", "expires"]  # pi's shape and order
    assert credential["access"] == server.issued["access"][-1]
    assert credential["access"] not in out + err

    code, out, err = cli(capfd, "auth", "check", "anthropic", "--json")
    assert code == 0 and json.loads(out)["authType"] == "oauth", err
    assert cli(capfd, "auth", "print-bearer-token", "anthropic")[:2] == (0, f"{credential['access']}\n")
    code, out, err = cli(capfd, "auth", "print-api-key", "anthropic")
    assert code == 1 and "configured with OAuth" in err

    # a token that must last two hours more is renewed first, and the renewal is saved
    code, out, err = cli(capfd, "auth", "print-bearer-token", "anthropic", "--min-expiry", "2h")
    assert code == 0, err
    assert out.strip() == server.issued["access"][-1] != credential["access"]
    assert server.log.token_requests[-1]["grant_type"] == "refresh_token"
    assert saved(agent_dir)["anthropic"]["access"] == server.issued["access"][-1]

    code, out, err = cli(capfd, "auth", "logout", "anthropic")
    assert code == 0 and "Removed" in out
    assert saved(agent_dir) == {"groq": {"type": "api_key", "key": "gsk-kept"}}


def test_pasted_redirect_url_on_stdin(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    login = Login(["anthropic"], env, tmp_path)
    url = login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)
    login.type("\n" + location(url) + "\n")  # a blank line first: ignored
    code, out, err = login.finish()
    assert code == 0, (out, err)
    assert saved(agent_dir)["anthropic"]["access"] == server.issued["access"][-1]


def test_no_browser_anthropic_takes_the_copied_code(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    login = Login(["anthropic", "--no-browser"], env, tmp_path)
    url = login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)
    assert parse_qs(urlsplit(url).query)["redirect_uri"] == [
        "https://platform.claude.com/oauth/code/callback"
    ]
    query = parse_qs(urlsplit(location(url)).query)
    login.type(f"{query['code'][0]}#{query['state'][0]}\n")
    code, out, err = login.finish()
    assert code == 0, (out, err)
    assert saved(agent_dir)["anthropic"]["refresh"] == server.issued["refresh"][-1]


def test_copilot_device_flow(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    server.slow_down_once = True
    login = Login(["github-copilot"], env, tmp_path)
    found = login.line(r"^Open (\S+) and enter the code: (\S+)$")
    assert found.group(1) == f"{server.base_url}/github/login/device"
    server.approve(found.group(2))
    code, out, err = login.finish()
    assert code == 0, (out, err)
    credential = saved(agent_dir)["github-copilot"]
    assert credential["refresh"].startswith("gho_") and credential["access"].startswith("tid=")
    assert credential["availableModelIds"] == ["gpt-4.1"]
    assert "Logged in to GitHub Copilot" in out


def test_codex_device_code_with_no_browser(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    login = Login(["openai-codex", "--no-browser"], env, tmp_path)
    found = login.line(r"^Open (\S+) and enter the code: (\S+)$")
    assert found.group(1).endswith("/openai/codex/device")
    server.approve(found.group(2))
    code, out, err = login.finish()
    assert code == 0, (out, err)
    credential = saved(agent_dir)["openai-codex"]
    assert credential["accountId"] == ACCOUNT_ID and credential["type"] == "oauth"


def test_an_expired_device_code_is_one_line_and_saves_nothing(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    login = Login(["github-copilot"], env, tmp_path)
    login.line(r"enter the code: (\S+)$")
    server.expire()
    code, _out, err = login.finish()
    assert code == 1 and "expired" in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (agent_dir / "auth.json").exists()


@pytest.mark.pi_interop
def test_real_pi_reads_the_login_pi_tui_saved(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    from tests.support.real_pi import run_pi

    login = Login(["anthropic"], env, tmp_path)
    assert browse(login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)) == 200
    assert login.finish()[0] == 0
    checked = run_pi(
        ["auth", "check", "--provider", "anthropic", "--json"], agent_dir=agent_dir, cwd=tmp_path, pi="1.5.2"
    )
    assert json.loads(checked.stdout) == {"status": "ready", "provider": "anthropic", "authType": "oauth"}, (
        checked.stdout,
        checked.stderr,
    )


def test_ctrl_c_stops_the_sign_in(
    server: ProviderAuthServer, env: dict[str, str], agent_dir: Path, tmp_path: Path
) -> None:
    login = Login(["anthropic"], env, tmp_path)
    url = login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)
    login.process.send_signal(signal.SIGINT)
    code, _out, err = login.finish()
    assert code == 1 and err.strip() == "pi-tui: auth login: Login cancelled", err
    redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", urlsplit(redirect).port), timeout=1):
        pass
    assert not (agent_dir / "auth.json").exists()


def test_check_an_expired_login(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Expired with a refresh token: ready without renewing (--no-refresh); renewed by a plain
    check; invalid (exit 2, one line) when the provider refuses the renewal, the file kept."""
    login = Login(["anthropic"], env, tmp_path)
    assert browse(login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)) == 200
    assert login.finish()[0] == 0
    stored = saved(agent_dir)
    stored["anthropic"]["expires"] = 1
    (agent_dir / "auth.json").write_text(json.dumps(stored))
    assert cli(capfd, "auth", "check", "anthropic", "--no-refresh")[:2] == (0, "ready\n")
    assert saved(agent_dir)["anthropic"]["expires"] == 1  # nothing renewed
    assert cli(capfd, "auth", "check", "anthropic")[:2] == (0, "ready\n")
    assert saved(agent_dir)["anthropic"]["access"] == server.issued["access"][-1]

    stored = saved(agent_dir)
    stored["anthropic"].update(expires=1, refresh="a-refresh-token-the-server-never-issued")
    (agent_dir / "auth.json").write_text(json.dumps(stored))
    code, out, err = cli(capfd, "auth", "check", "anthropic")
    assert (code, out) == (2, "invalid\n")
    assert len(err.strip().splitlines()) == 1 and "/login anthropic" in err
    assert saved(agent_dir) == stored


# --- the other sign-ins pi 1.5.2 has ----------------------------------------------------------


@pytest.fixture
def closed_stdin() -> Iterator[None]:
    """fd 0 at end of input, as for a script with nothing to paste (the in-process login reads
    fd 0 for a pasted URL; the browser's callback is then the only way back)."""
    saved_fd = os.dup(0)
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)
    try:
        yield
    finally:
        os.dup2(saved_fd, 0)
        os.close(saved_fd)


def test_chatgpt_sign_in_for_openai(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``pi-tui auth login openai`` is the ChatGPT sign-in, as pi's (``--api-key`` saves a key)."""
    login = Login(["openai"], env, tmp_path)
    url = login.line(r"^(http://\S+/chatgpt/authorize\?\S+)$").group(1)
    assert browse(url) == 200
    code, out, err = login.finish()
    assert code == 0, (out, err)
    assert "Logged in to OpenAI (ChatGPT subscription)" in out
    credential = saved(agent_dir)["openai"]
    assert (
        credential["clientId"] == server.issued_client and credential["access"] == server.issued["access"][-1]
    )
    device_id = json.loads((agent_dir / "settings.json").read_text())["deviceId"]
    assert parse_qs(urlsplit(url).query)["ext_agent_host_id"] == [f"urn:uuid:{device_id}"]
    code, out, err = cli(capfd, "auth", "check", "openai", "--json")
    assert code == 0 and json.loads(out)["authType"] == "oauth", err


def test_xai_device_sign_in_then_renewal(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    login = Login(["xai"], env, tmp_path)
    found = login.line(r"^Open (\S+) and enter the code: (\S+)$")
    assert found.group(1).startswith("https://accounts.x.ai/device?user_code=")
    server.approve(found.group(2))
    code, out, err = login.finish()
    assert code == 0, (out, err)
    assert "Logged in to xAI (Grok/X subscription)" in out
    credential = saved(agent_dir)["xai"]
    assert credential["access"] == server.issued["access"][-1]
    # a token that must last two hours more is renewed at xAI's token endpoint and saved
    code, out, _err = cli(capfd, "auth", "print-bearer-token", "xai", "--min-expiry", "2h")
    assert code == 0 and out.strip() == server.issued["access"][-1] != credential["access"]
    assert saved(agent_dir)["xai"]["refresh"] == server.issued["refresh"][-1]


@pytest.mark.parametrize("provider", ["kimi-coding", "meta"])
def test_kimi_and_meta_device_sign_ins_in_process(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    capfd: pytest.CaptureFixture[str],
    provider: str,
) -> None:
    server.auto_approve = True  # the user entered the code at once
    code, out, err = cli(capfd, "auth", "login", provider)
    assert code == 0, (out, err)
    assert re.search(
        rf"^Open http://\S+/{provider}/verify\?user_code=\S+ and enter the code: \S+$", out, re.M
    )
    credential = saved(agent_dir)[provider]
    assert credential["access"] == server.issued["access"][-1]
    if provider == "meta":
        assert server.log.key_mints == [credential["refresh"]] and "Enabling Meta Model API access" in out
    # renewed: Kimi's refresh grant, Meta's new key minted with the identity token
    code, out, _err = cli(capfd, "auth", "print-bearer-token", provider, "--min-expiry", "25h")
    assert code == 0 and out.strip() == server.issued["access"][-1] != credential["access"]


def test_openrouter_sign_in_in_process(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    capfd: pytest.CaptureFixture[str],
    closed_stdin: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The test is the browser pi-tui opens: it follows the URL to OpenRouter and back."""
    import pi_tui.ai.oauth.browser

    pages: list[int] = []

    def open_browser(url: str) -> bool:
        threading.Thread(target=lambda: pages.append(browse(url)), daemon=True).start()
        return True

    monkeypatch.setattr(pi_tui.ai.oauth.browser, "open_browser", open_browser)
    code, out, err = cli(capfd, "auth", "login", "openrouter")
    assert code == 0, (out, err)
    assert "A browser was opened at this URL:" in out and "Logged in to OpenRouter OAuth" in out
    credential = saved(agent_dir)["openrouter"]
    assert credential == {
        "type": "oauth",
        "access": server.issued["access"][-1],
        "refresh": "",
        "expires": 2**53 - 1,
    }
    assert cli(capfd, "auth", "print-bearer-token", "openrouter")[:2] == (0, f"{credential['access']}\n")


def test_radius_is_refused_in_one_line(
    env: dict[str, str], agent_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capfd, "auth", "login", "radius")
    assert code == 2 and out == "", (out, err)
    assert len(err.strip().splitlines()) == 1 and "pi-messages" in err and "Traceback" not in err
    assert not (agent_dir / "auth.json").exists()


@pytest.mark.pi_interop
def test_real_pi_reads_a_device_login_pi_tui_saved(
    server: ProviderAuthServer,
    env: dict[str, str],
    agent_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    from tests.support.real_pi import run_pi

    server.auto_approve = True
    assert cli(capfd, "auth", "login", "kimi-coding")[0] == 0
    checked = run_pi(
        ["auth", "check", "--provider", "kimi-coding", "--json"],
        agent_dir=agent_dir,
        cwd=tmp_path,
        pi="1.5.2",
    )
    assert json.loads(checked.stdout) == {
        "status": "ready",
        "provider": "kimi-coding",
        "authType": "oauth",
    }, (
        checked.stdout,
        checked.stderr,
    )
