"""JavaScript's number and string rules, pinned (pi_tui.js_semantics, the one copy every front end uses).

Every case carries the JavaScript expression it stands for; one test runs all of them through
real node, so the expected texts below are node's own, not our guess of them. Before the one
copy, the /tree rows wrote ``1e-07`` and ``1000000000000000000000`` where pi writes ``1e-7`` and
``1e+21``, and the compaction copy wrote integers past 2**53 digit for digit.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from pi_tui.js_semantics import (
    UNDEFINED,
    js_stringify,
    math_round,
    number_to_string,
    to_fixed,
    to_number,
    to_string,
)
from pi_tui.view.stats import format_tokens
from pi_tui.view.tree_text import entry_text, format_tool_call
from tests.support.real_pi import node_for

S = number_to_string
"""``String(number)``, short: the table reads better."""
NAN = math.nan
INF = math.inf

# (what we compute, the JavaScript expression, what node prints for it)
CASES: list[tuple[Callable[[], str], str, str]] = [
    # String(number)
    (lambda: S(1e-7), "String(1e-7)", "1e-7"),
    (lambda: S(1e21), "String(1e21)", "1e+21"),
    (lambda: S(-1e21), "String(-1e21)", "-1e+21"),
    (lambda: S(1e20), "String(1e20)", "100000000000000000000"),
    (lambda: S(0.1 + 0.2), "String(0.1 + 0.2)", "0.30000000000000004"),
    (lambda: S(-0.0), "String(-0)", "0"),
    (lambda: S(1e-6), "String(1e-6)", "0.000001"),
    (lambda: S(0.000001234), "String(0.000001234)", "0.000001234"),
    (lambda: S(1.5e-10), "String(1.5e-10)", "1.5e-10"),
    (lambda: S(123e-20), "String(123e-20)", "1.23e-18"),
    (lambda: S(5e-324), "String(5e-324)", "5e-324"),
    (lambda: S(1.7976931348623157e308), "String(1.7976931348623157e308)", "1.7976931348623157e+308"),
    (lambda: S(100.0), "String(100.0)", "100"),
    (lambda: S(-1.5), "String(-1.5)", "-1.5"),
    (lambda: S(NAN), "String(NaN)", "NaN"),
    (lambda: S(-INF), "String(-Infinity)", "-Infinity"),
    # integers as JSON.parse hands them to JavaScript: doubles
    (lambda: S(2**53 - 1), "String(9007199254740991)", "9007199254740991"),
    (lambda: S(2**53 + 1), "String(9007199254740993)", "9007199254740992"),
    (lambda: S(123456789012345678901), "String(123456789012345678901)", "123456789012345680000"),
    (lambda: S(10**21), "String(1000000000000000000000)", "1e+21"),
    (lambda: S(10**400), "String(JSON.parse('1' + '0'.repeat(400)))", "Infinity"),
    # String(value) of other JSON values
    (lambda: to_string([1, None, [2, None, 3], "a"]), 'String([1, null, [2, null, 3], "a"])', "1,,2,,3,a"),
    (lambda: to_string([1e-7, True]), "String([1e-7, true])", "1e-7,true"),
    (lambda: to_string({"a": 1}), "String({a: 1})", "[object Object]"),
    (lambda: to_string(None), "String(null)", "null"),
    (lambda: to_string(UNDEFINED), "String(undefined)", "undefined"),
    (lambda: to_string(False), "String(false)", "false"),
    # toFixed
    (lambda: to_fixed(1.005, 2), "(1.005).toFixed(2)", "1.00"),
    (lambda: to_fixed(1.45, 1), "(1.45).toFixed(1)", "1.4"),
    (lambda: to_fixed(1.25, 1), "(1.25).toFixed(1)", "1.3"),
    (lambda: to_fixed(2.5, 0), "(2.5).toFixed(0)", "3"),
    (lambda: to_fixed(-1.5, 0), "(-1.5).toFixed(0)", "-2"),
    (lambda: to_fixed(-0.0, 2), "(-0).toFixed(2)", "0.00"),
    (lambda: to_fixed(-0.0001, 2), "(-0.0001).toFixed(2)", "-0.00"),
    (lambda: to_fixed(0.0, 7), "(0).toFixed(7)", "0.0000000"),
    (lambda: to_fixed(1234.5678, 3), "(1234.5678).toFixed(3)", "1234.568"),
    (lambda: to_fixed(1e21, 2), "(1e21).toFixed(2)", "1e+21"),
    (lambda: to_fixed(1e20, 30), "(1e20).toFixed(30)", "100000000000000000000." + "0" * 30),
    (lambda: to_fixed(0.1, 20), "(0.1).toFixed(20)", "0.10000000000000000555"),
    (lambda: to_fixed(NAN, 2), "(NaN).toFixed(2)", "NaN"),
    # Math.round
    (lambda: S(math_round(2.5)), "String(Math.round(2.5))", "3"),
    (lambda: S(math_round(-2.5)), "String(Math.round(-2.5))", "-2"),
    (lambda: S(math_round(-0.5)), "String(Math.round(-0.5))", "0"),
    (lambda: S(math_round(0.49999999999999994)), "String(Math.round(0.49999999999999994))", "0"),
    (lambda: S(math_round(1e300)), "String(Math.round(1e300))", "1e+300"),
    # Number(value)
    (lambda: S(to_number("0x1f")), 'String(Number("0x1f"))', "31"),
    (lambda: S(to_number("0b101")), 'String(Number("0b101"))', "5"),
    (lambda: S(to_number("-0x1f")), 'String(Number("-0x1f"))', "NaN"),
    (lambda: S(to_number(" 12 ")), 'String(Number(" 12 "))', "12"),
    (lambda: S(to_number("")), 'String(Number(""))', "0"),
    (lambda: S(to_number("1e1000")), 'String(Number("1e1000"))', "Infinity"),
    (lambda: S(to_number([5])), "String(Number([5]))", "5"),
    (lambda: S(to_number("abc")), 'String(Number("abc"))', "NaN"),
    (lambda: S(to_number(None)), "String(Number(null))", "0"),
    (lambda: S(to_number(UNDEFINED)), "String(Number(undefined))", "NaN"),
    (lambda: S(to_number({})), "String(Number({}))", "NaN"),
    # JSON.stringify of what JSON.parse gave
    (
        lambda: js_stringify({"b": 1, "2": [1e-7, 1e21, -0.0, NAN], "1": "x"}),
        'JSON.stringify({b: 1, "2": [1e-7, 1e21, -0, NaN], "1": "x"})',
        '{"1":"x","2":[1e-7,1e+21,0,null],"b":1}',
    ),
    (
        lambda: js_stringify(json.loads('{"n": 12345678901234567890, "f": 1.0}')),
        """JSON.stringify(JSON.parse('{"n": 12345678901234567890, "f": 1.0}'))""",
        '{"n":12345678901234567000,"f":1}',
    ),
]

IDS = [expression for _, expression, _ in CASES]


@pytest.mark.parametrize(("ours", "expression", "expected"), CASES, ids=IDS)
def test_we_write_what_javascript_writes(ours: Callable[[], str], expression: str, expected: str) -> None:
    assert ours() == expected


def test_the_expected_texts_are_nodes_own() -> None:
    """All expressions through real node at once: the table above cannot drift from JavaScript."""
    script = "console.log(JSON.stringify([" + ",".join(expression for _, expression, _ in CASES) + "]))"
    done = subprocess.run([node_for(), "-e", script], capture_output=True, text=True, timeout=60, check=True)
    printed: list[str] = json.loads(done.stdout)
    assert dict(zip(IDS, printed, strict=True)) == {expression: expected for _, expression, expected in CASES}


# ---------------------------------------------------------------------- where front ends show them


def tool_result(call: dict[str, Any]) -> str:
    return entry_text({"type": "message", "message": {"role": "toolResult", "toolCallId": "c"}}, call)


def test_tree_rows_write_numbers_as_pi_does() -> None:
    """/tree, the export page and the server's tree send these texts; pi writes the same rows."""
    assert format_tool_call("probe", {"x": 1e-7, "y": 1.0}) == '[probe: {"x":1e-7,"y":1}]'
    assert tool_result({"name": "read", "arguments": {"path": 1e21}}) == "[read: 1e+21]"
    compaction = {"type": "compaction", "tokensBefore": 1e24}
    assert entry_text(compaction) == "[compaction: 1e+21k tokens]"
    assert entry_text({"type": "compaction", "tokensBefore": "12500"}) == "[compaction: 13k tokens]"
    assert entry_text({"type": "compaction"}) == "[compaction: NaNk tokens]"
    assert entry_text({"type": "thinking_level_change", "thinkingLevel": ["a", None]}) == "[thinking: a,]"


def test_footer_figures_round_as_pi_does() -> None:
    assert [format_tokens(n) for n in (999, 1250, 9950, 10_500, 999_499, 1_250_000, 12_500_000)] == [
        "999",
        "1.3k",
        "9.9k",  # 9.95 is just below 9.95 in binary, so toFixed goes down
        "11k",
        "999k",
        "1.3M",
        "13M",
    ]
