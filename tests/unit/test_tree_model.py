# ruff: noqa: E501, RUF001 -- the expected screens are pi's, verbatim: up to 140 columns, with its cursor
"""The /tree selector's model, on real sessions: its lines must be the ones pi 0.73 draws.

Every expected screen below was captured from the real pi (tmux, ``/tree``) on a copy of the same
file: the fixtures at 120 columns (00, as in tree-ui.md) or 140 (05, 06), the synthetic "kitchen
sink" at 140. pi cuts lines to the terminal width; here that is the widget's job, so the model's
lines are cut with ``cut`` (pi's rule: width - 3 columns, then "...") before comparing.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.view.tree_model import FILTER_MODES, FILTER_TAGS, NO_ENTRIES, TreeModel, TreeRow
from pi_tui.view.tree_text import cut_to_width, entry_text, format_label_time, format_tool_call
from tests.conftest import PI_SESSIONS

# ---------------------------------------------------------------------- helpers


def open_case(case: str, tmp_path: Path) -> SessionManager:
    copy = tmp_path / f"{case}.jsonl"
    shutil.copy(PI_SESSIONS / case / "session.jsonl", copy)
    return SessionManager.open(copy, read_only=True)


def model_of(manager: SessionManager, **options: object) -> TreeModel:
    return TreeModel(
        manager.get_tree(),
        manager.get_leaf_id(),
        label_time_of=manager.get_label_timestamp,
        **options,  # type: ignore[arg-type]
    )


def cut(line: str, width: int) -> str:
    """What pi's truncateToWidth leaves of a line (all characters here are one column wide)."""
    return line if len(line) <= width else line[: width - 3] + "..."


def screen(model: TreeModel, selected: str | None, width: int = 120) -> str:
    """The list as pi draws it: rows with the cursor, then the counter, indented by two."""
    index = model.index_of(selected) if selected is not None else None
    if not model.rows:
        return f"  {NO_ENTRIES}\n  {model.counter(0)}"
    lines = [cut(model.line(row, row == index), width) for row in range(len(model.rows))]
    lines.append(f"  {model.counter(index if index is not None else 0)}")
    return "\n".join(lines)


class Selection:
    """What the widget does with the selection: it follows the entry, or its nearest visible
    ancestor, and an empty view keeps the id so that switching back restores it."""

    def __init__(self, model: TreeModel, entry_id: str | None) -> None:
        self.model = model
        self.entry_id = model.nearest_visible(entry_id) if entry_id else None

    def follow(self) -> str | None:
        if self.entry_id is not None:
            self.entry_id = self.model.nearest_visible(self.entry_id) or self.entry_id
        return self.entry_id

    @property
    def index(self) -> int:
        index = self.model.index_of(self.entry_id) if self.entry_id else None
        return index if index is not None else 0

    def down(self, steps: int = 1) -> None:
        self.entry_id = self.model.rows[(self.index + steps) % len(self.model.rows)].entry_id


def block(text: str) -> str:
    """An expected screen written in the test: strip the surrounding newlines only."""
    return text.strip("\n")


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time = UTC, so label times read the same everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# ---------------------------------------------------------------------- 00: the spec's example

SPEC_DEFAULT = block("""
  • user: Which data structure?
  • [checkpoint-1] assistant: Approach A: use a dict.
  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exp...
  │     • user: Try another approach
› │     • assistant: Summary of abandoned branch: tried dict approach.
  └⊟ user: Does it work?
        assistant: Dict version works fine.
  (5/7)
""")

MODES_00 = {
    "no-tools": SPEC_DEFAULT.replace("(5/7)", "(5/7) [no-tools]"),
    "user-only": block("""
  • user: Which data structure?
› ├─ • user: Try another approach
  └─ user: Does it work?
  (2/3) [user]
"""),
    "labeled-only": block("""
› • [checkpoint-1] assistant: Approach A: use a dict.
  (1/1) [labeled]
"""),
    "all": block("""
  • [model: fake-model]
  • [thinking: off]
  • user: Which data structure?
› • [checkpoint-1] assistant: Approach A: use a dict.
  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exp...
  │     • user: Try another approach
  │     • assistant: Summary of abandoned branch: tried dict approach.
  └⊟ user: Does it work?
        assistant: Dict version works fine.
        [label: checkpoint-1]
  (4/10) [all]
"""),
}


def test_default_view_is_the_spec_example(tmp_path: Path) -> None:
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    assert screen(model, manager.get_leaf_id()) == SPEC_DEFAULT
    # Uncut, the row holds the whole summary on one line.
    summary = model.rows[2]
    assert summary == TreeRow(
        entry_id="4f177391",
        gutter="├⊟ ",
        on_path=True,
        label=None,
        text="[branch summary]: The user explored a different conversation branch before returning here. "
        "Summary of that exploration:  Approach B: use a list instead.",
        foldable=True,
        folded=False,
    )
    assert [row.gutter for row in model.rows] == ["", "", "├⊟ ", "│     ", "│     ", "└⊟ ", "      "]
    assert model.rows[1].label == "checkpoint-1"
    assert model.line(4, True) == "› │     • assistant: Summary of abandoned branch: tried dict approach."


def test_filter_modes_cycle_with_the_selection(tmp_path: Path) -> None:
    """Ctrl+O from the default view: the counters and tags of the spec, the selection carried."""
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    selection = Selection(model, manager.get_leaf_id())
    for mode in ("no-tools", "user-only", "labeled-only", "all"):
        model.cycle_filter()
        assert model.filter_mode == mode
        assert screen(model, selection.follow()) == MODES_00[mode], mode
    model.cycle_filter()
    assert model.filter_mode == "default"
    # Back in default, the selection stays where labeled-only put it.
    assert selection.entry_id == "534ae071"
    assert screen(model, selection.follow()) == (
        SPEC_DEFAULT.replace("› │     • assistant", "  │     • assistant")
        .replace("  • [checkpoint-1]", "› • [checkpoint-1]")
        .replace("(5/7)", "(2/7)")
    )
    model.cycle_filter(-1)
    assert model.filter_mode == "all"
    assert [FILTER_TAGS[mode] for mode in FILTER_MODES] == [
        "",
        " [no-tools]",
        " [user]",
        " [labeled]",
        " [all]",
    ]


def test_direct_filter_keys(tmp_path: Path) -> None:
    """Ctrl+D sets default; Ctrl+T/U/L/A switch to their mode, or back to default when in it."""
    model = model_of(open_case("00-tree-label-summary", tmp_path))
    model.toggle_filter("no-tools")
    assert model.filter_mode == "no-tools"
    model.toggle_filter("user-only")
    assert model.filter_mode == "user-only"
    model.toggle_filter("user-only")
    assert model.filter_mode == "default"
    model.toggle_filter("all")
    model.toggle_filter("default")
    assert model.filter_mode == "default"
    model.toggle_filter("default")
    assert model.filter_mode == "default"
    with pytest.raises(ValueError):
        model.set_filter("tools")
    # The start mode comes from a setting: an unknown value there means default.
    assert (
        model_of(open_case("00-tree-label-summary", tmp_path), filter_mode="bogus").filter_mode == "default"
    )
    started = model_of(open_case("00-tree-label-summary", tmp_path), filter_mode="user-only")
    assert started.counter(0) == "(1/3) [user]"


# ---------------------------------------------------------------------- 05 / 06: branches, tool results

BRANCH_SCREENS = {
    ("05-tree-branch-nosummary", "default"): """
  • user: Tell me about Python
  • assistant: Python is a high-level programming language.
  ├⊟ • user: Tell me about Go instead
  │     • assistant: Go is a statically typed language designed at Google.
  │     • user: next
› │     • assistant: echo: next
  └⊟ user: Tell me about Rust
        assistant: Rust is a systems programming language focused on safety.
  (6/8)
""",
    ("05-tree-branch-nosummary", "all"): """
  • [model: fake-model]
  • [thinking: off]
  • user: Tell me about Python
  • assistant: Python is a high-level programming language.
  ├⊟ • user: Tell me about Go instead
  │     • assistant: Go is a statically typed language designed at Google.
  │     • user: next
› │     • assistant: echo: next
  └⊟ user: Tell me about Rust
        assistant: Rust is a systems programming language focused on safety.
  (8/10) [all]
""",
    ("06-tree-branch-summary", "default"): """
  • user: Read the README
  • [read: README.md]
  • assistant: The README says this is a tiny demo project.
  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exploration:  ## Goal C...
  │     • user: Instead, add a docstring to src/util.py
  │     • assistant: Sure, I will add a docstring to src/util.py next.
  │     • user: next
› │     • assistant: echo: next
  └⊟ user: Now edit src/app.py to say Hi
        [edit: src/app.py]
        assistant: I changed the greeting in src/app.py to Hi.
  (8/11)
""",
    ("06-tree-branch-summary", "all"): """
  • [model: fake-model]
  • [thinking: off]
  • user: Read the README
  • [read: README.md]
  • assistant: The README says this is a tiny demo project.
  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exploration:  ## Goal C...
  │     • user: Instead, add a docstring to src/util.py
  │     • assistant: Sure, I will add a docstring to src/util.py next.
  │     • user: next
› │     • assistant: echo: next
  └⊟ user: Now edit src/app.py to say Hi
        [edit: src/app.py]
        assistant: I changed the greeting in src/app.py to Hi.
  (10/13) [all]
""",
}


@pytest.mark.parametrize(("case", "mode"), list(BRANCH_SCREENS))
def test_branch_fixtures(case: str, mode: str, tmp_path: Path) -> None:
    """The active branch first although it is the newer one; tool-only assistants hidden."""
    manager = open_case(case, tmp_path)
    model = model_of(manager, filter_mode=mode)
    assert screen(model, manager.get_leaf_id(), width=140) == block(BRANCH_SCREENS[(case, mode)])


def test_no_tools_hides_tool_results(tmp_path: Path) -> None:
    manager = open_case("06-tree-branch-summary", tmp_path)
    model = model_of(manager, filter_mode="no-tools")
    texts = [row.text for row in model.rows]
    assert "[read: README.md]" not in texts
    assert "[edit: src/app.py]" not in texts
    assert model.counter(model.index_of(manager.get_leaf_id())) == "(7/9) [no-tools]"


# ---------------------------------------------------------------------- folds and segment jumps


def test_fold_unfold_and_segment_jumps(tmp_path: Path) -> None:
    """The key sequence driven in the real pi, screen by screen."""
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    # Down onto the branch summary, Ctrl+Left: it folds, its segment disappears.
    index = model.index_of("4f177391")
    assert index == 2
    assert model.segment_left(index) == 2
    assert screen(model, "4f177391") == block("""
  • user: Which data structure?
  • [checkpoint-1] assistant: Approach A: use a dict.
› ├⊞ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exp...
  └⊟ user: Does it work?
        assistant: Dict version works fine.
  (3/5)
""")
    assert model.rows[2].folded and not model.rows[2].foldable
    # Ctrl+Left again: already folded, so jump to the previous segment start (here: the root).
    assert model.segment_left(2) == 0
    # On a chain row inside a segment there is nothing to fold: up to the segment start.
    assert model.segment_left(1) == 0
    # The root folds too, marked before the path marker since it has no connector.
    assert model.segment_left(0) == 0
    assert screen(model, "e10c5c3e") == "› ⊞ • user: Which data structure?\n  (1/1)"
    # Ctrl+Right unfolds; the inner fold stays.
    assert model.segment_right(0) == 0
    assert screen(model, "e10c5c3e") == block("""
› • user: Which data structure?
  • [checkpoint-1] assistant: Approach A: use a dict.
  ├⊞ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exp...
  └⊟ user: Does it work?
        assistant: Dict version works fine.
  (1/5)
""")
    # Ctrl+Right: down the chain to the branch point's first child; then unfold it; then to the end.
    assert model.segment_right(0) == 2
    assert model.segment_right(2) == 2
    assert screen(model, "4f177391").splitlines()[2:4] == [
        "› ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. "
        "Summary of that exp...",
        "  │     • user: Try another approach",
    ]
    assert model.segment_right(2) == 4
    assert model.segment_right(4) == 4  # a chain end stays put
    # From the second branch's chain: back to its segment start, then to the root.
    assert model.segment_left(6) == 5
    assert model.fold("80e4a600")
    # Folded: up the ancestors to a segment start above this row; the other branch is no ancestor.
    assert model.segment_left(5) == 0
    assert model.unfold("80e4a600")
    assert not model.unfold("80e4a600")


def test_fold_rules(tmp_path: Path) -> None:
    model = model_of(open_case("00-tree-label-summary", tmp_path))
    assert not model.fold("534ae071")  # inside a chain: not a segment start
    assert not model.fold("e293ba8e")  # nothing below it
    assert not model.fold("0b23e0d8")  # hidden in this mode
    assert not model.fold("missing")
    assert model.fold("80e4a600")
    assert not model.fold("80e4a600")  # already
    assert len(model.rows) == 6
    # A filter change (or a search) drops the folds.
    model.set_filter("no-tools")
    assert len(model.rows) == 7
    assert model.fold("4f177391")
    model.set_search("")
    assert len(model.rows) == 7


# ---------------------------------------------------------------------- search


def test_search_as_in_pi(tmp_path: Path) -> None:
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    selection = Selection(model, manager.get_leaf_id())
    model.set_search("dict")
    assert screen(model, selection.follow()) == block("""
  • [checkpoint-1] assistant: Approach A: use a dict.
› ├─ • assistant: Summary of abandoned branch: tried dict approach.
  └─ assistant: Dict version works fine.
  (2/3)
""")
    model.set_search("dict works")
    assert screen(model, selection.follow()) == "› assistant: Dict version works fine.\n  (1/1)"
    model.set_search("")
    assert len(model.rows) == 7
    model.set_search("summary")
    assert screen(model, "e293ba8e") == block("""
  • [branch summary]: The user explored a different conversation branch before returning here. Summary of that explor...
› • assistant: Summary of abandoned branch: tried dict approach.
  (2/2)
""")
    model.set_search("zzz")
    assert screen(model, None) == f"  {NO_ENTRIES}\n  (0/0)"
    assert model.nearest_visible("e293ba8e") is None
    assert model.segment_left(0) == 0 and model.segment_right(0) == 0


def test_search_words_case_labels_and_tool_arguments(tmp_path: Path) -> None:
    model = model_of(open_case("00-tree-label-summary", tmp_path))
    model.set_search("DICT  Works")
    assert [row.entry_id for row in model.rows] == ["3bb9d03c"]
    model.set_search("checkpoint")  # the label
    assert [row.entry_id for row in model.rows] == ["534ae071"]
    model.set_search("user does")  # role and text
    assert [row.text for row in model.rows] == ["user: Does it work?"]
    model.set_filter("all")
    model.set_search("model fake")
    assert [row.text for row in model.rows] == ["[model: fake-model]"]

    model = model_of(open_case("06-tree-branch-summary", tmp_path))
    # "README.md" is only in the read call's arguments, never in a message text.
    model.set_search("readme.md")
    assert [row.text for row in model.rows] == ["[read: README.md]"]
    # "Hello" is in the edit call's oldText (and in the summary's text), not in the result's.
    model.set_search("hello")
    assert [row.text[:18] for row in model.rows] == ["[branch summary]: ", "[edit: src/app.py]"]


# ---------------------------------------------------------------------- selection after changes


def test_nearest_visible(tmp_path: Path) -> None:
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    leaf = manager.get_leaf_id()
    assert model.nearest_visible(leaf) == leaf
    model.set_filter("user-only")
    assert model.nearest_visible(leaf) == "f66b4295"
    assert model.nearest_visible("0b23e0d8") == "80e4a600"  # the label entry hangs under 3bb9d03c
    model.set_filter("labeled-only")
    assert model.nearest_visible("f66b4295") == "534ae071"
    # Above every labelled entry: pi falls back to the last row.
    assert model.nearest_visible("e10c5c3e") == "534ae071"
    assert model.nearest_visible("no-such-id") == "534ae071"
    assert model.index_of("f66b4295") is None
    model.set_filter("all")
    assert model.nearest_visible("f91eb16d") == "f91eb16d"


def test_empty_view_keeps_the_selection_for_later(tmp_path: Path) -> None:
    manager = open_case("05-tree-branch-nosummary", tmp_path)  # nothing labelled
    model = model_of(manager)
    selection = Selection(model, manager.get_leaf_id())
    selection.down(-3)
    assert selection.entry_id == "3c7b4d3d"
    model.set_filter("labeled-only")
    assert selection.follow() == "3c7b4d3d"
    assert screen(model, selection.entry_id) == f"  {NO_ENTRIES}\n  (0/0) [labeled]"
    model.set_filter("default")
    assert selection.follow() == "3c7b4d3d"
    assert model.counter(selection.index) == "(3/8)"


# ---------------------------------------------------------------------- labels


def test_label_timestamps(tmp_path: Path, utc: None) -> None:
    """Shift+T: the label time (today: just HH:MM) before the text, and a tag on the counter."""
    manager = open_case("00-tree-label-summary", tmp_path)
    model = model_of(manager)
    model.clock = lambda: datetime(2026, 11, 21, 23, 0, tzinfo=UTC)
    model.toggle_label_times()
    assert model.line(1, False) == "  • [checkpoint-1] 20:10 assistant: Approach A: use a dict."
    assert model.line(0, False) == "  • user: Which data structure?"  # no label, no time
    assert model.counter(1) == "(2/7) [+label time]"
    model.clock = lambda: datetime(2026, 12, 24, 9, 0, tzinfo=UTC)
    assert model.line(1, False) == "  • [checkpoint-1] 11/21 20:10 assistant: Approach A: use a dict."
    model.set_filter("labeled-only")
    assert model.counter(0) == "(1/1) [labeled] [+label time]"
    model.toggle_label_times()
    assert model.line(0, True) == "› • [checkpoint-1] assistant: Approach A: use a dict."


def test_format_label_time(utc: None) -> None:
    now = datetime(2026, 11, 21, 23, 0, tzinfo=UTC)
    assert format_label_time("2026-11-21T20:10:17.279Z", now) == "20:10"
    assert format_label_time("2026-02-03T04:05:06Z", now) == "2/3 04:05"
    assert format_label_time("2025-12-31T23:59:00.000Z", now) == "25/12/31 23:59"
    assert format_label_time("2009-01-02T03:04:00+00:00", now) == "09/1/2 03:04"
    assert format_label_time("not a date", now) is None


def test_set_label_updates_rows_and_labeled_view(tmp_path: Path, utc: None) -> None:
    manager = open_case("05-tree-branch-nosummary", tmp_path)
    model = model_of(manager)
    model.set_label("ef616b98", "  rust  ", "2026-11-21T21:00:00Z")
    index = model.index_of("ef616b98")
    assert model.line(index, False) == "  └⊟ [rust] user: Tell me about Rust"
    model.toggle_filter("labeled-only")
    assert [row.label for row in model.rows] == ["rust"]
    model.clock = lambda: datetime(2026, 11, 21, 23, 0, tzinfo=UTC)
    model.toggle_label_times()
    assert model.line(0, True) == "› [rust] 21:00 user: Tell me about Rust"
    model.set_search("rust")
    assert len(model.rows) == 1
    model.set_label("ef616b98", "")
    assert len(model.rows) == 0
    model.set_filter("default")
    assert model.rows[model.index_of("ef616b98")].label is None


# ---------------------------------------------------------------------- every entry kind, several roots


def kitchen_sink(path: Path) -> None:
    """Three roots and one of every entry kind and tool (written as pi writes them)."""
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    lines: list[dict] = [{"type": "session", "version": 3, "id": "sink", "timestamp": "2026-11-20T10:00:00Z"}]
    lines[0]["cwd"] = "/tmp"

    def add(entry_id: str, parent: str | None, kind: str, **fields: object) -> None:
        stamp = f"2026-11-20T10:00:{len(lines):02d}.000Z"
        lines.append({"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields})

    def user(entry_id: str, parent: str | None, text: str) -> None:
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}
        add(entry_id, parent, "message", message=message)

    def assistant(entry_id: str, parent: str, content: list, stop: str = "stop", **extra: object) -> None:
        message = {"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake"}
        message.update(model="fake-model", usage=usage, stopReason=stop, timestamp=1, **extra)
        add(entry_id, parent, "message", message=message)

    def result(entry_id: str, parent: str, call_id: str, tool: str) -> None:
        message = {"role": "toolResult", "toolCallId": call_id, "toolName": tool, "isError": False}
        message.update(content=[{"type": "text", "text": "output"}], timestamp=1)
        add(entry_id, parent, "message", message=message)

    def call(call_id: str, name: str, arguments: dict) -> dict:
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}

    add("m1", None, "model_change", provider="fake", modelId="fake-model")
    user("u1", "m1", "First root:\n\tline two")
    assistant(
        "a1",
        "u1",
        [call("c1", "bash", {"command": "ls -la\nexit 0"}), call("c2", "bash", {"command": "x" * 60})],
        "toolUse",
    )
    result("r1", "a1", "c1", "bash")
    result("r2", "r1", "c2", "bash")
    assistant("a2", "r2", [{"type": "text", "text": "Listed."}])
    add("k1", "a2", "compaction", summary="sum", firstKeptEntryId="u1", tokensBefore=12500)
    add("x1", "k1", "custom", customType="my-ext", data={})
    add("cm1", "x1", "custom_message", customType="note", content="A custom\nmessage", display=True)
    add("si1", "cm1", "session_info", name="Kitchen")
    add("t1", "si1", "thinking_level_change", thinkingLevel="high")
    bash = {"role": "bashExecution", "command": "echo hi", "output": "hi\n", "exitCode": 0}
    add("b1", "t1", "message", message={**bash, "cancelled": False, "truncated": False, "timestamp": 1})
    user("u2", None, "Second root")
    assistant("a3", "u2", [], "aborted")
    user("u3", "a3", "after abort")
    assistant("a4", "u3", [], "error", errorMessage="Boom\nbad things happened")
    calls = [
        call("c3", "read", {"path": "/root/x.py", "offset": 10, "limit": 20}),
        call("c4", "grep", {"pattern": "foo", "path": "src"}),
        call("c5", "find", {"pattern": "*.py"}),
        call("c6", "ls", {}),
        call("c7", "mytool", {"alpha": 1, "beta": "a long string value here"}),
        call("c8", "read", {"path": "/root/y.py", "limit": 5}),
        call("c9", "write", {"path": "/root/z.py", "content": "x"}),
    ]
    assistant("e1", "a4", calls, "toolUse")
    parent = "e1"
    answered = "c3:read c4:grep c5:find c6:ls c7:mytool c8:read c9:write nope:edit"  # nope: no such call
    for number, pair in enumerate(answered.split(), start=3):
        call_id, tool = pair.split(":")
        result(f"r{number}", parent, call_id, tool)
        parent = f"r{number}"
    assistant("a5", parent, [{"type": "text", "text": "done"}])
    user("u4", "a3", "sibling of u3")
    assistant("a6", "u4", [{"type": "thinking", "thinking": "hmm"}])
    user("u5", None, "Third root")
    add("l1", "a5", "label", targetId="u2", label="second")
    assistant("a7", "l1", [{"type": "text", "text": "leaf here"}])
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


SINK_DEFAULT = """
  • [second] user: Second root
     • assistant: (aborted)
     ├⊟ • user: after abort
     │     • assistant: Boom bad things happened
     │     • [read: ~/x.py:10-29]
     │     • [grep: /foo/ in src]
     │     • [find: *.py in .]
     │     • [ls: .]
     │     • [mytool: {"alpha":1,"beta":"a long string value h...]
     │     • [read: ~/y.py:1-5]
     │     • [write: ~/z.py]
     │     • [edit]
     │     • assistant: done
›    │     • assistant: leaf here
     └─ user: sibling of u3
  user: First root:  line two
     [bash: ls -la exit 0]
     [bash: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...]
     assistant: Listed.
     [compaction: 13k tokens]
     [note]: A custom message
     [bash]: echo hi
  user: Third root
  (14/23)
"""
# pi itself appended a "[thinking: off]" entry under the leaf when it opened this file (shown in
# its "all" view as (15/29)); the file given to the model has no such entry.
SINK_ALL = """
  • [second] user: Second root
     • assistant: (aborted)
     ├⊟ • user: after abort
     │     • assistant: Boom bad things happened
     │     • [read: ~/x.py:10-29]
     │     • [grep: /foo/ in src]
     │     • [find: *.py in .]
     │     • [ls: .]
     │     • [mytool: {"alpha":1,"beta":"a long string value h...]
     │     • [read: ~/y.py:1-5]
     │     • [write: ~/z.py]
     │     • [edit]
     │     • assistant: done
     │     • [label: second]
›    │     • assistant: leaf here
     └─ user: sibling of u3
  [model: fake-model]
     user: First root:  line two
     [bash: ls -la exit 0]
     [bash: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...]
     assistant: Listed.
     [compaction: 13k tokens]
     [custom: my-ext]
     [note]: A custom message
     [title: Kitchen]
     [thinking: high]
     [bash]: echo hi
  user: Third root
  (15/28) [all]
"""
SINK_NO_TOOLS = """
  • [second] user: Second root
     • assistant: (aborted)
     ├⊟ • user: after abort
     │     • assistant: Boom bad things happened
     │     • assistant: done
›    │     • assistant: leaf here
     └─ user: sibling of u3
  user: First root:  line two
     assistant: Listed.
     [compaction: 13k tokens]
     [note]: A custom message
     [bash]: echo hi
  user: Third root
  (6/13) [no-tools]
"""


@pytest.fixture
def sink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionManager:
    monkeypatch.setenv("HOME", "/root")  # paths under it show as ~/...
    path = tmp_path / "sink.jsonl"
    kitchen_sink(path)
    return SessionManager.open(path, read_only=True)


@pytest.mark.parametrize(("mode", "expected"), [("default", SINK_DEFAULT), ("all", SINK_ALL)])
def test_several_roots_and_every_entry_kind(sink: SessionManager, mode: str, expected: str) -> None:
    model = model_of(sink, filter_mode=mode)
    assert screen(model, sink.get_leaf_id(), width=140) == block(expected)


def test_several_roots_no_tools_folds_and_jumps(sink: SessionManager) -> None:
    model = model_of(sink, filter_mode="no-tools")
    assert screen(model, sink.get_leaf_id(), width=140) == block(SINK_NO_TOOLS)
    # Roots are foldable; folded, their marker comes first.
    assert model.segment_left(model.index_of("u1")) == 7
    assert model.line(7, True) == "› ⊞ user: First root:  line two"
    assert model.segment_left(7) == 7  # a root is its own segment start
    assert model.segment_right(7) == 7
    assert model.segment_right(0) == 2  # down the chain to the first child of the branch point
    assert model.segment_right(2) == 5  # the chain end
    assert model.segment_left(5) == 2
    assert model.segment_left(6) == 0


def test_hidden_assistants_unless_leaf(sink: SessionManager) -> None:
    """Text-less assistant messages hide (tool-call only, thinking only) unless they are the leaf."""
    model = model_of(sink)
    assert model.index_of("a6") is None and model.index_of("e1") is None
    model.set_filter("all")
    assert model.index_of("a6") is None
    as_leaf = TreeModel(sink.get_tree(), "a6")
    row = as_leaf.rows[as_leaf.index_of("a6")]
    assert (row.text, row.on_path) == ("assistant: (no content)", True)
    assert as_leaf.rows[0].text == "user: Second root"  # still the branch holding the leaf first
    assert as_leaf.line(as_leaf.index_of("u4"), False) == "     ├⊟ • user: sibling of u3"
    assert as_leaf.line(as_leaf.index_of("u3"), False) == "     └⊟ user: after abort"


def test_tool_call_texts() -> None:
    assert format_tool_call("read", {"path": "a.py", "offset": 5}) == "[read: a.py:5]"
    assert format_tool_call("read", {"file_path": "b.py"}) == "[read: b.py]"
    assert format_tool_call("bash", {"command": "echo  hi"}) == "[bash: echo  hi]"
    assert format_tool_call("bash", {"command": "y" * 51}) == f"[bash: {'y' * 50}...]"
    assert format_tool_call("grep", {"pattern": "x"}) == "[grep: /x/ in .]"
    assert format_tool_call("edit", {}) == "[edit: ]"
    assert format_tool_call("other", {"k": "v"}) == '[other: {"k":"v"}]'


# ---------------------------------------------------------------------- scale


def write_chain(path: Path, count: int) -> None:
    """One root and a single chain of ``count`` alternating user/assistant entries."""
    header = {
        "type": "session",
        "version": 3,
        "id": "chain",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/tmp",
    }
    out = [json.dumps(header)]
    parent = None
    for number in range(count):
        stamp = f"2026-01-01T{number // 3600:02d}:{number // 60 % 60:02d}:{number % 60:02d}.000Z"
        if number % 2 == 0:
            message = {"role": "user", "content": f"question {number}", "timestamp": 1}
        else:
            message = {"role": "assistant", "content": [{"type": "text", "text": f"answer {number}"}]}
            message.update(api="x", provider="x", model="x", stopReason="stop", timestamp=1)
            message["usage"] = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
        entry = {
            "type": "message",
            "id": f"e{number}",
            "parentId": parent,
            "timestamp": stamp,
            "message": message,
        }
        out.append(json.dumps(entry))
        parent = f"e{number}"
    path.write_text("\n".join(out) + "\n")


def test_deep_chain_of_20000_entries(tmp_path: Path) -> None:
    """No recursion anywhere: a 20,000-long chain is 20,000 levels deep."""
    path = tmp_path / "chain.jsonl"
    write_chain(path, 20_000)
    manager = SessionManager.open(path, read_only=True)
    model = model_of(manager)
    last = len(model.rows) - 1
    assert last == 19_999
    assert model.index_of(manager.get_leaf_id()) == last
    assert model.line(0, False) == "  • user: question 0"
    assert model.line(last, True) == "› • assistant: answer 19999"
    assert model.counter(last) == "(20000/20000)"
    assert model.segment_right(0) == last
    assert model.segment_left(last) == 0
    model.set_filter("user-only")
    assert len(model.rows) == 10_000
    assert model.nearest_visible("e19999") == "e19998"
    model.set_search("question 1999")
    assert [row.text for row in model.rows] == [f"user: question {n}" for n in range(19990, 20000, 2)]
    model.set_search("")
    model.set_filter("default")
    assert model.segment_left(0) == 0  # the root folds: everything under it goes
    assert len(model.rows) == 1
    assert model.line(0, True) == "› ⊞ • user: question 0"


def test_rows_behave_like_a_read_only_list(tmp_path: Path) -> None:
    model = model_of(open_case("00-tree-label-summary", tmp_path))
    rows = model.rows
    assert len(rows) == 7
    assert rows[-1] is rows[6]
    assert [row.entry_id for row in rows[1:3]] == ["534ae071", "4f177391"]
    assert list(rows) == rows[:]
    assert rows == list(rows)
    assert rows.index(rows[3]) == 3
    with pytest.raises(IndexError):
        rows[7]


# ---------------------------------------------------------------------- as pi, on odd values
# (checked against pi's own code by tests/interop/test_tree_vs_pi.py; these need no node)


def test_rows_are_cut_in_terminal_columns_where_pi_cuts_them_marked_with_one_ellipsis() -> None:
    assert cut_to_width("  • user: short", 20) == "  • user: short"
    assert cut_to_width("  • user: " + "x" * 30, 20) == "  • user: xxxxxxxxx…"
    # wide characters take two columns: 19 columns of text at most, then "…"
    assert cut_to_width("  • user: 日本語のテキストです", 20) == "  • user: 日本語の…"
    # a combining accent and a joined emoji stay with the character before them (pi's
    # truncateToWidth keeps the same clusters, with "..." two columns earlier)
    assert cut_to_width("e\u0301" * 3 + "abcdef", 8) == "e\u0301" * 3 + "abcd…"
    assert cut_to_width("ab👨\u200d👩 cdefghij", 8) == "ab👨\u200d👩 cd…"
    assert cut_to_width("ab👨\u200d👩cdefghij", 7) == "ab👨\u200d👩cd…"


@pytest.mark.parametrize(
    ("tokens", "text"),
    [
        (48210, "[compaction: 48k tokens]"),
        (1500, "[compaction: 2k tokens]"),  # Math.round: halves go up
        ("12000", "[compaction: 12k tokens]"),  # Number("12000")
        ("many", "[compaction: NaNk tokens]"),
        (None, "[compaction: 0k tokens]"),
    ],
)
def test_compaction_tokens_are_printed_as_pi_prints_them(tokens: object, text: str) -> None:
    assert entry_text({"type": "compaction", "tokensBefore": tokens}) == text


def test_odd_entries_read_as_in_pi() -> None:
    assert entry_text({"type": "compaction"}) == "[compaction: NaNk tokens]"
    assert entry_text({"type": "thinking_level_change", "thinkingLevel": None}) == "[thinking: null]"
    assert entry_text({"type": "message", "message": {"role": 7, "content": "x"}}) == "[7]"
    assert entry_text({"type": "reset_boundary"}) == ""  # pi draws a type it does not know without text
