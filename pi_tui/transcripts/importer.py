"""``pi-tui import``: another agent's transcript as a pi session of this folder, kept in step.

The source is only ever read. The session it becomes lives in this folder's sessions under a
name derived from the source, and ``<agent dir>/imports.json`` remembers, per source file, its
inode, how many bytes were imported and into which session. Importing again converts the whole
source (entry ids come from the source's ids, so the result is the same each time) and appends
only the entries the session does not hold yet: what the source gained. A source that was
truncated or replaced (another inode, or shorter than before) is read from the start into a new
session, never appended to the old one twice.

A second source file with the same session id (a copy of a transcript, or another machine's)
becomes a session of its own, never entries appended to the first one's file: the two are
followed and re-imported separately (each by its own inode and size), and the same source id
with other content in each could not be one entry of one tree. A session file always has one
header and unique entry ids.

Claude Code sub-agents: a sub-agent's file imported on its own is its own conversation; when a
session is imported, the sub-agent files next to it (``<session id>/subagents/agent-*.jsonl``,
or older ``agent-*.jsonl`` in the same folder whose ``sessionId`` names it) are attached as
branches from the ``Task`` call that started each one.
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
from pi_tui.transcripts.common import Converted, append_order, break_cycles, entry_id
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

    @property
    def warnings(self) -> list[str]:
        return self.converted.warnings


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
    document and is read whole). Cycles of parent links are cut (with a warning); a Claude Code
    session gets its sub-agents' files as branches."""
    if agent == "gemini":
        converted = convert_gemini(source.read_bytes(), fallback_time=fallback_time)
    elif agent == "codex":
        with source.open("rb") as stream:
            converted = convert_codex(stream, fallback_time=fallback_time)
    else:
        converted = _convert_claude_file(source, fallback_time)
        if converted.sub_agent is None:
            _attach_sub_agents(converted, source, fallback_time)
    _cut_cycles(converted, converted.entries)
    return converted


def _convert_claude_file(source: Path, fallback_time: str) -> Converted:
    """A Claude Code file; one whose every line is a sidechain is a sub-agent's conversation
    (read again as such: there is no other way to tell before the end)."""
    with source.open("rb") as stream:
        converted = convert_claude(stream, fallback_time=fallback_time)
    conversation = any(entry["type"] in ("message", "compaction") for entry in converted.entries)
    if conversation or not converted.counts.get("sidechain"):
        return converted
    with source.open("rb") as stream:
        converted = convert_claude(stream, fallback_time=fallback_time, sidechain=True)
    if converted.sub_agent is None:
        converted.sub_agent = source.stem.removeprefix("agent-")
    converted.forked_from = converted.session_id or None  # the session that ran it
    return converted


def _cut_cycles(converted: Converted, entries: list[dict[str, Any]]) -> None:
    cut = break_cycles(entries)
    if cut:
        converted.warnings.append(
            f"the parent links of {len(cut)} group(s) of entries went round in a circle; each "
            "was cut at its earliest line, which now starts a branch (every message is kept)"
        )


def sub_agent_files(source: Path, session_id: str) -> list[Path]:
    """The sub-agent files of the Claude Code session ``source``: ``<stem>/subagents/agent-*.jsonl``
    (Claude Code 2.1), or ``agent-*.jsonl`` beside it whose lines name ``session_id`` (older)."""
    found = sorted((source.parent / source.stem / "subagents").glob("agent-*.jsonl"))
    if session_id:
        for path in sorted(source.parent.glob("agent-*.jsonl")):
            for line in _first_lines(path, 5):
                try:
                    record = jsonio.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and "sessionId" in record:
                    if record["sessionId"] == session_id:
                        found.append(path)
                    break
    return [path for path in found if path.is_file() and path.resolve() != source]


def _attach_sub_agents(converted: Converted, source: Path, fallback_time: str) -> None:
    """Each sub-agent file's conversation as a branch from the call that started it: the
    ``Task`` / ``Agent`` call whose result names the agent id, else the one whose prompt is the
    sub-agent's first prompt, else (no call found) from the import's source entry. Its entry
    ids are derived from the agent id too, so they never meet the session's own."""
    taken = {entry["id"] for entry in converted.entries}
    for path in sub_agent_files(source, converted.session_id):
        try:
            with path.open("rb") as stream:
                sub = convert_claude(stream, fallback_time=fallback_time, sidechain=True)
        except OSError as error:
            converted.warnings.append(f"{path}: not read ({error.strerror or error})")
            continue
        if not sub.entries:
            continue
        agent_id = sub.sub_agent or path.stem.removeprefix("agent-")
        renamed = {entry["id"]: entry_id(AGENT_PREFIX + agent_id, entry["id"]) for entry in sub.entries}
        for entry in sub.entries:
            entry["id"] = renamed[entry["id"]]
            parent = entry.get("parentId")
            entry["parentId"] = renamed.get(parent) if isinstance(parent, str) else None
            if entry["type"] == "compaction":
                entry["firstKeptEntryId"] = renamed.get(entry["firstKeptEntryId"], entry["id"])
        _cut_cycles(converted, sub.entries)
        call = converted.agent_calls.get(agent_id) or converted.prompt_calls.get(_first_prompt(sub) or "")
        start = converted.call_entries.get(call or "")
        for entry in sub.entries:
            if entry["parentId"] is None:
                entry["parentId"] = start
        fresh = [entry for entry in sub.entries if entry["id"] not in taken]
        taken.update(entry["id"] for entry in fresh)
        converted.entries.extend(fresh)
        for what, number in sub.counts.items():
            if what != "sidechain":
                converted.count(what, number)
        converted.count("sub_agents")


AGENT_PREFIX = "claude-code/agent-"


def _first_prompt(converted: Converted) -> str | None:
    for entry in converted.entries:
        if entry["type"] == "message" and entry["message"]["role"] == "user":
            return "".join(
                block.get("text", "") for block in entry["message"]["content"] if block.get("type") == "text"
            )
    return None


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
    base = f"{agent}:{converted.session_id or key}"
    if converted.sub_agent:
        base += f":agent-{converted.sub_agent}"
    if target is not None:
        session_id = _known_id(known, target, base, generation)
    else:
        session_id, target = _new_session_id(state, key, base, generation, sessions_dir, source)
    lead = _lead_entries(converted, source, agent, session_id)
    entries = append_order([*lead, *converted.entries], converted.leaf)
    written = _session_entries(target) if target is not None else set()
    fresh = [entry for entry in entries if entry["id"] not in written]
    valid = [entry for entry in fresh if not isinstance(typed_entry(entry), UnreadableEntry)]
    invalid = len(fresh) - len(valid)
    added = len(valid)
    new_session = target is None
    if target is None:
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
        "importId": session_id,
    }
    _save_state(agent_dir, state)
    return ImportResult(target, added, new_session, converted, invalid)


def _known_id(known: dict[str, Any] | None, target: Path, base: str, generation: int) -> str:
    """The session id of an earlier import of this source (recorded, or as it was derived)."""
    if known is not None and isinstance(known.get("importId"), str):
        return str(known["importId"])
    return str(uuid.uuid5(_NAMESPACE, f"{base}:{generation}"))


def _new_session_id(
    state: dict[str, Any], key: str, base: str, generation: int, sessions_dir: Path, source: Path
) -> tuple[str, Path | None]:
    """``(session id, file to carry on)`` for a source with no session yet.

    The id comes from the source's own session id, as before; when another source already has
    that session (a copy of the transcript), or a file of that id is there that is not this
    source's, the source's path goes into the id too: a session of its own. A file that is this
    source's own import (its record in imports.json was lost) is carried on instead.
    """
    taken = {
        str(record.get("importId") or Path(str(record.get("session"))).stem.rpartition("_")[2])
        for path, record in state.items()
        if path != key and isinstance(record, dict) and isinstance(record.get("session"), str)
    }
    names = [f"{base}:{generation}", f"{base}:{key}:{generation}"]
    names += [f"{base}:{key}:{generation}:{number}" for number in range(2, 100)]
    for name in names:
        session_id = str(uuid.uuid5(_NAMESPACE, name))
        if session_id in taken:
            continue
        existing = sorted(sessions_dir.glob(f"*_{session_id}.jsonl"))
        if not existing:
            return session_id, None
        if _import_source_of(existing[0]) == str(source):
            return session_id, existing[0]
    raise TranscriptImportError(f"{source}: no free session id for another import of it")


def _import_source_of(path: Path) -> str | None:
    """The source path an imported session records in its ``import-source`` entry."""
    for line in _first_lines(path, 4):
        try:
            record = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("customType") == "import-source":
            data = record.get("data")
            return data.get("path") if isinstance(data, dict) else None
    return None


def _imported_session_of(state: dict[str, Any], source_id: str | None) -> str | None:
    if not source_id:
        return None
    for record in state.values():
        if (
            isinstance(record, dict)
            and record.get("sourceId") == source_id
            and isinstance(session := record.get("session"), str)
        ):
            return session
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
    if counts.get("sub_agents"):
        parts.append(f"{counts['sub_agents']} sub-agent conversations as branches")
    if counts.get("skipped"):
        parts.append(f"{counts['skipped']} unreadable lines skipped")
    if result.invalid:
        parts.append(f"{result.invalid} entries pi cannot read left out")
    return ", ".join(parts)
