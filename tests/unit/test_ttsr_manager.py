"""TtsrManager: registration, scopes and gates, incremental matching, repeat policy, timeouts."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
import regex

from pi_tui.config.settings import TtsrSettings
from pi_tui.ttsr.manager import TtsrManager
from pi_tui.ttsr.model import MatchContext, Rule, ScopeToken

CWD = Path("/work/proj")
TEXT = MatchContext("text")
THINKING = MatchContext("thinking")


def make(timeout: float = 0.05, window: int = 64 * 1024, **settings: Any) -> TtsrManager:
    return TtsrManager(TtsrSettings(**settings), CWD, timeout=timeout, window=window)


def rule(
    name: str,
    *conditions: str,
    scopes: tuple[ScopeToken, ...] | None = None,
    globs: tuple[str, ...] = (),
    interrupt_mode: Any = None,
) -> Rule:
    return Rule(
        name=name,
        content=f"content of {name}",
        path=None,
        source="test",
        priority=100,
        conditions=list(conditions),
        scopes=scopes,
        globs=list(globs),
        interrupt_mode=interrupt_mode,
    )


def add(manager: TtsrManager, *rules: Rule) -> TtsrManager:
    for item in rules:
        assert manager.add_rule(item) is None, item.name
    return manager


def tool(name: str = "edit", call_id: str = "c1", **arguments: Any) -> MatchContext:
    return MatchContext("tool", name, call_id, arguments)


def feed(manager: TtsrManager, text: str, context: MatchContext = TEXT, size: int = 10) -> list[list[str]]:
    """Names returned for each delta of ``text`` cut in ``size`` pieces."""
    return [
        [r.name for r in manager.check_delta(text[i : i + size], context)] for i in range(0, len(text), size)
    ]


def fired(manager: TtsrManager, text: str, context: MatchContext = TEXT, size: int = 10) -> list[str]:
    return [name for names in feed(manager, text, context, size) for name in names]


# --- registration ------------------------------------------------------------------------------


def test_add_rule_reasons() -> None:
    manager = make()
    assert manager.add_rule(rule("a", "foo")) is None
    assert "already registered" in (manager.add_rule(rule("a", "bar")) or "")
    assert manager.add_rule(rule("b")) == "no condition"
    assert "scope reaches nothing" in (manager.add_rule(rule("c", "x", scopes=())) or "")
    assert len(manager.warnings) == 1 and "'c'" in manager.warnings[0]
    assert [r.name for r in manager.rules] == ["a"]
    assert manager.get("a") is manager.rules[0]
    assert manager.get("b") is None


def test_invalid_regex_rejected_or_warned() -> None:
    manager = make()
    reason = manager.add_rule(rule("bad", "foo(", "[z-a]"))
    assert reason is not None
    assert "'foo('" in reason and "'[z-a]'" in reason
    assert "missing )" in reason
    assert manager.get("bad") is None
    assert len(manager.warnings) == 2
    assert all("'bad'" in w and "not registered" in w for w in manager.warnings)
    manager.warnings.clear()

    assert manager.add_rule(rule("half", "(unclosed", "fine")) is None
    assert len(manager.warnings) == 1
    assert "'half'" in manager.warnings[0] and "'(unclosed'" in manager.warnings[0]
    assert fired(manager, "this is fine") == ["half"]


def test_disabled_settings_register_and_match_nothing() -> None:
    manager = make(enabled=False)
    assert manager.add_rule(rule("a", "foo")) == "ttsr disabled"
    assert manager.rules == []
    assert manager.check_delta("foo foo", TEXT) == []


# --- scopes and gates --------------------------------------------------------------------------


def test_default_scope_is_text_and_tools_not_thinking() -> None:
    manager = add(make(), rule("r", "forbidden"))
    assert fired(manager, "a forbidden word", THINKING) == []
    assert fired(manager, "a forbidden word", TEXT) == ["r"]
    assert fired(manager, '{"content": "forbidden"}', tool("bash")) == ["r"]


def test_scope_sources_and_tool_names() -> None:
    manager = add(
        make(),
        rule("think", "X", scopes=(ScopeToken("thinking"),)),
        rule("anytool", "X", scopes=(ScopeToken("tool"),)),
        rule("edit", "X", scopes=(ScopeToken("tool", "edit"),)),
        rule("Write", "X", scopes=(ScopeToken("tool", "Write"),)),
    )
    assert fired(manager, "X", TEXT) == []
    assert fired(manager, "X", THINKING) == ["think"]
    assert fired(manager, "X", tool("edit", "1")) == ["anytool", "edit"]
    # Tool names compare case-insensitively, whichever side carries capitals.
    assert fired(manager, "X", tool("EDIT", "2")) == ["anytool", "edit"]
    assert fired(manager, "X", tool("write", "3")) == ["anytool", "Write"]
    assert fired(manager, "X", tool("bash", "4")) == ["anytool"]


def test_tool_scope_globs_keep_their_case() -> None:
    manager = add(
        make(),
        rule("py", "X", scopes=(ScopeToken("tool", "edit", "src/**/*.py"),)),
        rule("PY", "X", scopes=(ScopeToken("tool", None, "*.PY"),)),
    )
    assert fired(manager, "X", tool("edit", "1", path="src/pkg/a.py")) == ["py"]
    assert fired(manager, "X", tool("Edit", "2", path="SRC/a.PY")) == ["PY"]
    assert fired(manager, "X", tool("edit", "3", path="lib/a.py")) == []
    assert fired(manager, "X", tool("write", "4", path="src/a.py")) == []
    assert fired(manager, "X", tool("edit", "5")) == []  # no path (yet)


def test_globs_gate_needs_a_tool_path() -> None:
    manager = add(make(), rule("g", "X", globs=("*.ts",), scopes=(ScopeToken("text"), ScopeToken("tool"))))
    assert fired(manager, "X", TEXT) == []
    assert fired(manager, "X", tool("edit", "1", path="a.py")) == []
    assert fired(manager, "X", tool("edit", "2", path="web/a.ts")) == ["g"]
    assert fired(manager, "X", tool("edit", "3", paths=["a.py", "b.ts"])) == ["g"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "./src/a.py"},
        {"path": "src/a.py"},
        {"path": "/work/proj/src/a.py"},
        {"file_path": "/work/proj/./src/a.py"},
        {"filePath": "src/a.py"},
        {"NotebookPath": "src/a.py"},
        {"paths": ["README.md", "./src/a.py"]},
        {"target_paths": ["/work/proj/src/a.py"]},
    ],
)
def test_path_candidates_match(arguments: dict[str, Any]) -> None:
    manager = add(make(), rule("r", "X", globs=("src/*.py",)))
    assert fired(manager, "X", tool("edit", "c", **arguments)) == ["r"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"pathname": "src/a.py"},  # does not end in "path"
        {"path": ["src/a.py"]},  # a list under a singular key
        {"paths": "src/a.py"},  # a string under a plural key
        {"path": "/elsewhere/src/a.py"},  # absolute, outside cwd: only its own forms
        {"content": "src/a.py"},
    ],
)
def test_path_candidates_miss(arguments: dict[str, Any]) -> None:
    manager = add(make(), rule("r", "X", globs=("src/*.py",)))
    assert fired(manager, "X", tool("edit", "c", **arguments)) == []


def test_absolute_glob_matches_relative_path() -> None:
    manager = add(make(), rule("r", "X", globs=("/work/proj/src/*.py",)))
    assert fired(manager, "X", tool("edit", "c", path="src/a.py")) == ["r"]


def test_path_arriving_after_the_match_still_fires() -> None:
    """The arguments stream in: content may be complete before the gate's path is known."""
    manager = add(make(), rule("r", r"\bany\b", globs=("*.ts",)))
    call = tool("write", "c")
    assert manager.check_delta('{"content": "let x: any', call) == []
    assert manager.check_delta(' = 1", ', call) == []
    call.arguments = {"content": "let x: any = 1", "path": "a.ts"}
    assert [r.name for r in manager.check_delta('"path": "a.ts"}', call)] == ["r"]
    assert manager.check_delta("\n", call) == []


# --- conditions --------------------------------------------------------------------------------


def test_inline_flags_and_multiline_anchors() -> None:
    manager = add(
        make(),
        rule("ci", r"(?i)todo"),
        rule("line", r"^\s*import pdb$"),
        rule("cs", r"FIXME"),
    )
    stream = "first line\nsome ToDo here\n    import pdb\nfixme\n"
    assert fired(manager, stream, size=3) == ["ci", "line"]


def test_anchor_sees_whole_buffer_not_search_start() -> None:
    """``^`` must not match where a search merely starts in the middle of a line."""
    manager = add(make(), rule("line", r"^foo"))
    assert fired(manager, "xfoo xxfoo\nfo", size=1) == []
    assert manager.check_delta("o", TEXT)[0].name == "line"


def test_look_behind_sees_text_before_the_window() -> None:
    manager = add(make(window=16), rule("r", r"(?<!not )allowed"))
    stream = "x" * 100 + "not allowed" + "y" * 100 + " allowed"
    assert fired(manager, stream, size=7) == ["r"]


def test_match_split_across_deltas_fires_once() -> None:
    manager = add(make(), rule("r", r"datetime\.utcnow\(\)"))
    stream = "now = datetime.utcnow() and more text after it"
    per_delta = feed(manager, stream, size=4)
    # It fires on the delta holding the closing parenthesis, and only there.
    completing = (stream.index("()") + 1) // 4
    assert per_delta[completing] == ["r"]
    assert sum(bool(names) for names in per_delta) == 1


def test_old_match_does_not_fire_again() -> None:
    manager = add(make(), rule("r", "bad"), rule("other", "zzz"))
    assert fired(manager, "bad") == ["r"]
    assert fired(manager, " then a lot of harmless text " * 20) == []
    assert fired(manager, " bad again") == ["r"]


def test_look_ahead_completed_by_next_delta() -> None:
    manager = add(make(), rule("r", r"foo(?=\()"))
    assert manager.check_delta("x = foo", TEXT) == []
    assert [r.name for r in manager.check_delta("(1)", TEXT)] == ["r"]
    assert manager.check_delta(" and foo", TEXT) == []
    assert manager.check_delta(" bar", TEXT) == []


def test_every_matching_rule_in_registration_order() -> None:
    manager = add(make(), rule("b", "two"), rule("a", "one"), rule("c", "three", "one"))
    assert [r.name for r in manager.check_delta("one two", TEXT)] == ["b", "a", "c"]


def test_combined_pattern_keeps_each_condition_flags() -> None:
    """Conditions are searched together: one's (?i) or (?s) must not leak into another's."""
    manager = add(
        make(),
        rule("ci", "(?i)alpha"),
        rule("cs", "BETA"),
        rule("dot", "(?s)gam.ma"),
        rule("nodot", "del.ta"),
        rule("backref", r"(\w)\1\1"),
    )
    assert fired(manager, "ALPHA beta gam\nma del\nta zzz") == ["ci", "dot", "backref"]


def test_regex_only_syntax_still_matches() -> None:
    """POSIX classes and fuzzy matching read differently by the stdlib parser (which finds the
    literals that wake conditions up) must not make a condition deaf."""
    manager = add(make(), rule("posix", r"[[:digit:]]{3}-[[:digit:]]{4}"), rule("fuzzy", r"(?:utcnow){e<=1}"))
    assert fired(manager, "call 555-1234 now", size=3) == ["posix"]
    assert fired(manager, " datetime.utcn0w()", size=3) == ["fuzzy"]


def test_literal_straddling_deltas_and_long_gaps() -> None:
    r"""Conditions sleep until their literal shows up, even one cut across deltas, and a match
    whose start lies far before its literal (``^\s*`` before ``except``) is still found."""
    manager = add(make(), rule("except", r"^\s*except\s*:"), rule("api", r"(?i)\bapi_key\s*=\s*'[^']{8,}'"))
    prose = "plain words without the trigger. " * 300
    assert fired(manager, prose + "\n" + " " * 50, size=7) == []
    assert fired(manager, "exc", size=3) == []
    assert fired(manager, "ept", size=3) == []
    assert fired(manager, " :", size=3) == ["except"]
    assert fired(manager, prose + " API_", size=10) == []
    assert fired(manager, "KEY = 'abcdefghij'", size=4) == ["api"]


def test_buffers_are_per_stream() -> None:
    manager = add(make(), rule("r", "forbidden", scopes=(ScopeToken("text"), ScopeToken("tool"))))
    assert manager.check_delta("forbi", TEXT) == []
    assert manager.check_delta("dden", tool("edit", "1")) == []
    assert manager.check_delta("forbi", tool("edit", "2")) == []
    assert [r.name for r in manager.check_delta("dden", TEXT)] == ["r"]
    manager.reset_buffers()
    assert manager.check_delta("dden", tool("edit", "2")) == []


def test_window_bounds_the_look_back() -> None:
    manager = add(make(window=32), rule("r", r"BEGIN.*END"))
    assert fired(manager, "BEGIN" + "x" * 20 + "END") == ["r"]
    manager.reset_buffers()
    assert fired(manager, "BEGIN" + "x" * 200 + "END") == []


def test_hidden_complete_match_after_a_persistent_partial() -> None:
    """A DOTALL rule keeps a partial match open; other rules' matches behind it still count once."""
    manager = add(make(), rule("block", r"(?s)BEGIN.*END"), rule("needle", "needle"))
    per_delta = feed(manager, "BEGIN " + "text " * 10 + "needle " + "more " * 10 + "needle END done")
    assert [names for names in per_delta if names] == [["needle"], ["needle"], ["block"]]


def test_greedy_match_fires_once_per_occurrence() -> None:
    """A match growing at the same start (``c.*a`` over ``ca``, ``caa``) is one occurrence."""
    manager = add(make(), rule("r", r"c.*a"))
    assert fired(manager, "xca", size=3) == ["r"]
    assert fired(manager, "aaa", size=1) == []
    assert fired(manager, " cba", size=4) == ["r"]


REFERENCE_PATTERNS = [
    *("ab", "a+b", "ab|ba", "a.b", r"\bab\b", "^ab", "ab$", "(?i)AB", "a[bc]{2}", "b(?=a)"),
    *(r"(?<=c)ab", r"a\s*b", "(?s)a.*c", "c.*a", r"(a)\1", r"^\s*c$", "ab(?!c)", "abca", "a*"),
    *("[abc]{2}ba", r"\s*ab", "(?:a|bc)ca", ".{0,3}cab", "[^a]+b", "[bc]{1,3}(?:aa|cc)", "^$"),
    *(r"(?i)[ab ]{2}C\b", "(?i)CAB ", "a(?:bc|cb)a", "b{2,}c", "(?:ab)+c", r"c\b", r"(?<!a)bb"),
]
"""Small-alphabet conditions covering literals with and without a bounded lead, partial
matches, look-arounds, anchors, back-references and empty matches."""


def check_against_reference(seed: int, *, change_eligibility: bool) -> None:
    """Random conditions and deltas against a brute-force search of the whole buffer.

    Never a match that is not there (every firing has a match ending at or after the text the
    rule was last checked against), and never a missed occurrence (a start whose match ends
    after that point and that no earlier firing covered). With ``change_eligibility`` rules
    drop out (injected) and come back (cleared) mid-stream, so a rule coming back must catch
    up with what went by meanwhile.
    """
    rng = random.Random(seed)
    for _ in range(250):
        chosen = rng.sample(REFERENCE_PATTERNS, rng.randint(1, 6))
        manager = make()
        for index, pattern in enumerate(chosen):
            add(manager, rule(f"r{index}", pattern))
        compiled = [regex.compile(p, regex.MULTILINE if "^" in p or "$" in p else 0) for p in chosen]
        covered: list[set[int]] = [set() for _ in chosen]
        last_checked = [0] * len(chosen)
        text = "".join(rng.choice("abc \n") for _ in range(rng.randint(1, 60)))
        buffer, position = "", 0
        while position < len(text):
            if change_eligibility and rng.random() < 0.2:
                manager.mark_injected(f"r{i}" for i in range(len(chosen)) if rng.random() < 0.4)
            if change_eligibility and rng.random() < 0.1:
                manager.clear_injected()
            delta = text[position : position + rng.randint(1, 6)]
            position += len(delta)
            buffer += delta
            names = {r.name for r in manager.check_delta(delta, TEXT)}
            for index, pattern in enumerate(compiled):
                name = f"r{index}"
                if manager.is_injected(name):
                    assert name not in names
                    continue
                ends = {s: m.end() for s in range(len(buffer) + 1) if (m := pattern.match(buffer, s))}
                new_starts = {s for s, e in ends.items() if e > last_checked[index]}
                if name in names:
                    assert any(e >= last_checked[index] for e in ends.values()), (chosen[index], buffer)
                    covered[index] |= new_starts
                else:
                    assert new_starts <= covered[index], (chosen[index], buffer, last_checked[index])
                last_checked[index] = len(buffer)


@pytest.mark.parametrize("seed", range(3))
def test_against_whole_buffer_reference(seed: int) -> None:
    check_against_reference(seed, change_eligibility=False)


@pytest.mark.parametrize("seed", range(3))
def test_against_reference_with_rules_dropping_out_and_back(seed: int) -> None:
    check_against_reference(100 + seed, change_eligibility=True)


# --- repeat policy -----------------------------------------------------------------------------


def turn(manager: TtsrManager, text: str) -> list[str]:
    """One turn: buffers reset, ``text`` streamed, whatever fired is injected, turn ends."""
    manager.reset_buffers()
    names = list(dict.fromkeys(fired(manager, text)))
    manager.mark_injected(names)
    manager.turn_completed()
    return names


def test_once_per_branch() -> None:
    manager = add(make(), rule("r", "bad"))
    assert turn(manager, "bad") == ["r"]
    assert manager.is_injected("r")
    assert [turn(manager, "bad") for _ in range(5)] == [[]] * 5
    manager.clear_injected()
    assert not manager.is_injected("r")
    assert turn(manager, "bad") == ["r"]


def test_after_gap_sequence() -> None:
    manager = add(make(repeat_mode="after-gap", repeat_gap=3), rule("r", "bad"))
    results = [turn(manager, "bad") for _ in range(8)]
    # Injected at turn count 0, eligible again when 3 more turns have completed, and so on.
    assert results == [["r"], [], [], ["r"], [], [], ["r"], []]
    assert manager.turns_completed == 8


def test_after_gap_counts_turns_not_deltas() -> None:
    manager = add(make(repeat_mode="after-gap", repeat_gap=1), rule("r", "bad"))
    assert fired(manager, "bad") == ["r"]
    manager.mark_injected(["r"])
    manager.reset_buffers()
    assert fired(manager, "bad bad bad bad", size=1) == []
    manager.turn_completed()
    manager.reset_buffers()
    assert fired(manager, "bad") == ["r"]


def test_restore_injected() -> None:
    once = add(make(), rule("r", "bad"), rule("s", "worse"))
    once.restore_injected(["r", "unknown"])
    assert once.is_injected("r") and not once.is_injected("s")
    assert fired(once, "bad and worse") == ["s"]

    gap = add(make(repeat_mode="after-gap", repeat_gap=2), rule("r", "bad"))
    gap.restore_injected(["r"])
    assert turn(gap, "bad") == []
    assert turn(gap, "bad") == []
    assert turn(gap, "bad") == ["r"]


# --- timeouts ----------------------------------------------------------------------------------


def test_catastrophic_regex_is_stopped_and_disabled() -> None:
    manager = add(make(timeout=0.05), rule("evil", r"(a+)+$", "a{3}b$"), rule("good", "needle"))
    started = time.perf_counter()
    result = manager.check_delta("a" * 30_000 + "b", TEXT)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0
    # The other condition of the same rule still ran.
    assert [r.name for r in result] == ["evil"]
    assert any("'(a+)+$'" in w and "disabled" in w for w in manager.warnings)
    assert "evil" not in manager.disabled
    assert [r.name for r in manager.check_delta(" needle", TEXT)] == ["good"]


def test_rule_without_conditions_left_is_disabled() -> None:
    manager = add(make(timeout=0.02), rule("evil", r"(a+)+$"), rule("good", "needle"))
    assert manager.check_delta("a" * 30_000 + "b", TEXT) == []
    assert "evil" in manager.disabled
    assert any("no condition left" in w for w in manager.warnings)
    started = time.perf_counter()
    assert manager.check_delta("a" * 30_000 + "b needle", TEXT)[0].name == "good"
    assert time.perf_counter() - started < 0.5
    manager.reset_buffers()
    assert fired(manager, "aaaa needle") == ["good"]


# --- interrupts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("always", {"text": True, "thinking": True, "tool": True}),
        ("prose-only", {"text": True, "thinking": True, "tool": False}),
        ("tool-only", {"text": False, "thinking": False, "tool": True}),
        ("never", {"text": False, "thinking": False, "tool": False}),
    ],
)
def test_interrupts(mode: Any, expected: dict[str, bool]) -> None:
    by_setting = make(interrupt_mode=mode)
    by_rule = make(interrupt_mode="never" if mode == "always" else "always")
    for source, value in expected.items():
        assert by_setting.interrupts(rule("r", "x"), source) is value  # type: ignore[arg-type]
        assert by_rule.interrupts(rule("r", "x", interrupt_mode=mode), source) is value  # type: ignore[arg-type]
