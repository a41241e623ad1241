import io

from rich.console import Console
from rich.markdown import Markdown

from pi_tui.tui.markdown_split import freeze_point, lead_in
from pi_tui.tui.widgets.chat_items import AfterLeadIn


def test_cuts_after_the_last_blank_line_between_blocks() -> None:
    text = "# Title\n\nFirst paragraph.\n\nSecond paragraph still stre"
    point = freeze_point(text)
    assert text[:point] == "# Title\n\nFirst paragraph.\n\n"


def test_never_inside_a_fenced_code_block() -> None:
    text = "Intro.\n\n```python\nx = 1\n\ny = 2\n"
    assert text[: freeze_point(text)] == "Intro.\n\n"
    closed = text + "```\n\nAfter.\n"
    assert closed[: freeze_point(closed)].endswith("```\n\n")


def test_not_before_an_indented_continuation_or_a_list_item() -> None:
    # After a blank line a list item may continue a loose list: cut there, one list would be
    # drawn as two (and Rich would put a blank line too many between them).
    text = "- item one\n\n  more of item one\n\n- item two\n\n1. first\n\n2. second\n"
    assert freeze_point(text) == 0
    assert freeze_point(text + "\nAfter the lists.\n") == len(text) + 1


def test_keep_leaves_a_tail_live() -> None:
    text = "a\n\nb\n\nc\n"
    assert freeze_point(text, keep=0) == text.index("c")
    assert freeze_point(text, keep=3) == text.index("b")
    assert freeze_point("no blank line yet") == 0


def test_tilde_fences_and_longer_closers() -> None:
    text = "~~~~\n```\n\ninside\n~~~~\n\nout\n"
    assert text[: freeze_point(text)] == "~~~~\n```\n\ninside\n~~~~\n\n"


SAMPLE = (
    "# Plan\n\nFirst paragraph of the plan.\n\n- one\n- two\n\nBetween the lists.\n\n"
    "- loose one\n\n- loose two\n\n---\n\nAfter a rule.\n\n***\n\n```python\nx = 1\n```\n\n"
    "```\nbare fence\n```\n\n> a quote\n> on two lines\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "Heading\n---\n\n1. first\n2. second\n\nThe end.\n"
)


def _lines(console: Console, renderable: object) -> list[str]:
    return ["".join(s.text for s in line).rstrip() for line in console.render_lines(renderable, pad=False)]


def test_chunks_cut_anywhere_read_as_the_whole_text() -> None:
    """A streamed reply is drawn as chunks cut at freeze points; each chunk drawn after its
    lead-in shows exactly the rows the whole reply shows (the blank lines between blocks included)."""
    console = Console(file=io.StringIO(), width=80, color_system=None)
    whole = _lines(console, Markdown(SAMPLE))
    cuts = sorted({freeze_point(SAMPLE[:end]) for end in range(len(SAMPLE) + 1)} - {0})
    assert len(cuts) >= 8
    for cut in cuts:
        head, tail = SAMPLE[:cut], SAMPLE[cut:]
        lead = lead_in(head)
        drawn = _lines(console, Markdown(head)) + _lines(
            console, AfterLeadIn(Markdown(lead), Markdown(f"{lead}\n\n{tail}"))
        )
        assert drawn == whole, f"cut before {tail[:20]!r}"
