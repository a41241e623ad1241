"""The web page of ``pi-tui serve`` in headless Chromium, against the real server: a prompt and
its streamed answer, the tree panel and its filters, a label, a move with a branch summary, a
long tool output folding, and a turn's changed files listed under it (as in the export)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import ServeProcess, configure_agent
from tests.support.waiting import poll_until

pytestmark = requires("pi-tui")

DOC_SHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "serve-page.png"


@pytest.fixture
def served(tmp_path: Path, agent_dir: Path, model_server: ModelServer) -> Iterator[ServeProcess]:  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    configure_agent(agent_dir, model_server)
    with ServeProcess(project) as server:
        yield server


def wait(driver: Any, script: str, timeout: float = 20.0) -> Any:
    return poll_until(
        lambda: driver.execute_script(script), f"the page to answer {script}", timeout, interval=0.05
    )


def chat_text(driver: Any) -> str:
    return driver.execute_script("return document.getElementById('conversation').innerText")


def row_texts(driver: Any) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#tree .row')].map((r) => r.innerText)"
    )


def open_page(browser: Any, served: ServeProcess) -> None:
    """The printed address, until the page has a session (the newest, or a new one)."""
    browser.get(f"{served.url}/?token={served.token}")
    wait(browser, "return window.piServe && window.piServe.state.current")


def send(driver: Any, text: str) -> None:
    box = driver.find_element("id", "prompt")
    box.send_keys(text)
    box.send_keys("\n")


def test_prompt_stream_tree_label_and_move_with_summary(
    browser: Any,
    served: ServeProcess,
    model_server: ModelServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    open_page(browser, served)
    assert "token" not in browser.current_url  # it left the address bar
    send(browser, "first question")
    wait(browser, "return document.getElementById('conversation').innerText.includes('echo: first question')")

    words = " ".join(f"piece{i}" for i in range(120))
    model_server.queue(Scripted(text=words, event_delay=0.03))
    send(browser, "a long answer please")
    streamed = wait(
        browser,
        "const d = document.querySelector('#conversation .draft');"
        "return d && d.innerText.includes('piece3') && !d.innerText.includes('piece119') && d.innerText",
    )
    assert "streaming" in streamed.lower()
    assert wait(browser, "return document.getElementById('send').textContent === 'Steer'")
    wait(browser, "return document.getElementById('status').dataset.runtime === 'idle'")
    wait(browser, "return document.getElementById('conversation').innerText.includes('piece119')")
    assert not browser.find_elements("css selector", "#conversation .draft")

    rows = row_texts(browser)
    assert any(text.endswith("user: first question") for text in rows)
    assert any(text.endswith("assistant: echo: first question") for text in rows)
    browser.find_element("css selector", "[data-filter='user-only']").click()
    user_rows = row_texts(browser)
    assert len(user_rows) == 2 and all("user: " in text for text in user_rows)
    browser.find_element("css selector", "[data-filter='default']").click()

    def click_row(ending: str) -> None:
        for row in browser.find_elements("css selector", "#tree .row"):
            if row.text.endswith(ending):
                row.click()
                return
        raise AssertionError(f"no row ends with {ending!r}: {row_texts(browser)}")

    click_row("assistant: echo: first question")
    wait(browser, "return document.getElementById('entry-dialog').open")
    label = browser.find_element("id", "label-input")
    label.clear()
    label.send_keys("milestone")
    browser.find_element("id", "label-save").click()
    wait(
        browser,
        "return [...document.querySelectorAll('#tree .row-label')]"
        ".some((n) => n.textContent === '[milestone] ')",
    )
    browser.find_element("css selector", "[data-filter='labeled-only']").click()
    assert [text.split("[milestone] ")[-1] for text in row_texts(browser)] == [
        "assistant: echo: first question"
    ]
    browser.find_element("css selector", "[data-filter='default']").click()

    model_server.queue(Scripted(text="The branch asked for a long answer of pieces."))
    click_row("assistant: echo: first question")
    wait(browser, "return document.getElementById('entry-dialog').open")
    browser.find_element("css selector", "[data-move='default']").click()
    wait(
        browser,
        "return [...document.querySelectorAll('#tree .row')]"
        ".some((r) => r.innerText.includes('[branch summary]'))",
    )
    wait(browser, "return document.querySelector('#conversation .summary-branch') !== null")
    assert "a long answer please" not in chat_text(browser)  # the chat shows the new branch
    folded = browser.execute_script(
        "return document.querySelector('#conversation .summary-branch').textContent"
    )
    assert "The branch asked for a long answer of pieces." in folded  # the summary panel, folded

    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    shot = tmp_path / "serve-page.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 20_000
    if os.environ.get("PI_TUI_DOC_SHOTS"):  # refresh the documentation's picture
        DOC_SHOT.write_bytes(shot.read_bytes())


def test_enter_steers_a_running_turn_and_escape_aborts_it(
    browser: Any,
    served: ServeProcess,
    model_server: ModelServer,  # noqa: F811
) -> None:
    open_page(browser, served)
    words = " ".join(f"part{i}" for i in range(150))
    model_server.queue(Scripted(text=words, event_delay=0.03))
    send(browser, "go slowly")
    wait(browser, "return document.getElementById('send').textContent === 'Steer'")
    send(browser, "mind the tests")  # Enter while it runs: a steer, delivered with the next turn
    wait(browser, "return document.getElementById('prompt').value === ''")
    wait(browser, "return document.getElementById('conversation').innerText.includes('mind the tests')", 30)
    sent = [message["content"] for message in model_server.requests[-1].body["messages"]]
    assert any("mind the tests" in str(content) for content in sent)

    model_server.queue(Scripted(text=words, event_delay=0.05))
    send(browser, "another slow one")
    wait(
        browser,
        "const d = document.querySelector('#conversation .draft'); return d && d.innerText.includes('part2')",
    )
    browser.find_element("id", "prompt").send_keys("\ue00c")  # Escape
    wait(browser, "return document.getElementById('status').dataset.runtime === 'idle'")
    last_entry = (
        "const entries = document.querySelectorAll('#conversation .entry');"
        "return entries.length ? entries[entries.length - 1].innerText : ''"
    )
    cut = poll_until(
        lambda: (text := browser.execute_script(last_entry)) and "aborted" in text and text,
        "the last entry to say it was aborted",
        20,
        interval=0.05,
    )
    assert "part2" in cut and "Request was aborted" in cut and "part149" not in cut


def test_the_address_names_the_session_shown_and_a_reload_keeps_it(
    browser: Any, served: ServeProcess
) -> None:
    from tests.support.serve import one_turn

    with served.client() as client:
        older, _ = one_turn(client, "alpha question")
        newer, _ = one_turn(client, "beta question")
    browser.get(f"{served.url}/?token={served.token}#session={older}")
    wait(browser, "return document.getElementById('conversation').innerText.includes('echo: alpha question')")
    assert browser.current_url.endswith(f"/#session={older}")  # the token gone, the session kept
    rows = browser.find_elements("css selector", f"[data-session-id='{newer}']")
    rows[0].click()
    wait(browser, "return document.getElementById('conversation').innerText.includes('echo: beta question')")
    assert browser.current_url.endswith(f"#session={newer}")
    browser.refresh()
    wait(browser, "return window.piServe && window.piServe.state.drawn")  # the new document, drawn
    wait(browser, "return document.getElementById('conversation').innerText.includes('echo: beta question')")
    assert "alpha" not in browser.execute_script("return document.getElementById('conversation').innerText")
    # The reload opened through the tab's own sessionStorage (kept per origin, port included),
    # not a cookie, which the browser would send to every port of the host.
    assert browser.get_cookies() == []
    assert browser.execute_script("return sessionStorage.getItem('pi-serve-token')") == served.token


def test_long_tool_output_folds_and_unfolds(
    browser: Any,
    served: ServeProcess,
    model_server: ModelServer,  # noqa: F811
) -> None:
    from tests.support.model_server import ToolCallSpec

    open_page(browser, served)
    model_server.queue(
        # tee: the turn also creates a file, which the page lists under the turn's tool calls
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "seq 1 40 | tee count.txt"})]),
        Scripted(text="Counted to forty."),
    )
    send(browser, "count")
    wait(browser, "return document.getElementById('conversation').innerText.includes('Counted to forty.')")
    first_line = "document.querySelector('#conversation .tool pre.output').textContent.split('\\n')[0]"
    # the tool card is drawn in its own frame, which may come after the reply's text (seen in CI)
    wait(browser, "return document.querySelector('#conversation .tool pre.output') !== null")
    assert browser.execute_script(f"return {first_line}") == "21"  # a shell's output: its last 20 lines
    # the turn's checkpoint, drawn from the tree's files as the export draws them
    shown = wait(
        browser,
        "const lines = [...document.querySelectorAll('#conversation .files-changed')]"
        ".map((node) => node.textContent); return lines.length && lines",
    )
    assert shown == ["Files changed: A count.txt"]
    # clicked in the page's own script: the chat may be redrawn (agent_end's reload) between a
    # find_element and its click, leaving a stale node
    toggle = "document.querySelector('#conversation .tool [data-toggle]')"
    browser.execute_script(f"{toggle}.click()")
    wait(browser, f"return {first_line} === '1'")  # unfolded: all forty
    assert wait(browser, f"return {toggle}.textContent") == "Show less"
