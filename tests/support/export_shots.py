"""Screenshots of exported pages, taken by the tests' headless Chromium.

The export tests take them into a temporary folder (so a page that stops drawing fails a test);
``python -m tests.support.export_shots docs/images`` refreshes the ones in the documentation.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pi_tui.html_export import export_html
from pi_tui.session import SessionManager
from tests.support.browser import chromium, open_page
from tests.support.sessions import branchy_session

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "pi-sessions"
SHOTS = ("export-tree-label-summary.png", "export-branchy.png")


def take_screenshots(folder: Path) -> list[Path]:
    """One of fixture 00-tree-label-summary, one of a generated branchy session (a branch off the
    current path opened, to show the tree's gutters and the branch it shows)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pi-tui-shots-") as work:
        scratch = Path(work)
        fixture = SessionManager.open(FIXTURE / "00-tree-label-summary" / "session.jsonl", read_only=True)
        first = export_html(fixture, scratch / "fixture.html")
        source = branchy_session(scratch / "sessions", Path("/home/user/project"), turns=40)
        branchy = SessionManager.open(source, read_only=True)
        second = export_html(branchy, scratch / "branchy.html")
        path = set(branchy.get_branch_ids())
        off_path = next(
            raw["id"]
            for raw in branchy.iter_raw_entries()
            if raw["id"] not in path and raw.get("type") == "message" and raw["message"].get("role") == "user"
        )
        written = []
        with chromium(1280, 760) as driver:
            open_page(driver, first)
            written.append(folder / SHOTS[0])
            driver.save_screenshot(str(written[-1]))
            open_page(driver, second, off_path)
            written.append(folder / SHOTS[1])
            driver.save_screenshot(str(written[-1]))
    return written


if __name__ == "__main__":
    for shot in take_screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")):
        print(shot)
