"""v1 and v2 files, written by hand from the format description, migrate to the same v3 tree."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.migrate import migrate_entries

T = "2025-06-01T10:00:0{}.000Z"

# The same conversation in both versions: a thinking change, a model change, two turns, a hook
# (custom) message, a compaction that keeps from the second user message, and one more turn.
V1 = [
    {"type": "session", "id": "sess-v1", "timestamp": T.format(0), "cwd": "/work/app"},
    {"type": "thinking_level_change", "timestamp": T.format(1), "thinkingLevel": "low"},
    {"type": "model_change", "timestamp": T.format(1), "provider": "anthropic", "modelId": "claude-x"},
    {
        "type": "message",
        "timestamp": T.format(2),
        "message": {"role": "user", "content": "first", "timestamp": 2},
    },
    {
        "type": "message",
        "timestamp": T.format(3),
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "one"}],
            "provider": "anthropic",
            "model": "claude-x",
            "stopReason": "stop",
            "timestamp": 3,
        },
    },
    {
        "type": "message",
        "timestamp": T.format(4),
        "message": {"role": "user", "content": "second", "timestamp": 4},
    },
    {
        "type": "message",
        "timestamp": T.format(5),
        "message": {
            "role": "hookMessage",
            "customType": "note",
            "content": "from a hook",
            "display": True,
            "timestamp": 5,
        },
    },
    {
        "type": "message",
        "timestamp": T.format(6),
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "two"}],
            "provider": "anthropic",
            "model": "claude-x",
            "stopReason": "stop",
            "timestamp": 6,
        },
    },
    # raw line index 5 = the "second" user message (header is line 0)
    {
        "type": "compaction",
        "timestamp": T.format(7),
        "summary": "talked",
        "firstKeptEntryIndex": 5,
        "tokensBefore": 1234,
    },
    {
        "type": "message",
        "timestamp": T.format(8),
        "message": {"role": "user", "content": "third", "timestamp": 8},
    },
]


def v2_lines() -> list[dict]:
    rows = [dict(V1[0], version=2)]
    previous = None
    ids = []
    for number, row in enumerate(V1[1:], start=1):
        entry_id = f"e{number:07d}"
        ids.append(entry_id)
        converted = {"type": row["type"], "id": entry_id, "parentId": previous}
        converted.update({k: v for k, v in row.items() if k != "type"})
        if "firstKeptEntryIndex" in converted:
            converted["firstKeptEntryId"] = ids[converted.pop("firstKeptEntryIndex") - 1]
        rows.append(converted)
        previous = entry_id
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def shape(manager: SessionManager) -> list[tuple]:
    """The tree with ids replaced by positions, to compare files whose ids differ."""
    entries = manager.get_entries()
    position = {entry.id: index for index, entry in enumerate(entries)}
    out = []
    for entry in entries:
        data = entry.to_json_dict()
        for key in ("id", "parentId", "firstKeptEntryId"):
            if key in data:
                data[key] = position.get(data[key])
        out.append(data)
    return out


def context_texts(manager: SessionManager) -> list[tuple[str, str]]:
    out = []
    for message in convert_to_llm(manager.build_session_context().messages):
        content = message.content
        out.append((message.role, content if isinstance(content, str) else content[0].text))
    return out


def test_v1_and_v2_migrate_to_the_same_v3_tree(tmp_path: Path) -> None:
    v1 = SessionManager.open(write(tmp_path / "v1.jsonl", V1))
    v2 = SessionManager.open(write(tmp_path / "v2.jsonl", v2_lines()))
    assert shape(v1) == shape(v2)
    assert (
        context_texts(v1)
        == context_texts(v2)
        == [
            (
                "user",
                "The conversation history before this point was compacted into the following summary:\n\n"
                "<summary>\ntalked\n</summary>",
            ),
            ("user", "second"),
            ("user", "from a hook"),
            ("assistant", "two"),
            ("user", "third"),
        ]
    )
    for manager in (v1, v2):
        header = manager.get_header()
        assert header.version == 3
        entries = manager.get_entries()
        assert entries[0].parent_id is None
        assert all(entries[i].parent_id == entries[i - 1].id for i in range(1, len(entries)))
        assert len({e.id for e in entries}) == len(entries) == 9
        hook = entries[5].message
        assert hook.role == "custom" and hook.custom_type == "note"
        compaction = entries[7]
        assert compaction.first_kept_entry_id == entries[4].id  # the "second" user message
        assert manager.build_session_context().thinking_level == "low"
        manager.close()


def test_migration_rewrites_atomically_keeps_backup_and_is_idempotent(tmp_path: Path) -> None:
    for version, rows in ((1, V1), (2, v2_lines())):
        path = write(tmp_path / f"s{version}.jsonl", rows)
        original = path.read_bytes()
        SessionManager.open(path).close()
        backup = path.with_name(f"{path.name}.v{version}.bak")
        assert backup.read_bytes() == original
        migrated = path.read_bytes()
        header = json.loads(migrated.splitlines()[0])
        assert header["version"] == 3 and header["id"] == "sess-v1"
        assert b"hookMessage" not in migrated and b"firstKeptEntryIndex" not in migrated
        # Twice: nothing changes, the backup is not replaced.
        SessionManager.open(path).close()
        assert path.read_bytes() == migrated
        assert backup.read_bytes() == original
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(path.name)) == [
            path.name,
            backup.name,
        ]


def test_migrate_entries_is_pure_and_idempotent() -> None:
    header = dict(V1[0])
    entries = [dict(row) for row in V1[1:]]
    assert migrate_entries(header, entries) is True
    snapshot = json.dumps([header, entries])
    assert migrate_entries(header, entries) is False
    assert json.dumps([header, entries]) == snapshot
    assert list(entries[0])[:3] == ["type", "id", "parentId"]


def test_read_only_open_migrates_in_memory_only(tmp_path: Path) -> None:
    path = write(tmp_path / "old.jsonl", V1)
    before = path.read_bytes()
    manager = SessionManager.open(path, read_only=True)
    assert manager.get_header().version == 3
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("*.bak"))
