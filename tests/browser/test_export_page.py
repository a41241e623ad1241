"""The exported HTML page in headless Chromium, checked through its DOM.

The page lays the tree out itself; every check compares it with pi-tui's own ``/tree`` model
(``TreeModel``) on the same file, so the page shows exactly the rows ``/tree`` shows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from pi_tui.html_export import export_html
from pi_tui.session import SessionManager
from pi_tui.view.tree_model import FILTER_MODES, TreeModel
from tests.support.browser import console_errors, open_page, requested_urls
from tests.support.export_shots import SHOTS, take_screenshots
from tests.support.sessions import INJECTIONS, branchy_session, hostile_session, long_session, rule_session

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "pi-sessions"
FIXTURE_FILES = sorted(FIXTURES.glob("*/session.jsonl"))


def export(source: Path, out: Path) -> tuple[Path, SessionManager]:
    manager = SessionManager.open(source, read_only=True)
    return export_html(manager, out), manager


def model_for(manager: SessionManager, mode: str = "default", search: str = "") -> TreeModel:
    model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode=mode)
    if search:
        model.set_search(search)
    return model


def expected_rows(model: TreeModel) -> list[str]:
    """Each row as the page writes it: /tree's line without the cursor column."""
    return [model.line(index, False)[2:] for index in range(len(model.rows))]


def dom_rows(driver: Any) -> list[dict[str, Any]]:
    return driver.execute_script(
        """return [...document.querySelectorAll('[role="tree"] [data-entry-id]')].map(row => ({
             id: row.dataset.entryId, parent: row.dataset.parentId || null,
             text: row.textContent, label: (row.querySelector('.row-label') || {}).textContent || null}));"""
    )


def next_frames(driver: Any) -> None:
    """Wait until the page has drawn two more frames (its virtual lists update on a frame)."""
    driver.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()))"
    )


def no_alert(driver: Any) -> bool:
    try:
        driver.switch_to.alert  # noqa: B018 - raises when no dialog is open
    except NoAlertPresentException:
        return True
    return False


@pytest.mark.parametrize("source", FIXTURE_FILES, ids=[path.parent.name for path in FIXTURE_FILES])
def test_every_filter_shows_the_rows_tree_shows(browser: Any, source: Path, tmp_path: Path) -> None:
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    assert console_errors(browser) == []
    for mode in FILTER_MODES:
        browser.find_element(By.CSS_SELECTOR, f'[data-filter="{mode}"]').click()
        model = model_for(manager, mode)
        rows = dom_rows(browser)
        assert [row["id"] for row in rows] == [row.entry_id for row in model.rows], mode
        assert [row["text"] for row in rows] == expected_rows(model), mode
        assert [row["label"] for row in rows] == [f"[{r.label}] " if r.label else None for r in model.rows]
        # nesting: each row names the row it hangs under, as /tree's layout has it
        parents = browser.execute_script("return piExport.parents()")
        view = model._view  # the model's own visible tree
        assert parents == [
            model.rows[view.vparent[row]].entry_id if view.vparent[row] >= 0 else None
            for row in range(len(model.rows))
        ]
        assert [row["parent"] for row in rows] == parents
    # "all" shows every entry but the silent ones (assistant turns without text), as /tree does
    every = {raw["id"] for raw in manager.iter_raw_entries()}
    shown = {row["id"] for row in dom_rows(browser)}
    assert shown <= every and len(every - shown) == sum(1 for i in model._kinds if i == 3)


def test_search_finds_what_tree_search_finds(browser: Any, tmp_path: Path) -> None:
    source = branchy_session(tmp_path / "sessions", tmp_path)
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    for query in ("part 12", "milestone", "read src", "QUESTION 3", "nothing-matches-this"):
        browser.execute_script("piExport.setSearch(arguments[0])", query)
        model = model_for(manager, "default", query)
        assert browser.execute_script("return piExport.rowLines()") == expected_rows(model), query
    counter = browser.find_element(By.ID, "tree-counter").text
    assert counter == "No entries found"
    search = browser.find_element(By.ID, "tree-search")
    search.clear()
    search.send_keys("milestone-13")
    browser.execute_async_script("setTimeout(arguments[0], 50)")
    wanted = [row.entry_id for row in model_for(manager, "default", "milestone-13").rows]
    assert browser.execute_script("return piExport.rows()") == wanted


def test_clicking_an_entry_shows_the_branch_through_it(browser: Any, tmp_path: Path) -> None:
    source = branchy_session(tmp_path / "sessions", tmp_path)
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    assert browser.execute_script("return piExport.branch()") == manager.get_branch_ids()
    # an entry off the current path: a user message on an abandoned branch
    path = set(manager.get_branch_ids())
    rows = model_for(manager).rows
    off_path = next(row for row in rows if row.entry_id not in path and row.text.startswith("user:"))
    row = browser.find_element(By.CSS_SELECTOR, f'[role="tree"] [data-entry-id="{off_path.entry_id}"]')
    row.click()
    branch = browser.execute_script("return piExport.branch()")
    ancestors = manager.get_branch_ids(off_path.entry_id)
    assert branch[: len(ancestors)] == ancestors  # root .. the entry, then on down its first children
    assert off_path.entry_id not in path and off_path.entry_id in branch
    assert row.get_attribute("aria-selected") == "true"
    shown = browser.find_element(By.CSS_SELECTOR, f'#conversation [data-entry-id="{off_path.entry_id}"]')
    assert "Question" in shown.text
    assert browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight;", shown
    )
    # keyboard: Up moves the selection, Enter opens the branch through it
    tree = browser.find_element(By.CSS_SELECTOR, '[role="tree"]')
    tree.send_keys(Keys.ARROW_UP)
    selected = browser.execute_script("return piExport.selected()")
    model = model_for(manager)
    index = model.index_of(off_path.entry_id)
    assert index is not None and selected == model.rows[index - 1].entry_id
    tree.send_keys(Keys.ENTER)
    assert selected in browser.execute_script("return piExport.branch()")


def test_a_deep_link_opens_the_branch_through_the_entry(browser: Any, tmp_path: Path) -> None:
    source = FIXTURES / "00-tree-label-summary" / "session.jsonl"
    page, manager = export(source, tmp_path / "page.html")
    path = set(manager.get_branch_ids())
    raws = manager.iter_raw_entries()
    target = next(raw for raw in raws if raw["id"] not in path and raw["type"] == "message")
    open_page(browser, page, target["id"])
    assert browser.execute_script("return piExport.selected()") == target["id"]
    assert target["id"] in browser.execute_script("return piExport.branch()")
    node = browser.find_element(By.ID, f"entry-{target['id']}")
    assert "target" in node.get_attribute("class")
    link = node.find_element(By.CSS_SELECTOR, "[data-copy-link]")
    assert link.get_attribute("href").endswith(f"#{target['id']}")


def test_session_content_is_text_never_markup(browser: Any, tmp_path: Path) -> None:
    source = hostile_session(tmp_path / "sessions", tmp_path)
    page, _ = export(source, tmp_path / "page.html")
    html = page.read_text()
    for injection in INJECTIONS:
        assert injection not in html  # never raw in the file either
    browser.get("about:blank")
    browser.get_log("performance")
    open_page(browser, page)
    assert no_alert(browser)
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.execute_script("return document.querySelectorAll('#conversation script').length") == 0
    body = browser.execute_script("return document.body.innerText")
    for injection in INJECTIONS:
        assert injection.replace("'", "'") in body or injection in body.replace("\u00a0", " ")
    links = browser.execute_script("return [...document.querySelectorAll('a')].map(a => a.href)")
    assert not [link for link in links if link.startswith("javascript:")]
    assert "javascript:alert(3)" in body  # the link is shown as text
    # no network request at all: only the page itself was loaded
    urls = [url for url in requested_urls(browser) if not url.startswith(("chrome:", "chrome-untrusted:"))]
    assert urls == [page.resolve().as_uri()]
    assert console_errors(browser) == []


def test_long_trees_draw_only_what_is_on_screen(browser: Any, tmp_path: Path) -> None:
    source = branchy_session(tmp_path / "sessions", tmp_path, turns=900)
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page, "")
    model = model_for(manager, "all")
    browser.execute_script("piExport.setFilter('all')")
    total = len(model.rows)
    drawn = len(dom_rows(browser))
    assert total > 2000 and 0 < drawn < 200
    assert browser.execute_script("return piExport.rowLines()") == expected_rows(model)
    # jumping to the end draws the last rows, in /tree's order
    tree = browser.find_element(By.CSS_SELECTOR, '[role="tree"]')
    tree.click()
    tree.send_keys(Keys.END)
    last = dom_rows(browser)[-1]
    assert last["id"] == model.rows[total - 1].entry_id


def test_long_conversations_draw_only_what_is_on_screen(browser: Any, tmp_path: Path) -> None:
    source = long_session(tmp_path / "sessions", tmp_path, turns=1100)
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    branch = browser.execute_script("return piExport.branch()")
    assert branch == manager.get_branch_ids()
    sections = browser.execute_script("return document.querySelectorAll('#conversation section').length")
    assert len(branch) > 2000 and 0 < sections < 200
    # scrolling keeps drawing the branch in order, down to its last entry
    to_end = "const c = document.getElementById('conversation'); c.scrollTop = c.scrollHeight;"
    browser.execute_script(to_end)
    for _ in range(3):
        next_frames(browser)
        browser.execute_script(to_end)
    ids = browser.execute_script(
        "return [...document.querySelectorAll('#conversation section')].map(s => s.dataset.entryId)"
    )
    assert ids == branch[branch.index(ids[0]) : branch.index(ids[0]) + len(ids)]
    assert ids[-1] == branch[-1]
    # and a deep link into the middle lands on that entry
    middle = branch[len(branch) // 2]
    browser.execute_script("location.hash = arguments[0]", middle)
    next_frames(browser)
    node = browser.find_element(By.ID, f"entry-{middle}")
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top", node)
    assert 0 <= top < 400


def test_theme_toggle_switches_between_dark_and_light(browser: Any, tmp_path: Path) -> None:
    source = FIXTURES / "02-tool-calls" / "session.jsonl"
    page, _ = export(source, tmp_path / "page.html")
    open_page(browser, page)
    browser.execute_script("localStorage.clear()")
    open_page(browser, page)
    background = "return getComputedStyle(document.body).backgroundColor"
    before = browser.execute_script(background)
    assert browser.execute_script("return document.documentElement.dataset.theme") == "dark"
    browser.find_element(By.ID, "theme-toggle").click()
    assert browser.execute_script("return document.documentElement.dataset.theme") == "light"
    assert browser.execute_script(background) != before
    # tool cards with their arguments and results, an edit's diff coloured
    assert browser.find_elements(By.CSS_SELECTOR, ".tool .diff-add")
    assert browser.find_elements(By.CSS_SELECTOR, ".tool .diff-del")
    titles = [node.text for node in browser.find_elements(By.CSS_SELECTOR, ".tool-title")]
    assert any(title.startswith("read ") for title in titles)
    assert any(title.startswith("edit ") for title in titles)
    browser.find_element(By.ID, "theme-toggle").click()


def test_summary_header_and_export_facts(browser: Any, tmp_path: Path) -> None:
    source = FIXTURES / "00-tree-label-summary" / "session.jsonl"
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    header = browser.find_element(By.ID, "summary").text
    assert manager.get_header().cwd in header
    assert "fake/fake-model" in header and "Tokens" in header and "Cost" in header
    data = json.loads(browser.execute_script("return document.getElementById('pi-summary').textContent"))
    assert data["entryCount"] == len(manager)


def test_the_command_line_writes_the_page(browser: Any, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source = branchy_session(tmp_path / "sessions", project, turns=20)
    done = subprocess.run([SCRIPT, "--export", str(source)], capture_output=True, text=True, cwd=project)
    assert done.returncode == 0, done.stderr
    page = project / f"pi-tui-session-{source.stem}.html"
    assert done.stdout.strip() == f"Session exported to: {page}"
    open_page(browser, page)
    assert browser.find_element(By.CSS_SELECTOR, ".session-name").text == "Branchy demo session"
    manager = SessionManager.open(source, read_only=True)
    wanted = [row.entry_id for row in model_for(manager).rows]
    assert browser.execute_script("return piExport.rows()") == wanted
    missing = subprocess.run(
        [SCRIPT, "--export", "no-such-session"], capture_output=True, text=True, cwd=project
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_screenshots_of_the_documented_pages(tmp_path: Path) -> None:
    shots = take_screenshots(tmp_path)
    assert [shot.name for shot in shots] == list(SHOTS)
    for shot in shots:
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (1280, 760) or width >= 1000
        assert len(data) > 40_000  # a drawn page, not a blank one
    documented = Path(__file__).resolve().parents[2] / "docs" / "images"
    assert all((documented / name).is_file() for name in SHOTS)


def test_every_kind_of_entry_is_drawn(browser: Any, tmp_path: Path) -> None:
    def open_fixture(name: str) -> None:
        page, _ = export(FIXTURES / name / "session.jsonl", tmp_path / f"{name}.html")
        open_page(browser, page)
        assert console_errors(browser) == []

    def css(selector: str) -> list[Any]:
        return browser.find_elements(By.CSS_SELECTOR, selector)

    open_fixture("04-thinking-anthropic")
    thinking = css("#conversation details.thinking")
    assert thinking and thinking[0].get_attribute("open") is None  # folded until asked
    thinking[0].find_element(By.TAG_NAME, "summary").click()
    assert css("#conversation details.thinking")[0].get_attribute("open") is not None
    open_fixture("16-user-bash")
    assert any(node.text.startswith("$ ") for node in css("#conversation .bash .bash-command"))
    open_fixture("21-images")
    sources = [node.get_attribute("src") for node in css("#conversation img.image")]
    assert len(sources) >= 2 and all(src.startswith("data:image/png;base64,") for src in sources)
    assert browser.execute_script("return [...document.images].every(i => i.complete && i.naturalWidth > 0)")
    open_fixture("08-manual-compact")
    panels = css("#conversation .summary-compaction")
    assert panels and panels[0].text.startswith("Compacted the conversation")
    open_fixture("02-tool-calls")
    titles = [node.text for node in css("#conversation .tool-title")]
    assert any(title.startswith("$ ") for title in titles)
    assert any(title.startswith("write ") for title in titles)
    failed = [node.text for node in css("#conversation .tool-error")]  # the fixture's three
    assert len(failed) == 3 and "ENOENT" in failed[0] and "exited with code 3" in failed[1]

    source = rule_session(tmp_path / "rules", tmp_path)
    page, _ = export(source, tmp_path / "rules.html")
    open_page(browser, page)
    notice = css("#conversation .rule")
    assert len(notice) == 1 and notice[0].find_element(By.CSS_SELECTOR, ".rule-title").text == (
        "\u26a0 Injecting rule: no-print"
    )
    assert "Use the logger, never print()." in notice[0].text
    text = browser.find_element(By.ID, "conversation").text
    assert "Sure, I will use print(" in text and "stopped by a rule" in text
    assert not css("#conversation .error-line")  # a rule's cut is not an error
    custom = css("#conversation .custom")
    assert (
        len(custom) == 1 and custom[0].find_element(By.CSS_SELECTOR, ".custom-type").text == "[deploy-note]"
    )
    assert custom[0].find_element(By.TAG_NAME, "strong").text == "build 7"
    assert "SHOULD NOT BE SHOWN" not in text


def test_copy_link_puts_the_entry_in_the_address(browser: Any, tmp_path: Path) -> None:
    source = FIXTURES / "00-tree-label-summary" / "session.jsonl"
    page, manager = export(source, tmp_path / "page.html")
    open_page(browser, page)
    entry = manager.get_branch_ids()[-1]
    section = browser.find_element(By.ID, f"entry-{entry}")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    ActionChains(browser).move_to_element(section).perform()
    section.find_element(By.CSS_SELECTOR, "[data-copy-link]").click()
    assert browser.execute_script("return location.hash") == f"#{entry}"
    assert browser.find_element(By.ID, "toast").get_attribute("textContent") == "Link copied"
