"""``pi-tui import``: another agent's transcript as a pi session of this folder, kept in step.

The source is only ever read. The session it becomes lives in this folder's sessions under a
name derived from the source, and ``<agent dir>/imports.json`` remembers, per source file, its
inode, how many bytes were imported and into which session. Importing again converts the whole
source (entry ids come from the source's ids, so the result is the same each time) and appends
only the entries the session does not hold yet: what the source gained. A source that was
truncated or replaced (another inode, or shorter than before) is read from the start into a new
session, never appended to the old one twice.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.config.private_files import replace_private_file
from pi_tui.session.entries import CURRENT_SESSION_VERSION, UnreadableEntry, typed_entry
from pi_tui.session.ids import file_stamp, iso_now
from pi_tui.session.store import SessionFileWriter
from pi_tui.transcripts.claude import convert_claude
from pi_tui.transcripts.codex import convert_codex
from pi_tui.transcripts.common import Converted, append_order, entry_id
from pi_tui.transcripts.gemini import convert_gemini

STATE_FILE = "imports.json"
_NAMESPACE = uuid.UUID("6f3c1e2a-52b8-4c55-9d7e-0a7d2b6c9e41")
AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


class TranscriptImportError(Exception):
    """A transcript that cannot be imported: one line for the user."""


@dataclass(slots=True)
class ImportResult:
    session: Path
    added: int
    new_session: bool
    converted: Converted
    invalid: int = 0
    """Converted entries pi could not read, left out (should stay 0)."""


def detect_agent(path: Path, head: bytes) -> str:
    """Which agent wrote ``path``, from its first lines (read whole: a first line longer than
    ``head``, a huge or unreadable one, does not hide the lines after it)."""
    first = head.lstrip()[:1]
    if first == b"{" and (b'"projectHash"' in head[:4096] or path.suffix == ".json"):
        return "gemini"
    for line in _first_lines(path, 20):
        try:
            record = jsonio.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if "payload" in record or "record_type" in record or "instructions" in record:
            return "codex"
        if "parentUuid" in record or "sessionId" in record or record.get("type") in _CLAUDE_TYPES:
            return "claude-code"
    raise TranscriptImportError(f"{path}: not a transcript pi-tui knows (Claude Code, Codex or Gemini CLI)")


def _first_lines(path: Path, count: int) -> list[bytes]:
    """The first ``count`` lines of ``path``; a line longer than :data:`_LINE_CAP` counts as an
    empty one (it is skipped as unreadable when the file is converted)."""
    lines: list[bytes] = []
    with contextlib.suppress(OSError), path.open("rb") as stream:
        while len(lines) < count:
            line = stream.readline(_LINE_CAP)
            if not line:
                break
            if not line.endswith(b"\n") and len(line) == _LINE_CAP:
                while (rest := stream.readline(_LINE_CAP)) and not rest.endswith(b"\n"):
                    pass
                line = b""
            lines.append(line)
    return lines


_LINE_CAP = 1 << 22


_CLAUDE_TYPES = frozenset({"summary", "file-history-snapshot", "user", "assistant", "queue-operation"})


def convert(agent: str, source: Path, fallback_time: str) -> Converted:
    """Convert a transcript file; JSONL is read line by line (a legacy Gemini .json is one
    document and is read whole)."""
    if agent == "gemini":
        return convert_gemini(source.read_bytes(), fallback_time=fallback_time)
    with source.open("rb") as stream:
        if agent == "codex":
            return convert_codex(stream, fallback_time=fallback_time)
        return convert_claude(stream, fallback_time=fallback_time)


def _state(agent_dir: Path) -> dict[str, Any]:
    try:
        data = jsonio.loads((agent_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(agent_dir: Path, state: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    replace_private_file(agent_dir / STATE_FILE, json.dumps(state, indent=2, sort_keys=True) + "\n")


def _session_entries(path: Path) -> set[str]:
    ids: set[str] = set()
    with contextlib.suppress(OSError), path.open("rb") as stream:
        for line in stream:
            with contextlib.suppress(ValueError):
                record = jsonio.loads(line)
                if (
                    isinstance(record, dict)
                    and isinstance(record.get("id"), str)
                    and record.get("type") != "session"
                ):
                    ids.add(record["id"])
    return ids


def import_transcript(source: Path, cwd: str, sessions_dir: Path, agent_dir: Path) -> ImportResult:
    """Import ``source`` (or what it gained since the last import) into this folder's sessions."""
    source = source.expanduser().resolve()
    try:
        info = source.stat()
        with source.open("rb") as stream:
            head = stream.read(65536)
    except OSError as error:
        raise TranscriptImportError(f"Cannot read {source}: {error.strerror or error}") from None
    agent = detect_agent(source, head)
    state = _state(agent_dir)
    key = str(source)
    known = state.get(key) if isinstance(state.get(key), dict) else None
    target = Path(known["session"]) if known and isinstance(known.get("session"), str) else None
    generation = int(known.get("generation", 0)) if known else 0
    replaced = known is not None and (
        known.get("inode") != info.st_ino
        or known.get("device") != info.st_dev
        or info.st_size < int(known.get("offset", 0))
    )
    if replaced or (target is not None and not target.exists()):
        target, generation = None, generation + 1
    started = iso_now()
    try:
        converted = convert(agent, source, started)
    except OSError as error:
        raise TranscriptImportError(f"Cannot read {source}: {error.strerror or error}") from None
    session_id = str(uuid.uuid5(_NAMESPACE, f"{agent}:{converted.session_id or key}:{generation}"))
    lead = _lead_entries(converted, source, agent, session_id)
    entries = append_order([*lead, *converted.entries], converted.leaf)
    written = _session_entries(target) if target is not None else set()
    fresh = [entry for entry in entries if entry["id"] not in written]
    valid = [entry for entry in fresh if not isinstance(typed_entry(entry), UnreadableEntry)]
    invalid = len(fresh) - len(valid)
    added = len(valid)
    new_session = target is None
    if new_session:
        header = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": converted.started,
            "cwd": cwd,
        }
        parent = _imported_session_of(state, converted.forked_from)
        if parent is not None:
            header["parentSession"] = parent  # a Codex fork links to its imported original
        target = sessions_dir / f"{file_stamp(converted.started)}_{session_id}.jsonl"
        valid = [header, *valid]
    if valid:
        writer = SessionFileWriter(target)
        try:
            writer.open()
            writer.append(valid)
            writer.sync()
        finally:
            writer.close()
    state[key] = {
        "agent": agent,
        "inode": info.st_ino,
        "device": info.st_dev,
        "offset": info.st_size,
        "session": str(target),
        "generation": generation,
        "sourceId": converted.session_id,
    }
    _save_state(agent_dir, state)
    return ImportResult(target, added, new_session, converted, invalid)


def _imported_session_of(state: dict[str, Any], source_id: str | None) -> str | None:
    if not source_id:
        return None
    for record in state.values():
        if (
            isinstance(record, dict)
            and record.get("sourceId") == source_id
            and isinstance(record.get("session"), str)
        ):
            return record["session"]
    return None


def _lead_entries(converted: Converted, source: Path, agent: str, session_id: str) -> list[dict[str, Any]]:
    """A name for the session and a record of where it came from, at the root; the converted
    roots hang below them."""
    name = AGENT_NAMES.get(agent, agent)
    first = next(
        (
            block.get("text", "")
            for entry in converted.entries
            if entry["type"] == "message" and entry["message"]["role"] == "user"
            for block in entry["message"]["content"]
            if block.get("type") == "text" and block.get("text", "").strip()
        ),
        "",
    )
    title = (converted.title or " ".join(first.split())[:80] or source.stem).strip()
    info_id = entry_id(agent, f"{session_id}:info")
    source_id = entry_id(agent, f"{session_id}:source")
    for entry in converted.entries:
        if entry.get("parentId") is None:
            entry["parentId"] = source_id
    return [
        {
            "type": "session_info",
            "id": info_id,
            "parentId": None,
            "timestamp": converted.started,
            "name": f"{title} ({name})",
        },
        {
            "type": "custom",
            "id": source_id,
            "parentId": info_id,
            "timestamp": converted.started,
            "customType": "import-source",
            "data": {
                "agent": agent,
                "path": str(source),
                "sessionId": converted.session_id,
                "cwd": converted.cwd,
            },
        },
    ]


def import_summary(result: ImportResult) -> str:
    counts = result.converted.counts
    parts = [
        f"{counts.get('users', 0)} user and {counts.get('assistants', 0)} assistant messages",
        f"{counts.get('paired', 0)} of {counts.get('tool_calls', 0)} tool calls with their results",
    ]
    if counts.get("compactions"):
        parts.append(f"{counts['compactions']} compactions")
    if counts.get("custom"):
        parts.append(f"{counts['custom']} other records kept")
    if counts.get("skipped"):
        parts.append(f"{counts['skipped']} unreadable lines skipped")
    return ", ".join(parts)
