"""Session files for the export tests: a branchy generated one, and one full of markup."""

from __future__ import annotations

import random
from pathlib import Path

from pi_tui.messages import ToolCall
from pi_tui.session import SessionManager
from tests.support.builders import assistant, tool_result, user

INJECTIONS = (
    "</script><script>window.__pwned = 1; alert(1)</script>",
    '<img src=x onerror="window.__pwned = 2; alert(2)">',
)


def branchy_session(folder: Path, project: Path, *, turns: int = 60, seed: int = 7) -> Path:
    """A session with many branches, labels, tool calls and a branch summary."""
    chooser = random.Random(seed)
    manager = SessionManager.create(str(project), folder)
    manager.append_session_info("Branchy demo session")
    ids: list[str] = []
    for turn in range(turns):
        if ids and turn % 7 == 6:
            manager.branch(chooser.choice(ids))
            if turn % 14 == 13:
                leaf = manager.get_leaf_id()
                assert leaf is not None
                manager.branch_with_summary(leaf, f"Summary of the path left at turn {turn}.")
        ids.append(manager.append_message(user(f"Question {turn}: how does **part {turn}** work?")))
        if turn % 3 == 0:
            call = ToolCall(id=f"call-{turn}", name="read", arguments={"path": f"src/part_{turn}.py"})
            manager.append_message(assistant(f"Reading part {turn}.", call, stop_reason="toolUse"))
            manager.append_message(tool_result(f"call-{turn}", f"def part_{turn}():\n    return {turn}\n"))
        code = f"```python\ndef part_{turn}():\n    return {turn}\n```"
        reply = manager.append_message(assistant(f"Part {turn} works like this:\n\n{code}"))
        ids.append(reply)
        if turn % 9 == 4:
            manager.append_label_change(reply, f"milestone-{turn}")
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def hostile_session(folder: Path, project: Path) -> Path:
    """Markup and script in every place a session can carry text."""
    manager = SessionManager.create(str(project), folder)
    first, second = INJECTIONS
    manager.append_session_info(f"name {first}")
    question = manager.append_message(user(f"user says {first} and {second}"))
    manager.append_label_change(question, f"label {second}")
    call = ToolCall(id="call-x", name="bash", arguments={"command": f"echo '{second}'"})
    manager.append_message(assistant(f"assistant says {second} and `{first}`", call, stop_reason="toolUse"))
    manager.append_message(tool_result("call-x", f"tool output {first}"))
    manager.append_custom_message_entry(f"kind{second}", f"custom says {first}", True)
    manager.append_message(assistant(f"[link](javascript:alert(3)) {first}"))
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def long_session(folder: Path, project: Path, *, turns: int) -> Path:
    """One long straight conversation of ``turns`` questions and answers of a few lines each."""
    manager = SessionManager.create(str(project), folder)
    for turn in range(turns):
        manager.append_message(user(f"Question {turn}\n" + "words " * (turn % 40)))
        lines = "\n".join(f"- point {n} of answer {turn}" for n in range(turn % 12))
        manager.append_message(assistant(f"Answer {turn}\n\n{lines}"))
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def rule_session(folder: Path, project: Path) -> Path:
    """A reply a TTSR rule cut (aborted, then the injection), the retry, and custom messages."""
    from pi_tui.ttsr.coordinator import INJECTION_TYPE, INTERRUPT_TEMPLATE, render
    from pi_tui.ttsr.model import Rule

    manager = SessionManager.create(str(project), folder)
    manager.append_message(user("Print the totals"))
    manager.append_message(assistant("Sure, I will use print(", stop_reason="aborted"))
    rule = Rule(
        name="no-print", content="Use the logger, never print().", path=None, source="test", priority=0
    )
    manager.append_custom_message_entry(
        INJECTION_TYPE, render(INTERRUPT_TEMPLATE, [rule], project), False, {"rules": ["no-print"]}
    )
    manager.append_ttsr_injection(["no-print"])
    manager.append_message(assistant("Sure, I will use log.info() for the totals."))
    manager.append_custom_message_entry("deploy-note", "Deployed **build 7** to staging.", True)
    manager.append_custom_message_entry("hidden-note", "SHOULD NOT BE SHOWN", False)
    manager.close()
    assert manager.session_file is not None
    return manager.session_file
