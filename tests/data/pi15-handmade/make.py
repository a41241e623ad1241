"""Writes the hand-made pi 1.x session files of this folder (run from the repository root:
``python tests/data/pi15-handmade/make.py``). Each file holds one pi 1.x entry kind or field
(docs/session-format.md of pi 1.5.2) on the same small conversation; see README.md.

The texts, ids and tool declarations are our own; the header's ``cwd`` is :data:`CWD`, which the
tests replace with their project folder.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CWD = "/tmp/pi15-handmade-project"
START = 1_795_000_000_000
"""Message timestamps (ms) count up from here, one second per entry."""


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(properties),
        "properties": {name: {"type": "string", "description": text} for name, text in properties.items()},
    }


TOOLS = {
    "read": {"name": "read", "description": "Shows a file.", "parameters": _schema(path="File to show")},
    "bash": {
        "name": "bash",
        "description": "Runs a shell command.",
        "parameters": _schema(command="The command"),
    },
    "edit": {
        "name": "edit",
        "description": "Changes part of a file.",
        "parameters": _schema(path="File to change", oldText="Text to find", newText="Its replacement"),
    },
    "write": {
        "name": "write",
        "description": "Writes a whole file.",
        "parameters": _schema(path="File to write", content="What it holds"),
    },
}


class Session:
    """Entries appended in order; each new entry's parent is the leaf unless told."""

    def __init__(
        self, name: str, *, full_uuids: bool = False, model: tuple[str, str] = ("loop", "m")
    ) -> None:
        self.name = name
        self.full_uuids = full_uuids
        self.count = 0
        self.leaf: str | None = None
        self.lines: list[dict[str, Any]] = []
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"pi-tui/pi15-handmade/{name}"))
        self.lines.append(
            {"type": "session", "version": 3, "id": session_id, "timestamp": self.iso(0), "cwd": CWD}
        )
        self.model = model

    def iso(self, n: int) -> str:
        seconds = START // 1000 + n
        import datetime

        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def new_id(self) -> str:
        if self.full_uuids:
            return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pi-tui/pi15-handmade/{self.name}/{self.count}"))
        return f"{0xA0000000 + self.count:08x}"

    def add(self, entry_type: str, parent: str | bool | None = True, **fields: Any) -> str:
        self.count += 1
        entry_id = self.new_id()
        parent_id = self.leaf if parent is True else parent
        self.lines.append(
            {
                "type": entry_type,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": self.iso(self.count),
                **fields,
            }
        )
        self.leaf = entry_id
        return entry_id

    def ms(self) -> int:
        return START + 1000 * (self.count + 1)

    # messages
    def system(self, **fields: Any) -> str:
        return self.add(
            "message", message={"role": "system", "content": "", **fields, "timestamp": self.ms()}
        )

    def user(self, text: str | list[dict[str, Any]], parent: str | bool | None = True) -> str:
        content = [{"type": "text", "text": text}] if isinstance(text, str) else text
        return self.add(
            "message", parent, message={"role": "user", "content": content, "timestamp": self.ms()}
        )

    def assistant(
        self, text: str = "", *calls: tuple[str, str, dict[str, Any]], thinking: str = "off"
    ) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in calls]
        provider, model = self.model
        return self.add(
            "message",
            message={
                "role": "assistant",
                "content": content,
                "api": "openai-completions",
                "provider": provider,
                "model": model,
                "usage": usage(120, 30),
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": self.ms(),
                "durationMs": 250,
                "thinkingLevel": thinking,
            },
        )

    def tool_result(self, call_id: str, name: str, text: str) -> str:
        return self.add(
            "message",
            message={
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": False,
                "durationMs": 5,
                "timestamp": self.ms(),
            },
        )

    def write(self) -> Path:
        path = HERE / f"{self.name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def usage(input: int, output: int, cache_read: int = 0) -> dict[str, Any]:
    cost = {"input": input * 3e-6, "output": output * 15e-6, "cacheRead": cache_read * 3e-7, "cacheWrite": 0}
    cost["total"] = sum(cost.values())
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": 0,
        "totalTokens": input + output + cache_read,
        "cost": cost,
    }


def base(session: Session, *, thinking: str = "off", until: str = "a4") -> dict[str, str]:
    """The conversation every file starts with, up to the entry ``until``; its entry ids."""
    session.add("model_change", provider=session.model[0], modelId=session.model[1])
    session.add("thinking_level_change", thinkingLevel=thinking)
    ids = {
        "system": session.system(
            sections={"preamble": "A hand-made preamble.", "cwd": f"<cwd>\n{CWD}\n</cwd>"},
            toolsAdded=[TOOLS[name] for name in ("read", "bash", "edit", "write")],
        )
    }
    steps: list[tuple[str, Any]] = [
        ("u1", lambda: session.user("Please read the README.")),
        (
            "a1",
            lambda: session.assistant(
                "I will read it.", ("call_1", "read", {"path": "README.md"}), thinking=thinking
            ),
        ),
        ("t1", lambda: session.tool_result("call_1", "read", "# Demo\n\nA tiny demo project.\n")),
        ("a2", lambda: session.assistant("It is a tiny demo.", thinking=thinking)),
        (
            "c1",
            lambda: session.add(
                "custom_message", customType="deploy-note", content="Build 42 deployed.", display=True
            ),
        ),
        ("u2", lambda: session.user("Now list the files.")),
        ("a3", lambda: session.assistant("", ("call_2", "bash", {"command": "ls"}), thinking=thinking)),
        ("t2", lambda: session.tool_result("call_2", "bash", "README.md\n")),
        ("a4", lambda: session.assistant("One file: README.md.", thinking=thinking)),
    ]
    for key, step in steps:
        ids[key] = step()
        if key == until:
            break
    return ids
    ids["a1"] = session.assistant(
        "I will read it.", ("call_1", "read", {"path": "README.md"}), thinking=thinking
    )
    if until == "a1":
        return ids
    ids["t1"] = session.tool_result("call_1", "read", "# Demo\n\nA tiny demo project.\n")
    if until == "t1":
        return ids
    ids["a2"] = session.assistant("It is a tiny demo.", thinking=thinking)
    if until == "a2":
        return ids
    ids["c1"] = session.add(
        "custom_message", customType="deploy-note", content="Build 42 deployed.", display=True
    )
    ids["u2"] = session.user("Now list the files.")
    if until == "u2":
        return ids
    ids["a3"] = session.assistant("", ("call_2", "bash", {"command": "ls"}), thinking=thinking)
    if until == "a3":
        return ids
    ids["t2"] = session.tool_result("call_2", "bash", "README.md\n")
    if until == "t2":
        return ids
    ids["a4"] = session.assistant("One file: README.md.", thinking=thinking)
    return ids


def edit(session: Session, target: str, replacement: Any) -> str:
    body = None if replacement is None else {"content": replacement}
    return session.add("context_edit", targetId=target, replacement=body)


def context_edit_omit() -> Session:
    """``replacement: null`` on a user message, an assistant message, a tool result and a
    custom message: none of them reaches the model (the tool call keeps its slot)."""
    s = Session("context-edit-omit")
    ids = base(s)
    for key in ("u2", "a2", "t1", "c1"):
        edit(s, ids[key], None)
    return s


def context_edit_replace_string() -> Session:
    """String replacements (assistant and tool results become one text block)."""
    s = Session("context-edit-replace-string")
    ids = base(s)
    edit(s, ids["u1"], "Please read README.md (edited).")
    edit(s, ids["a2"], "An edited reply.")
    edit(s, ids["t2"], "README.md\nNOTES.md\n")
    edit(s, ids["c1"], "Build 43 deployed.")
    return s


def context_edit_replace_blocks() -> Session:
    """Block-array replacements, two text blocks where the original held one."""
    s = Session("context-edit-replace-blocks")
    ids = base(s)
    edit(
        s, ids["u2"], [{"type": "text", "text": "List the files,"}, {"type": "text", "text": "all of them."}]
    )
    edit(s, ids["a4"], [{"type": "text", "text": "Files: "}, {"type": "text", "text": "README.md only."}])
    edit(s, ids["t1"], [{"type": "text", "text": "# Edited demo\n"}, {"type": "text", "text": "(cut)\n"}])
    return s


def context_edit_latest_on_branch() -> Session:
    """Several edits of one target: the latest on the active branch wins; an edit on an abandoned
    branch does not count (edits are branch-relative)."""
    s = Session("context-edit-latest-on-branch")
    ids = base(s)
    edit(s, ids["u1"], "Abandoned branch's edit.")
    s.user("A question on the abandoned branch.")
    s.assistant("An answer on the abandoned branch.")
    s.leaf = ids["a4"]
    edit(s, ids["t1"], "First edit of the README result.")
    edit(s, ids["t1"], None)
    edit(s, ids["t1"], "Latest edit of the README result.")
    return s


def system_tools_removed() -> Session:
    """pi removed ``write`` later in the session: the branch goes on without it."""
    s = Session("system-tools-removed")
    base(s)
    s.system(toolsRemoved=[{"name": "write"}])
    s.user("Carry on without writing.")
    s.assistant("Understood.")
    return s


def system_content() -> Session:
    """A system message whose ``content`` the user supplied."""
    s = Session("system-content")
    base(s, until="a2")
    s.system(content="Always answer in French.")
    s.user("Now list the files.")
    s.assistant("Un fichier : README.md.")
    return s


def usage_entries() -> Session:
    """``usage`` entries (a known and an unknown kind) between messages: no context of their own."""
    s = Session("usage-entries")
    base(s, until="a2")
    s.add("usage", kind="cache_warm", provider="loop", model="m", usage=usage(0, 0, 50_000))
    s.user("Now list the files.")
    s.assistant("One file: README.md.")
    s.add("usage", kind="some_future_kind", provider="loop", model="m", usage=usage(700, 40))
    return s


def compaction_retain_none() -> Session:
    """A compaction that keeps nothing before it (``firstKeptEntryId`` is its own id), carrying
    the system checkpoint (only read and bash) and the summary's usage."""
    s = Session("compaction-retain-none")
    base(s)
    s.count += 1
    own = s.new_id()
    s.count -= 1
    compaction = s.add(
        "compaction",
        summary="## Goal\nExplore the demo project.\n\n## Done\nRead README.md; one file.",
        firstKeptEntryId=own,
        tokensBefore=1234,
        systemMessage={
            "role": "system",
            "content": "",
            "sections": {"preamble": "A hand-made preamble.", "cwd": f"<cwd>\n{CWD}\n</cwd>"},
            "toolsAdded": [TOOLS["read"], TOOLS["bash"]],
            "timestamp": s.ms(),
        },
        usage=usage(900, 80),
        details={"readFiles": ["README.md"], "modifiedFiles": []},
    )
    assert compaction == own
    s.user("What next after the summary?")
    s.assistant("Whatever you like.")
    return s


def summaries_with_usage() -> Session:
    """A branch summary whose ``fromId`` is the abandoned leaf (pi 0.84.3 on) with ``usage``,
    then a compaction keeping the recent entries, with ``usage`` and a ``systemMessage``."""
    s = Session("summaries-with-usage")
    ids = base(s)
    s.user("Try a detour.")
    abandoned = s.assistant("A detour that went nowhere.")
    s.leaf = ids["a4"]
    s.add(
        "branch_summary",
        fromId=abandoned,
        summary="The user tried a detour; it went nowhere.",
        usage=usage(300, 20),
        details={"readFiles": [], "modifiedFiles": []},
    )
    kept = s.user("Back on track: what does the README say?")
    s.assistant("It says: a tiny demo project.")
    s.add(
        "compaction",
        summary="## Goal\nExplore the demo project.",
        firstKeptEntryId=kept,
        tokensBefore=2345,
        systemMessage={
            "role": "system",
            "content": "",
            "sections": {"preamble": "A hand-made preamble."},
            "toolsAdded": [TOOLS[name] for name in ("read", "bash", "edit", "write")],
            "timestamp": s.ms(),
        },
        usage=usage(800, 60),
    )
    s.user("And after the compaction?")
    s.assistant("All is well.")
    return s


def thinking_max() -> Session:
    """The thinking level set to pi 1.x's ``max`` (a reasoning model)."""
    s = Session("thinking-max")
    base(s, thinking="high")
    s.add("thinking_level_change", thinkingLevel="max")
    return s


def full_uuid_ids() -> Session:
    """Every entry id a full UUID (pi's fallback), with a label and a context edit naming them."""
    s = Session("full-uuid-ids", full_uuids=True)
    ids = base(s)
    s.add("label", targetId=ids["a2"], label="checkpoint")
    edit(s, ids["t2"], "README.md\nLICENSE\n")
    s.add("session_info", name="UUID demo")
    return s


FILES = [
    context_edit_omit,
    context_edit_replace_string,
    context_edit_replace_blocks,
    context_edit_latest_on_branch,
    system_tools_removed,
    system_content,
    usage_entries,
    compaction_retain_none,
    summaries_with_usage,
    thinking_max,
    full_uuid_ids,
]

if __name__ == "__main__":
    for make in FILES:
        print(make().write().relative_to(HERE))
