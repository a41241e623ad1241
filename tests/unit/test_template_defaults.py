"""Prompt templates fill their placeholders as pi 1.5.2 does (docs/prompt-templates.md there).

pi 1.x added ``${1:-default}`` and ``${@:-default}`` and its own argument splitting (a quote
groups only at the start of an argument); pi-tui sent the defaults verbatim and split like a
POSIX shell, so ``/review doesn't`` lost its words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.resources.expander import PromptExpander
from pi_tui.resources.templates import discover_templates, split_arguments, substitute


@pytest.mark.parametrize(
    ("body", "words", "expected"),
    [
        ("Focus on ${1:-correctness, security}.", [], "Focus on correctness, security."),
        ("Focus on ${1:-correctness, security}.", ["speed"], "Focus on speed."),
        ("Focus on ${1:-correctness}.", [""], "Focus on correctness."),  # empty counts as missing
        ("[${2:-none}]", ["a"], "[none]"),
        ("All: ${@:-everything}", [], "All: everything"),
        ("All: ${@:-everything}", ["a", "b c"], "All: a b c"),
        ("All: ${ARGUMENTS:-everything}", [], "All: everything"),
        ("$1|$2|$3", ["a", "b"], "a|b|"),
        ("$@ / $ARGUMENTS", ["a", "b"], "a b / a b"),
        ("${@:2}|${@:2:1}|${@:0:1}|${@:9}", ["a", "b", "c"], "b c|b|a|"),
        ("$10", [str(n) for n in range(1, 11)], "10"),
        # One pass: what an argument or a default brings in is not expanded again.
        ("${1:-$2} $1", ["$ARGUMENTS"], "$ARGUMENTS $ARGUMENTS"),
        ("${1:-use $2}", [], "use $2"),
        ("cost: $ and ${x} and ${1:-}", [], "cost: $ and ${x} and "),
    ],
)
def test_placeholders(body: str, words: list[str], expected: str) -> None:
    assert substitute(body, words) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ('"API compatibility" now', ["API compatibility", "now"]),
        ("doesn't stop", ["doesn't", "stop"]),  # an apostrophe inside a word is text
        ('"the \\"fast\\" path"', ['the "fast" path']),
        ("'a\\b' c", ["a\\b", "c"]),  # other backslashes stay as typed
        ('x "" y', ["x", "", "y"]),  # a quoted empty argument is kept
        ('"never closed here', ['"never', "closed", "here"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("", []),
    ],
)
def test_argument_splitting(args: str, expected: list[str]) -> None:
    assert split_arguments(args) == expected


def test_a_template_file_with_defaults(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "review.md").write_text(
        '---\ndescription: Review staged git changes\nargument-hint: "[focus]"\n---\n'
        "Review the staged changes. Focus on ${1:-correctness, security, and error handling}.\n"
    )
    expander = PromptExpander(templates=discover_templates(tmp_path, agent, project_trusted=False))
    assert expander.expand("/review") == (
        "Review the staged changes. Focus on correctness, security, and error handling."
    )
    assert expander.expand('/review "API compatibility"') == (
        "Review the staged changes. Focus on API compatibility."
    )
