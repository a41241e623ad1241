"""Comparing /tree rows with pi's: pi cuts a long row with ``...``, pi-tui (issue 14) with a
one-column ``…`` that keeps two more columns of text. A cut row matches when pi's text before
its ``...`` starts ours and ours still fits the width; every other row must be equal."""

from __future__ import annotations

from rich.cells import cell_len


def row_matches(ours: str, pis: str, width: int | None = None) -> bool:
    if ours == pis:
        return True
    if not (pis.endswith("...") and ours.endswith("…")):
        return False
    return ours[:-1].startswith(pis[:-3]) and (width is None or cell_len(ours) <= width)


def assert_rows_match(ours: list[str], pis: list[str], width: int | None = None) -> None:
    assert len(ours) == len(pis), (ours, pis)
    for mine, theirs in zip(ours, pis, strict=True):
        assert row_matches(mine, theirs, width), f"\nours: {mine!r}\npi's: {theirs!r}"
