"""Keys typed before the app took the terminal: told apart from the terminal's answers, then
split into messages and the editor's unfinished text."""

from __future__ import annotations

from pi_tui.tui.typed_ahead import split_typed
from pi_tui.view.terminal_colours import without_answers


def test_the_terminal_answers_are_taken_out_and_typing_kept() -> None:
    read = b"he\x1b]10;rgb:ffff/ffff/ffff\x1b\\llo\x1b]11;rgb:0000/0000/0000\x07\x1b[?997;1n w\x1b[?62;22c\r"
    assert without_answers(read) == b"hello w\r"


def test_lines_end_at_enter_and_the_rest_goes_to_the_editor() -> None:
    assert split_typed(b"first\rsecond one\nhalf") == (["first", "second one"], "half")
    assert split_typed(b"tpyo\x7f\x7f\x7fypo\r") == (["typo"], "")
    assert split_typed(b"\x1b[Aup\x1bOB \x1b[1;5Cword\x1b") == ([], "up word")
    assert split_typed("caf\u00e9 \u2192 ok\r".encode()) == (["caf\u00e9 \u2192 ok"], "")
    assert split_typed(b"\r\r") == ([], "")
