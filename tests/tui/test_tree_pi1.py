"""/tree on a pi 1.x session, through the real app: usage entries never show, context edits
only in the "all" filter (and "labeled-only" when labelled), system messages as ``[system]``,
pi's "No entries found" when a filter leaves nothing; the footer counts pi 1.x's spending.

The file is tests/data/pi1-totals/session.jsonl; its rows and figures are pi 1.5.2's own (see
tests/unit/test_pi1_tree_and_totals.py, which compares every filter with pi's TreeList output).
"""
# ruff: noqa: RUF001
# (pi's cursor glyph)

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.tui.screens.tree import TreeScreen
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text
from tests.tui.test_tree import open_tree, tree_lines

SIZE = (110, 44)
SESSION = Path(__file__).resolve().parents[1] / "data" / "pi1-totals" / "session.jsonl"


@pytest.fixture
def pi1_session(tmp_path: Path, agent_dir: Path) -> Path:
    """A copy of the pi 1.x file, its model known (so opening it records no model change)."""
    models = {
        "providers": {
            "anthropic": {
                "baseUrl": "http://127.0.0.1:9",
                "api": "anthropic-messages",
                "apiKey": "k",
                "models": [{"id": "claude-sonnet-4-5", "contextWindow": 200000}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    path = tmp_path / "pi1.jsonl"
    shutil.copy(SESSION, path)
    return path


def counter(app) -> str:
    return app.screen.query_one("#tree-counter").render().plain


async def test_usage_and_context_edits_follow_pis_filters(project: Path, pi1_session: Path) -> None:
    app = make_app(project, session=str(pi1_session))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tree(pilot, app)
        await pilot.pause()
        lines = tree_lines(app)
        # Default: no usage rows, no empty rows, no context edits; the selection sits on the
        # reply above the hidden leaf (a usage entry, under a hidden label).
        assert counter(app) == "(12/14)"
        assert all(line.strip() not in ("", "›", "•", "› •") for line in lines)
        assert not any("context" in line for line in lines)
        assert lines[0] == "  • [system]" and lines[6] == "  │     • [system]"
        assert lines[11] == "› │     • assistant: You're welcome."
        # Children of the hidden usage + context edit hang under the reply before them.
        assert lines[5].startswith("  ├⊟ • [branch summary]:")
        assert lines[12] == "  └⊟ user: Change the port to 9090"

        await pilot.press("ctrl+a")
        lines = tree_lines(app)
        assert counter(app) == "(14/18) [all]"  # the selection stays on the reply
        assert "  • [hid-output] [context omit: a0000005]" in lines
        assert "        [context replace: a0000009]" in lines
        assert not any("usage" in line or "cache_warm" in line for line in lines)

        await pilot.press("ctrl+l")
        assert counter(app) == "(1/1) [labeled]"
        assert tree_lines(app) == ["› • [hid-output] [context omit: a0000005]"]

        await pilot.press("ctrl+d", *"cache_warm")  # usage entries are not even found by search
        assert counter(app) == "(0/0)"
        assert "  No entries found" in screen_text(app).splitlines()
        assert isinstance(app.screen, TreeScreen) and screen is app.screen


async def test_footer_counts_usage_entries_and_summaries(project: Path, pi1_session: Path) -> None:
    """pi 1.5.2 reports 5,070 in, 350 out, 55,200 cache read, 1,500 cache write, $0.042645."""
    app = make_app(project, session=str(pi1_session))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: "$0.043" in screen_text(app), "the footer's cost", detail=lambda: screen_text(app)
        )
        assert "↑5.1k ↓350 R55k W1.5k $0.043" in screen_text(app)
