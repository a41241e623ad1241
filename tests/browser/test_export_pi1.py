"""pi 1.x entries on the exported page, in headless Chromium (tests/data/pi1-totals).

As pi 1.5.2's export page does: the first system message on a branch is the system prompt
with its tools, a later one an update naming what it changes (``[system prompt]`` /
``[system update: tools -write]`` in the tree); usage entries and context edits draw nothing in
the conversation; the header's totals count usage entries and summaries (pi's footer figures).
The tree hides usage entries and shows context edits only under "all", as ``/tree`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from pi_tui.html_export import export_html
from pi_tui.session import SessionManager
from pi_tui.view.tree_model import FILTER_MODES, TreeModel
from tests.support.browser import console_errors, open_page

SESSION = Path(__file__).resolve().parents[1] / "data" / "pi1-totals" / "session.jsonl"
SYSTEM_ROWS = {"a0000001": "[system prompt]", "a000000d": "[system update: tools -write]"}


def page_rows(driver: Any) -> list[dict[str, Any]]:
    return driver.execute_script(
        """return [...document.querySelectorAll('[role="tree"] [data-entry-id]')].map(row => ({
             id: row.dataset.entryId, text: row.textContent}));"""
    )


def test_tree_rows_are_trees_with_pis_export_names_for_system_messages(browser: Any, tmp_path: Path) -> None:
    manager = SessionManager.open(SESSION, read_only=True)
    page = export_html(manager, tmp_path / "page.html")
    open_page(browser, page)
    assert console_errors(browser) == []
    for mode in FILTER_MODES:
        browser.find_element(By.CSS_SELECTOR, f'[data-filter="{mode}"]').click()
        model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode=mode)
        expected = []
        for index, row in enumerate(model.rows):
            line = model.line(index, False)[2:]
            if row.entry_id in SYSTEM_ROWS:
                line = line.replace("[system]", SYSTEM_ROWS[row.entry_id])
            expected.append(line)
        rows = page_rows(browser)
        assert [r["id"] for r in rows] == [row.entry_id for row in model.rows], mode
        assert [r["text"] for r in rows] == expected, mode
        assert not {"a0000007", "a0000014"} & {r["id"] for r in rows}, f"{mode}: a usage entry shows"
    # the system rows are found by what they hold, as on pi's page
    browser.execute_script("piExport.setFilter('default'); piExport.setSearch(arguments[0])", "write")
    assert "a000000d" in browser.execute_script("return piExport.rows()")
    browser.execute_script("piExport.setSearch(arguments[0])", "careful coding")
    assert browser.execute_script("return piExport.rows()") == ["a0000001"]


def test_conversation_draws_system_prompt_and_update_and_nothing_for_usage_or_edits(
    browser: Any, tmp_path: Path
) -> None:
    manager = SessionManager.open(SESSION, read_only=True)
    page = export_html(manager, tmp_path / "page.html")
    open_page(browser, page)
    assert browser.execute_script("return piExport.branch()") == manager.get_branch_ids()

    def entry(entry_id: str) -> Any:
        return browser.find_element(By.CSS_SELECTOR, f'#conversation [data-entry-id="{entry_id}"]')

    first = entry("a0000001")
    assert "System prompt" in first.text and "You are a careful coding assistant." in first.text
    assert "Available tools" in first.text and "read — Read a file" in first.text and "write" in first.text
    browser.execute_script("arguments[0].scrollIntoView()", entry("a000000d"))
    update = entry("a000000d")
    assert "System prompt update: tools -write" in update.text
    assert "Tools removed" in update.text and "Available tools" not in update.text
    for hidden in ("a0000007", "a0000008"):  # a usage entry and a context edit
        node = entry(hidden)
        assert node.text == "" and "empty" in node.get_attribute("class")
    header = browser.execute_script("return document.body.innerText")
    assert "↑5.1k" in header and "R55k" in header and "W1.5k" in header and "$0.043" in header
    assert console_errors(browser) == []
