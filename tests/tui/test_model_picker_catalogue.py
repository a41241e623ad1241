"""The model picker over pi's whole catalogue (1,643 models): it lays out at most
``MAX_SHOWN`` rows, keeps the current model reachable, and typing narrows to every match.

Laying out all 1,643 rows took about a second per keystroke (OptionList measures each row); the
picker must stay responsive whatever the catalogue's size.
"""

from __future__ import annotations

from textual.app import App
from textual.widgets import Input, OptionList

from pi_tui.ai.catalogue import builtin_models
from pi_tui.ai.types import Model
from pi_tui.tui.screens.model_picker import MAX_SHOWN, ModelPicker, matching_models
from tests.support.waiting import wait_until

SIZE = (100, 30)


async def test_picker_over_the_whole_catalogue() -> None:
    models = [m for m in builtin_models() if m.provider != "offline"]
    assert len(models) > 2 * MAX_SHOWN
    current = models[-1]  # far beyond the first rows
    chosen: list[tuple[Model, bool] | None] = []
    app: App[None] = App()
    async with app.run_test(size=SIZE) as pilot:
        picker = ModelPicker(models, current)
        app.push_screen(picker, chosen.append)
        await wait_until(pilot, lambda: picker.is_attached and picker._shown, "the picker to fill")
        options = picker.query_one(OptionList)
        # The current model first, then the first MAX_SHOWN matches, then one "more" line.
        assert picker._shown[0] is current and options.highlighted == 0
        assert len(picker._shown) == MAX_SHOWN + 1
        assert options.option_count == MAX_SHOWN + 2
        more = str(options.get_option_at_index(MAX_SHOWN + 1).prompt)
        assert f"{len(models) - MAX_SHOWN - 1:,} more" in more

        query = "claude-opus-4-7"
        picker.query_one(Input).value = query
        expected = matching_models(models, query)
        await wait_until(pilot, lambda: picker._shown == expected, "the picker to narrow")
        assert 1 < len(expected) < MAX_SHOWN and options.option_count == len(expected)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: bool(chosen), "the picker to close")
    assert chosen == [(expected[1], False)]


async def test_the_filter_is_pis_fuzzy_search() -> None:
    """``opus46`` lists the Claude Opus 4.6 models (the words' letters in order, as pi matches);
    a substring search found nothing for it."""
    models = [m for m in builtin_models() if m.provider != "offline"]
    app: App[None] = App()
    async with app.run_test(size=SIZE) as pilot:
        picker = ModelPicker(models, models[0])
        app.push_screen(picker)
        await wait_until(pilot, lambda: picker.is_attached and picker._shown, "the picker to fill")
        await pilot.press(*"opus46")
        await wait_until(pilot, lambda: len(picker._shown) < 100, "the picker to narrow")
        shown = {(m.provider, m.id) for m in picker._shown}
        assert {("anthropic", "claude-opus-4-6"), ("opencode", "claude-opus-4-6")} <= shown
