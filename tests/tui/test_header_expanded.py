"""The expanded header's key list (Ctrl+O) fits its share of the screen: columns, cut
descriptions, a "+N more" row, and a new fit when the terminal's height changes."""

from __future__ import annotations

from pathlib import Path

from pi_tui.tui.widgets.header import PiHeader, key_grid
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app

KEYS = [(f"Ctrl+{chr(65 + n)}", f"Does thing number {n} with a fairly long description") for n in range(17)]


def test_one_column_when_the_rows_allow_it() -> None:
    lines = key_grid(KEYS, 100, 17)
    assert len(lines) == 17 and all(line.plain.rstrip().endswith("description") for line in lines)


def test_columns_with_cut_descriptions_when_rows_are_few() -> None:
    lines = key_grid(KEYS, 78, 9)
    assert len(lines) == 9
    assert all(len(line.plain) <= 78 for line in lines)
    assert "Ctrl+A" in lines[0].plain and "Ctrl+J" in lines[0].plain  # filled top to bottom
    assert "…" in lines[0].plain


def test_a_more_row_when_even_columns_do_not_fit() -> None:
    lines = key_grid(KEYS, 78, 4)
    assert len(lines) == 4
    assert lines[-1].plain == "+11 more: /hotkeys lists every key"  # 2 columns x 3 rows shown


async def test_the_expanded_header_refits_when_the_terminal_height_changes(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project)
    async with app.run_test(size=(80, 50)) as pilot:
        header = app.query_one(PiHeader)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "Shift+Tab" in str(header.render()), "the expanded key list")
        tall = header.outer_size.height
        await pilot.resize_terminal(80, 24)
        await wait_until(
            pilot, lambda: len(str(header.render()).splitlines()) <= 12, "the key list refitted to 24 rows"
        )
        assert tall > 12 and "Loaded: AGENTS.md" in str(header.render())  # nothing cut off by the cap
        assert app.footer.region.bottom <= 24 and app.editor.region.bottom <= 22
        await pilot.resize_terminal(80, 50)  # taller again: one column, every description whole
        await wait_until(
            pilot, lambda: len(str(header.render()).splitlines()) == tall, "the key list refitted to 50 rows"
        )
