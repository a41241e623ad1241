"""The page's system prompt, tool list and JSONL download, in headless Chromium (issue 31,
point 12).

pi 1.5.2's page shows, above the conversation, the system prompt (folded after a few lines,
opened with a click) and the tools with their parameters (each opened with a click), and a
button that downloads the session as ``.jsonl``. The prompt and tools come from the live agent
(``/export``); ``--export FILE`` has no agent and shows none, and a session holding pi 1.x
system messages shows its own where they occur. The download here is the file's exact bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from pi_tui.html_export import PromptContext, export_html
from pi_tui.session import SessionManager
from tests.browser.test_export_page import no_alert
from tests.support.browser import console_errors, open_page, requested_urls
from tests.support.requires import requires
from tests.support.sessions import INJECTIONS, branchy_session, hostile_session
from tests.support.tmux import TmuxPane
from tests.support.waiting import poll_until

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
PI1_SESSION = Path(__file__).resolve().parents[1] / "data" / "pi1-totals" / "session.jsonl"


@dataclass
class Described:
    """What the page is given of a tool (an extension may describe its tools in any words)."""

    name: str
    description: str
    parameters: dict[str, Any]


def tool(name: str, description: str, parameters: dict[str, Any]) -> Described:
    return Described(name, description, parameters)


def hostile_context() -> PromptContext:
    first, second = INJECTIONS
    prompt = "\n".join([f"You are a careful agent. {first}", *[f"rule {n}" for n in range(2, 31)], second])
    return PromptContext(
        prompt,
        [
            tool(
                "read",
                f"Read a file.\nSecond line {second}",
                {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": f"the file {first}"},
                        "limit": {"type": "integer"},
                    },
                    "required": ["path"],
                },
            ),
            tool(f"odd{second}", f"No parameters {first}", {"type": "object", "properties": {}}),
        ],
    )


def state(driver: Any) -> dict[str, Any]:
    result: dict[str, Any] = driver.execute_script(
        """const prompt = document.getElementById('system-prompt');
        const tools = document.getElementById('tool-list');
        const visible = (node) => Boolean(node && node.checkVisibility());
        return {
          prompt: prompt ? prompt.querySelector('pre').textContent : null,
          promptSummary: prompt ? prompt.querySelector('summary').textContent : null,
          promptOpen: prompt ? prompt.open : null,
          promptVisible: visible(prompt && prompt.querySelector('pre')),
          toolsOpen: tools ? tools.open : null,
          tools: [...document.querySelectorAll('#tool-list [data-tool]')].map((row) => row.dataset.tool),
          paramsVisible: visible(document.querySelector('[data-tool="read"] [data-param="path"]')),
          params: [...document.querySelectorAll('[data-tool="read"] [data-param]')]
            .map((item) => item.innerText),
        };"""
    )
    return result


def test_prompt_and_tools_fold_open_and_stay_text(browser: Any, tmp_path: Path) -> None:
    source = hostile_session(tmp_path / "sessions", tmp_path)
    manager = SessionManager.open(source, read_only=True)
    context = hostile_context()
    page = export_html(manager, tmp_path / "page.html", context=context)
    html = page.read_text()
    for injection in INJECTIONS:
        assert injection not in html
    browser.get("about:blank")
    browser.get_log("performance")
    open_page(browser, page)
    before = state(browser)
    assert before["prompt"] == context.system_prompt  # every character, as text
    assert before["promptSummary"] == "System prompt \u00b7 31 lines"
    assert before["promptOpen"] is False and before["promptVisible"] is False
    assert before["toolsOpen"] is False
    assert before["tools"] == ["read", f"odd{INJECTIONS[1]}"]

    browser.find_element(By.CSS_SELECTOR, "#system-prompt > summary").click()
    browser.find_element(By.CSS_SELECTOR, "#tool-list > summary").click()
    opened = state(browser)
    assert opened["promptOpen"] is True and opened["promptVisible"] is True
    assert opened["toolsOpen"] is True and opened["paramsVisible"] is False
    browser.find_element(By.CSS_SELECTOR, '[data-tool="read"] > summary').click()
    shown = state(browser)
    assert shown["paramsVisible"] is True
    assert shown["params"] == [f"path string required\nthe file {INJECTIONS[0]}", "limit integer optional"]
    text = browser.find_element(By.ID, "tool-list").text
    assert f"Second line {INJECTIONS[1]}" in text and f"No parameters {INJECTIONS[0]}" in text
    browser.find_element(By.CSS_SELECTOR, "#system-prompt > summary").click()
    assert state(browser)["promptOpen"] is False

    assert no_alert(browser)
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.execute_script("return document.querySelectorAll('body script').length") == 7
    urls = [url for url in requested_urls(browser) if not url.startswith(("chrome:", "chrome-untrusted:"))]
    assert urls == [page.resolve().as_uri()]
    assert console_errors(browser) == []


def download(browser: Any, folder: Path) -> Path:
    """Click the page's JSONL button and wait for the file Chromium saves."""
    folder.mkdir()
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
    browser.find_element(By.ID, "download-jsonl").click()

    def finished() -> Path | None:
        # Chromium writes NAME.crdownload (and may show NAME empty) until the bytes are all in.
        files = list(folder.iterdir())
        if not files or any(path.name.endswith(".crdownload") for path in files):
            return None
        return next((path for path in files if path.stat().st_size > 0), None)

    saved = poll_until(finished, "the download", timeout=15)
    assert saved is not None
    return saved


def test_the_download_is_the_session_file_byte_for_byte(
    browser: Any, tmp_path: Path, agent_dir: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source = branchy_session(tmp_path / "sessions", project, turns=12)
    with source.open("ab") as stream:  # bytes no re-encoding keeps: spacing, escapes, key order
        stream.write(b'{"type":"custom","customType":"x","data":{"b":1,"a":"\\u00e9 </script>"},')
        stream.write(b' "id":"zz000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n')
    command = [SCRIPT, "--export", str(source), "page.html"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=project)
    assert done.returncode == 0, done.stderr
    page = project / "page.html"
    open_page(browser, page)
    # --export has no agent: no prompt or tools (as pi's --export), the download still there.
    assert browser.execute_script("return document.getElementById('system-prompt')") is None
    assert browser.execute_script("return document.getElementById('tool-list')") is None
    saved = download(browser, tmp_path / "downloads")
    assert saved.name == source.name
    assert saved.read_bytes() == source.read_bytes()
    assert console_errors(browser) == []


def test_a_session_with_pi1_system_messages_shows_its_own(browser: Any, tmp_path: Path) -> None:
    manager = SessionManager.open(PI1_SESSION, read_only=True)
    page = export_html(manager, tmp_path / "page.html", context=hostile_context())
    open_page(browser, page)
    assert browser.execute_script("return document.getElementById('system-prompt')") is None
    assert "System prompt" in browser.find_element(By.ID, "conversation").text


@requires("tmux", "pi-tui")
def test_export_in_the_tui_shows_the_agents_prompt_and_tools(
    browser: Any, tmp_path: Path, agent_dir: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(f"Project rule: always say PINEAPPLE. {INJECTIONS[0]}\n")
    env = {
        "PI_CODING_AGENT_DIR": os.environ["PI_CODING_AGENT_DIR"],
        "PI_TUI_CACHE_DIR": os.environ["PI_TUI_CACHE_DIR"],
        "PI_TUI_PI_AGENT_DIR": os.environ["PI_TUI_PI_AGENT_DIR"],
        "PI_TUI_OFFLINE_DELAY": "0",
    }
    pane = TmuxPane.start([SCRIPT, "--model", "offline/demo"], cwd=project, env=env, width=110, height=30)
    try:
        pane.wait_for(lambda s: "demo • " in s and s, "the footer", 20)
        pane.type("hello there")
        pane.press("Enter")
        pane.wait_for(lambda s: "write notes.txt: hello" in s and s, "the whole reply", 20)
        pane.type("/export page.html")
        pane.press("Enter")
        pane.wait_for(lambda s: "Session exported to" in s and s, "the export", 20)
    finally:
        pane.kill()
    open_page(browser, project / "page.html")
    prompt = browser.execute_script("return document.querySelector('#system-prompt pre').textContent")
    assert f"Project rule: always say PINEAPPLE. {INJECTIONS[0]}" in prompt
    tools = browser.execute_script(
        "return [...document.querySelectorAll('#tool-list [data-tool]')].map((row) => row.dataset.tool)"
    )
    assert {"read", "bash", "edit", "write"} <= set(tools)
    summary = browser.execute_script("return document.getElementById('pi-summary').textContent")
    session = json.loads(summary)
    folder = Path(os.environ["PI_CODING_AGENT_DIR"]) / "sessions"
    written = next(folder.rglob(str(session["file"])))
    saved = download(browser, tmp_path / "downloads")
    assert saved.read_bytes() == written.read_bytes()
    assert browser.execute_script("return window.__pwned === undefined")
