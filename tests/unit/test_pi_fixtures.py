"""Conformance with sessions written by the real pi 0.73 (tests/data/pi-sessions).

For each case: the file loads, its tree/labels/leaf/model/thinking state is right, and the
messages we would send for the last turn equal, role by role and text by text, the messages of
the last request pi actually sent (system prompt aside).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.messages import CompactionSummaryMessage, UserMessage
from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry, LabelEntry, MessageEntry
from tests.conftest import PI_SESSIONS
from tests.support.canonical import from_anthropic_request, from_llm_messages, from_openai_request

CASES = sorted(path.name for path in PI_SESSIONS.iterdir() if path.is_dir())
# Where the last request of a case was sent from (fork-clone continued its clone).
SESSION_OF_LAST_REQUEST = {"14-fork-clone": "clone.jsonl"}


def last_request(case: str) -> dict:
    lines = (PI_SESSIONS / case / "requests.jsonl").read_text().splitlines()
    return json.loads(lines[-1])


def open_case(case: str, tmp_path: Path, name: str = "session.jsonl") -> SessionManager:
    copy = tmp_path / name
    shutil.copy(PI_SESSIONS / case / name, copy)
    return SessionManager.open(copy)


def test_all_cases_present() -> None:
    assert len(CASES) == 10


@pytest.mark.parametrize("case", CASES)
def test_context_equals_last_pi_request(case: str, tmp_path: Path) -> None:
    manager = open_case(case, tmp_path, SESSION_OF_LAST_REQUEST.get(case, "session.jsonl"))
    assert manager.warnings == []
    # The file ends with the reply to the last request: the request was built at its parent.
    leaf = manager.get_leaf_entry()
    assert isinstance(leaf, MessageEntry) and leaf.message.role == "assistant"
    manager.branch(leaf.parent_id)

    request = last_request(case)
    is_anthropic = "system" in request and isinstance(request["system"], list)
    api = "anthropic-messages" if is_anthropic else "openai-completions"
    expected = from_anthropic_request(request) if is_anthropic else from_openai_request(request)

    ours = from_llm_messages(convert_to_llm(manager.build_session_context().messages), api)
    assert [m["role"] for m in ours] == [m["role"] for m in expected]
    assert ours == expected
    manager.close()


@pytest.mark.parametrize("case", CASES)
def test_model_and_thinking_state(case: str, tmp_path: Path) -> None:
    manager = open_case(case, tmp_path)
    context = manager.build_session_context()
    if case == "04-thinking-anthropic":
        assert (context.model.provider, context.model.model_id) == ("fakeant", "fake-claude")
        assert context.thinking_level == "high"
    elif case == "21-images":
        assert (context.model.provider, context.model.model_id) == ("fake", "fake-vision")
        assert context.thinking_level == "off"
    else:
        assert (context.model.provider, context.model.model_id) == ("fake", "fake-model")
        assert context.thinking_level == "off"
    assert context.injected_ttsr_rules == []
    assert manager.get_session_name() is None
    # Leaf = last line of the file, as in pi.
    last_line = json.loads((PI_SESSIONS / case / "session.jsonl").read_text().splitlines()[-1])
    assert manager.get_leaf_id() == last_line["id"]
    manager.close()


def test_label_and_branch_summary_tree(tmp_path: Path) -> None:
    manager = open_case("00-tree-label-summary", tmp_path)
    assert manager.get_label("534ae071") == "checkpoint-1"
    assert manager.get_label_timestamp("534ae071") == "2026-11-21T20:10:17.279Z"
    children = [entry.id for entry in manager.get_children("534ae071")]
    assert children == ["80e4a600", "4f177391"]  # the old reply, then the branch summary
    summary = manager.get_entry("4f177391")
    assert isinstance(summary, BranchSummaryEntry) and summary.from_id == "534ae071"
    label = manager.get_entry("0b23e0d8")
    assert isinstance(label, LabelEntry) and label.parent_id == "3bb9d03c"  # written under the old leaf

    (root,) = manager.get_tree()
    assert root.id == "f91eb16d"
    node = root
    while len(node.children) == 1:
        node = node.children[0]
    assert node.id == "534ae071" and node.label == "checkpoint-1"
    assert [child.id for child in node.children] == ["80e4a600", "4f177391"]

    path_ids = [entry.id for entry in manager.get_branch()]
    assert path_ids == ["f91eb16d", "d0762130", "e10c5c3e", "534ae071", "4f177391", "f66b4295", "e293ba8e"]
    manager.close()


@pytest.mark.parametrize("case", ["05-tree-branch-nosummary", "06-tree-branch-summary"])
def test_in_file_branching(case: str, tmp_path: Path) -> None:
    manager = open_case(case, tmp_path)
    branch_points = [
        raw["id"] for raw in manager.iter_raw_entries() if len(manager.get_children(raw["id"])) > 1
    ]
    assert len(branch_points) == 1
    abandoned = {raw["id"] for raw in manager.iter_raw_entries()} - {e.id for e in manager.get_branch()}
    assert abandoned  # the abandoned branch is still in the file and tree, just not on the path
    context_ids = {id(m) for m in manager.build_session_context().messages}
    assert len(context_ids) < len(manager)
    manager.close()


def test_compaction_context(tmp_path: Path) -> None:
    manager = open_case("08-manual-compact", tmp_path)
    compaction = next(e for e in manager.get_entries() if isinstance(e, CompactionEntry))
    assert compaction.first_kept_entry_id == "3c773577" and compaction.tokens_before == 112
    messages = manager.build_session_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage)
    assert messages[0].summary == compaction.summary
    first_kept = messages[1]
    assert isinstance(first_kept, UserMessage) and first_kept.content[0].text.startswith("Here is my plan")
    manager.close()


def test_fork_and_clone_headers(tmp_path: Path) -> None:
    for name, parent in (("fork.jsonl", "01a1ffc3-ada1"), ("clone.jsonl", "01a1ffc3-db83")):
        manager = SessionManager.open(PI_SESSIONS / "14-fork-clone" / name, read_only=True)
        header = manager.get_header()
        assert parent in (header.parent_session or "")
        # Copied entries keep their ids and parents: the fork's root is the original's root.
        assert manager.get_branch()[0].id == "e983d77a"


def test_open_does_not_modify_pi_files(tmp_path: Path) -> None:
    for case in CASES:
        copy = tmp_path / f"{case}.jsonl"
        shutil.copy(PI_SESSIONS / case / "session.jsonl", copy)
        before = copy.read_bytes()
        manager = SessionManager.open(copy)
        manager.build_session_context()
        manager.get_tree()
        manager.close()
        assert copy.read_bytes() == before
