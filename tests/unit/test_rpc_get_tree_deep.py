"""rpc ``get_tree`` on a long session: the tree nests two JSON levels per entry, far past what a
recursive encoder takes (orjson stops at 255), so it is written without recursion."""

from __future__ import annotations

import json
import sys

from pi_tui import jsonio
from pi_tui.messages import UserMessage
from pi_tui.modes.rpc_commands_pi1 import tree_fragment
from pi_tui.session import SessionManager


def test_a_20000_entry_chain_is_one_valid_nested_tree() -> None:
    manager = SessionManager.in_memory("/tmp")
    for number in range(20_000):
        manager.append_message(UserMessage(content=f"m{number}", timestamp=number))
    manager.append_label_change(manager.get_leaf_id() or "", "the end")
    line = jsonio.dumps({"tree": tree_fragment(manager), "leafId": manager.get_leaf_id()})
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200_000)  # the reader's concern: Python's json parser recurses
    try:
        data = json.loads(line)
    finally:
        sys.setrecursionlimit(old_limit)
    (node,) = data["tree"]
    texts = []
    labelled = None
    while True:
        entry = node["entry"]
        if entry["type"] == "message":
            texts.append(entry["message"]["content"])
            if "label" in node:
                labelled = (node["label"], isinstance(node.get("labelTimestamp"), str))
        if not node["children"]:
            break
        (node,) = node["children"]
    assert texts == [f"m{number}" for number in range(20_000)]
    assert labelled == ("the end", True)
