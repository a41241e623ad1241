"""Footer figures: usage totals, token and cost formatting, path, context and model parts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.messages import Cost, Usage
from pi_tui.session import SessionManager
from pi_tui.view.stats import (
    UsageTotals,
    context_level,
    footer_model_text,
    footer_path_line,
    footer_usage_line,
    format_tokens,
    usage_totals,
)
from tests.support.builders import assistant, user


def priced(text: str, *, input: int, output: int, read: int = 0, write: int = 0, cost: float = 0.0):
    message = assistant(text)
    message.usage = Usage(
        input=input,
        output=output,
        cache_read=read,
        cache_write=write,
        total_tokens=input + output + read + write,
        cost=Cost(total=cost),
    )
    return message


def test_usage_totals_add_up_assistant_messages_only() -> None:
    messages = [
        user("hi"),
        priced("a", input=100, output=20, read=1000, write=50, cost=0.01),
        assistant("no usage reported"),
        priced("b", input=5, output=7, read=3, write=0, cost=0.002),
    ]
    totals = usage_totals(messages)
    assert (totals.input, totals.output, totals.cache_read, totals.cache_write) == (105, 27, 1003, 50)
    assert totals.cost == pytest.approx(0.012)
    assert usage_totals([]) == UsageTotals(0, 0, 0, 0, 0.0)


def test_usage_totals_cover_every_branch_of_the_session() -> None:
    manager = SessionManager.in_memory("/tmp")
    first = manager.append_message(user("question"))
    manager.append_message(priced("answer 1", input=1000, output=100, cost=0.5))
    manager.branch(first)  # retry: a second answer on a sibling branch
    manager.append_message(priced("answer 2", input=2000, output=200, cost=0.25))
    totals = usage_totals(manager.get_entries())
    assert (totals.input, totals.output) == (3000, 300)
    assert totals.cost == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (1234, "1.2k"),
        (1250, "1.3k"),  # JavaScript rounds the half up; Python's round() would give 1.2k
        (9999, "10.0k"),
        (10_000, "10k"),
        (12_500, "13k"),
        (340_499, "340k"),
        (999_999, "1000k"),
        (1_000_000, "1.0M"),
        (1_250_000, "1.3M"),
        (9_960_000, "10.0M"),
        (10_000_000, "10M"),
        (123_456_789, "123M"),
    ],
)
def test_format_tokens_matches_pi(count: int, text: str) -> None:
    assert format_tokens(count) == text


def test_footer_path_line(tmp_path: Path) -> None:
    home = tmp_path / "home" / "ann"
    project = home / "proj"
    assert footer_path_line(project, "main", "my session", home=home) == "~/proj (main) • my session"
    assert footer_path_line(project, None, None, home=home) == "~/proj"
    assert footer_path_line(home, None, "notes", home=home) == "~ • notes"
    assert footer_path_line(Path("/srv/app"), "dev", None, home=home) == "/srv/app (dev)"
    # Only whole path components count as being inside home.
    assert footer_path_line(tmp_path / "home" / "annex", None, None, home=home) == str(
        tmp_path / "home" / "annex"
    )


def test_footer_usage_line_full() -> None:
    totals = UsageTotals(input=1234, output=340, cache_read=12_000, cache_write=1100, cost=0.0123)
    line = footer_usage_line(totals, context_tokens=8200, context_window=200_000, auto_compact=True)
    assert line == "↑1.2k ↓340 R12k W1.1k $0.012 4.1%/200k (auto)"


def test_footer_usage_line_leaves_out_zeros() -> None:
    assert footer_usage_line(UsageTotals(), 0, 200_000, auto_compact=False) == "0.0%/200k"
    totals = UsageTotals(input=500, output=0, cache_read=0, cache_write=0, cost=0.0)
    assert footer_usage_line(totals, 500, 128_000, auto_compact=True) == "↑500 0.4%/128k (auto)"


def test_footer_usage_line_unknown_context_and_no_window() -> None:
    totals = UsageTotals(input=2000, output=100, cost=1.5)
    assert footer_usage_line(totals, None, 200_000, auto_compact=True) == "↑2.0k ↓100 $1.500 ?/200k (auto)"
    assert footer_usage_line(totals, 5000, 0, auto_compact=False) == "↑2.0k ↓100 $1.500 0.0%/0"


def test_cost_rounds_like_javascript() -> None:
    assert footer_usage_line(UsageTotals(cost=0.0005), 0, 1000, False).startswith("$0.001 ")
    assert footer_usage_line(UsageTotals(cost=0.0004), 0, 1000, False).startswith("$0.000 ")
    assert footer_usage_line(UsageTotals(cost=12.3456), 0, 1000, False).startswith("$12.346 ")


def test_context_level_thresholds() -> None:
    assert context_level(70_000, 100_000) == "normal"
    assert context_level(70_001, 100_000) == "warning"
    assert context_level(90_001, 100_000) == "error"
    assert context_level(None, 100_000) == "normal"


def test_footer_model_text() -> None:
    assert footer_model_text("claude-sonnet-4-5", "high", reasoning=True) == "claude-sonnet-4-5 • high"
    assert footer_model_text("claude-sonnet-4-5", "off", reasoning=True) == "claude-sonnet-4-5 • thinking off"
    assert footer_model_text("gpt-4o", "high", reasoning=False) == "gpt-4o"
    assert footer_model_text("", "off", reasoning=False) == "no-model"
