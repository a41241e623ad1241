"""The one rule for text that reaches the terminal (:func:`pi_tui.text_safety.for_terminal`) and
the render helpers that apply it: no control character from outside survives into what is drawn.
"""

from __future__ import annotations

import io
import re

import pytest
from textual.content import Content

from pi_tui.text_safety import for_terminal
from pi_tui.tui import render
from pi_tui.tui.screens.prompts import plain
from pi_tui.tui.transcript import (
    BashItem,
    CustomItem,
    InfoItem,
    RuleNote,
    RuleNoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from pi_tui.view import renderers

TITLE = "\x1b]0;PWN\x07"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;UFdORUQ=\x07"
DCS = "\x1bP1$r0m\x1b\\"
APC = "\x1b_Gf=100;AAAA\x1b\\"
EVIL = TITLE + CLEAR + CLIPBOARD + DCS + APC + "\x9b2J\x9d0;C1\x9c\x07\x08\x7f"
CONTROL = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")


def test_each_kind_of_sequence_is_shown_not_sent() -> None:
    assert for_terminal(TITLE) == "␛]0;PWN␇"
    assert for_terminal(CLEAR) == "␛[2J"
    assert for_terminal(CLIPBOARD) == "␛]52;c;UFdORUQ=␇"
    assert for_terminal(DCS) == "␛P1$r0m␛\\"
    assert for_terminal(APC) == "␛_Gf=100;AAAA␛\\"
    assert for_terminal("\x9b2J \x9d0;x\x9c \x90 \x9f") == "\\u009b2J \\u009d0;x\\u009c \\u0090 \\u009f"
    assert for_terminal("a\x00b\x08c\x7fd\x1b") == "a␀b␈c␡d␛"  # a lone ESC too


def test_tab_newline_and_crlf_stay_a_lone_carriage_return_goes() -> None:
    assert for_terminal("a\tb\nc") == "a\tb\nc"
    assert for_terminal("line\r\nnext\r\n") == "line\r\nnext\r\n"
    assert for_terminal("10%\r20%\r") == "10%20%"  # a CR would let later text overwrite the line


def test_lone_surrogates_are_shown_not_written() -> None:
    assert for_terminal("a\udcffb\ud800c") == "a\\xffb\ufffdc"


def test_ordinary_text_is_returned_as_it_is() -> None:
    text = "Plain text, ünïcödé, emoji 😀, box ╭─╮, pictures ␛ stay.\n\tindented"
    assert for_terminal(text) is text


def test_the_rule_is_idempotent_and_works_chunk_by_chunk() -> None:
    """Applying it twice changes nothing (no double escaping), and a streamed reply made safe
    delta by delta reads like the whole reply made safe at once."""
    text = "intro " + EVIL + " `code " + CLEAR + "`\r\n```\n" + TITLE + "\n```\n"
    once = for_terminal(text)
    assert for_terminal(once) == once
    assert not CONTROL.search(once.replace("\r\n", "\n"))
    for size in (1, 2, 3, 7):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        joined = "".join(for_terminal(piece) for piece in pieces)
        assert joined.replace("\r", "") == once.replace("\r", "")


def test_clean_text_is_not_copied() -> None:
    """The streaming path calls the rule on every chunk: a clean text (the usual case) is one
    regex scan and comes back as the same object, not a rebuilt copy."""
    text = "word " * 200_000
    assert for_terminal(text) is text
    crlf = "line\r\n" * 1000
    assert for_terminal(crlf) == crlf


def _rich_plain(renderable: object) -> Content:
    """What Rich writes for ``renderable``, as plain text (no colours): the characters sent."""
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return Content(console.export_text())


def _no_controls(content: Content) -> str:
    shown = content.plain
    assert "\x1b" not in shown
    assert not CONTROL.search(shown), repr(shown)
    return shown


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: render.user_content(UserItem(EVIL, label=EVIL)), id="user text and label"),
        pytest.param(
            lambda: render.tool_content(
                ToolItem(
                    "c1", "bash", {"command": "echo " + EVIL}, status="success", output=EVIL, label=EVIL
                ),
                expanded=True,
            ),
            id="tool argument, output and label",
        ),
        pytest.param(
            lambda: render.tool_content(ToolItem("c2", "mcp_" + EVIL, {EVIL: EVIL}), expanded=False),
            id="unknown tool name and arguments",
        ),
        pytest.param(
            lambda: render.bash_content(BashItem("printf " + EVIL, output=EVIL, label=EVIL), expanded=True),
            id="!command and its output",
        ),
        pytest.param(
            lambda: render.summary_content(SummaryItem("compaction", EVIL, 10, label=EVIL), expanded=True),
            id="summary heading",
        ),
        pytest.param(
            lambda: _rich_plain(
                render.summary_markdown(SummaryItem("compaction", EVIL, 10), True, "monokai")
            ),
            id="summary body (markdown)",
        ),
        pytest.param(
            lambda: render.custom_content(CustomItem(EVIL, EVIL, label=EVIL), expanded=True),
            id="custom message",
        ),
        pytest.param(
            lambda: render.notice_content(RuleNoticeItem([RuleNote(EVIL, EVIL)]), expanded=True),
            id="rule notice",
        ),
        pytest.param(
            lambda: render.notice_content(RuleNoticeItem([RuleNote(EVIL, EVIL), RuleNote("b", EVIL)]), False),
            id="rule notice, several",
        ),
        pytest.param(lambda: render.info_content(InfoItem(EVIL, "error", title=EVIL)), id="error message"),
        pytest.param(lambda: plain(EVIL), id="prompt titles and choices"),
    ],
)
def test_render_helpers_draw_outside_text_with_visible_symbols(make: object) -> None:
    shown = _no_controls(make())  # type: ignore[operator]
    assert "␛]0;PWN␇" in shown


def test_an_extensions_renderer_cannot_write_escapes() -> None:
    renderers.register_custom_renderer("evil-ext", lambda item, expanded: Content("drawn " + CLEAR))
    try:
        shown = _no_controls(render.custom_content(CustomItem("evil-ext", "text"), expanded=False))
    finally:
        renderers.unregister_custom_renderer("evil-ext")
    assert "drawn ␛[2J" in shown


def test_a_well_behaved_renderer_keeps_its_styles() -> None:
    drawn = Content.styled("kept", "bold")
    assert render.safe_content(drawn) is drawn


def test_summaries_render_their_markdown() -> None:
    """Branch and compaction summaries are markdown (pi's summary prompts ask for it): headings
    and lists are drawn, not shown as ``##`` and ``-``."""
    item = SummaryItem(
        "branch_summary", "## Goal\nFix the greeting\n\n## Done\n- renamed `greet`\n- added a test"
    )
    shown = _rich_plain(render.summary_markdown(item, True, "monokai")).plain
    assert "Summary of the branch left behind" in shown
    assert "Goal" in shown and "##" not in shown
    assert "• renamed greet" in shown and "- added" not in shown
