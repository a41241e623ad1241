"""SessionManager: the tree of entries of one session, and its file.

The manager keeps every entry as the raw JSON dict that is (or will be) on disk, indexed by id,
and hands out typed pydantic views on demand (cached). Appends go through :mod:`store`, the only
writer. A new session writes nothing until it holds an assistant message; from then on, every
entry not yet on disk is written, tracked by position in the append-only entry list (so an entry
is never written twice, unlike pi's #3930).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pi_tui.config.paths import session_dir_for_cwd
from pi_tui.config.pi_folder import own_session_folder
from pi_tui.gc_control import paused_gc, settle
from pi_tui.messages import THINKING_LEVELS, AgentMessage, UserBlock, Wire
from pi_tui.session import lenient, listing
from pi_tui.session.context import (
    SessionContext,
    build_session_context,
    extend_session_context,
    parse_message,
    path_to_root,
    session_settings,
)
from pi_tui.session.entries import (
    CURRENT_SESSION_VERSION,
    HEADER_ADAPTER,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    SessionInitEntry,
    ThinkingLevelChangeEntry,
    TtsrInjectionEntry,
    typed_entry,
)
from pi_tui.session.errors import EntryNotFoundError, SessionError, SessionWriteError
from pi_tui.session.ids import file_stamp, iso_now, new_entry_id, uuid7
from pi_tui.session.info import SessionInfo
from pi_tui.session.migrate import file_version, migrate_entries, rewrite_migrated
from pi_tui.session.reader import LoadedFile, RawEntry, read_session_file
from pi_tui.session.store import SessionFileWriter, check_folder_writable, move_torn_tail
from pi_tui.session.system_replay import checkpoint
from pi_tui.session.tree import EntryIndex, TreeNode
from pi_tui.text_safety import show_name

log = logging.getLogger(__name__)


class SessionManager:
    """A session's entry tree, its current leaf, and (unless in memory) its file."""

    def __init__(
        self,
        cwd: str,
        session_dir: Path | None,
        header: RawEntry,
        *,
        path: Path | None = None,
        loaded: LoadedFile | None = None,
    ) -> None:
        self.cwd = cwd
        self.session_dir = session_dir
        self._header = header
        self._path = path
        self._index = EntryIndex()
        self._typed: dict[str, Any] = {}
        self._context_cache: _CachedContext | None = None
        self._settings_cache: tuple[tuple[int, str | None, int], SessionContext] | None = None
        self._message_memo: dict[str, Any] = {}
        """Entry id -> its context message, kept across builds (entries never change)."""
        self._leaf_id: str | None = None
        self._written = 0
        """How many entries of ``_index.entries`` are on disk (entries are append-only)."""
        self._header_on_disk = loaded is not None
        self._writer: SessionFileWriter | None = None
        self._read_only = False
        self._save_problem: str | None = None
        self._save_notices: list[str] = []
        self._save_listener: Callable[[str], None] | None = None
        self.warnings: list[str] = []
        """What was wrong with the file (skipped, torn, repaired lines; messages left out of the
        model's context), each naming file and line."""
        self._warnings_taken = 0
        self._left_out_reported: set[str] = set()
        self._line_of = loaded.line_of if loaded is not None else None
        if loaded is not None:
            add = self._index.add
            for raw in loaded.entries:
                add(raw)
            self._written = len(self._index.entries)
            self._leaf_id = self._index.entries[-1]["id"] if self._index.entries else None
            self.warnings = list(loaded.warnings)
            for warning in self.warnings:
                log.warning(warning)

    # --- constructors ----------------------------------------------------------------------

    @classmethod
    def create(
        cls, cwd: str, session_dir: str | Path | None = None, *, session_id: str | None = None
    ) -> SessionManager:
        """A new session for ``cwd``; its file appears with the first assistant message.
        ``session_id`` replaces the generated id (``--session-id``; the caller checks it)."""
        folder = Path(session_dir) if session_dir else session_dir_for_cwd(cwd)
        header = _new_header(cwd)
        if session_id is not None:
            header["id"] = session_id
        path = folder / _file_name(header)
        return cls(cwd, folder, header, path=path)

    @classmethod
    def open(
        cls, path: str | Path, session_dir: str | Path | None = None, *, read_only: bool = False
    ) -> SessionManager:
        """Open an existing file (migrating it to v3 if needed) and take the writer lock.

        ``read_only`` neither locks nor rewrites: for listing, export and inspection.
        """
        file_path = Path(path).expanduser().resolve()
        writer = None if read_only else SessionFileWriter(file_path)
        try:
            if writer is not None:
                writer.lock.acquire()  # before reading: never migrate a file another process writes
            loaded = read_session_file(file_path)
            old_version = file_version(loaded.header)
            if migrate_entries(loaded.header, loaded.entries) and writer is not None:
                if loaded.torn_offset is not None:
                    move_torn_tail(file_path, loaded.torn_offset)
                rewrite_migrated(file_path, loaded.header, loaded.entries, old_version, loaded.title_slot)
                loaded.torn_offset, loaded.missing_final_newline = None, False
            if writer is not None:
                writer.expect_tail(
                    torn_offset=loaded.torn_offset, missing_final_newline=loaded.missing_final_newline
                )
                writer.open()  # a file that cannot be written is said now, not at the first reply
        except BaseException:
            if writer is not None:
                writer.close()
            raise
        cwd = str(loaded.header.get("cwd") or os.getcwd())
        # A session of pi's folder grows in its own file; sessions made from it go to ours.
        folder = Path(session_dir) if session_dir else own_session_folder(file_path.parent)
        manager = cls(cwd, folder, loaded.header, path=file_path, loaded=loaded)
        manager._writer = writer
        manager._read_only = read_only
        return manager

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | Path | None = None) -> SessionManager:
        """The newest session of ``cwd`` (by modification time, valid header), else a new one.

        pi's folder for ``cwd`` counts too (a pi session found there is continued in its own
        file); new sessions made from this one (``/new``) go to ``session_dir`` or ours.
        """
        folder = Path(session_dir) if session_dir else session_dir_for_cwd(cwd)
        newest = listing.most_recent_session(folder, cwd)
        if newest is None:
            return cls.create(cwd, folder)
        return cls.open(newest, folder)

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionManager:
        """A session that never touches the disk (``--no-session``, tests, subagents)."""
        cwd = cwd or os.getcwd()
        return cls(cwd, None, _new_header(cwd), path=None)

    @classmethod
    def fork_from(
        cls,
        source: str | Path,
        target_cwd: str,
        session_dir: str | Path | None = None,
        *,
        session_id: str | None = None,
    ) -> SessionManager:
        """Copy the whole session at ``source`` into a new session of ``target_cwd`` (with the
        id ``session_id`` when given: ``--fork X --session-id ID``)."""
        source_path = Path(source).expanduser().resolve()
        original = cls.open(source_path, read_only=True)
        manager = cls.create(target_cwd, session_dir, session_id=session_id)
        manager._header["parentSession"] = str(source_path)
        return manager._filled(original._index.entries, original._leaf_id)

    def _filled(
        self, raws: Iterable[RawEntry], leaf_id: str | None, labels: Iterable[tuple[str, str]] = ()
    ) -> SessionManager:
        """This new session holding copies of ``raws`` (then ``labels`` as new label entries),
        written at once; a file that cannot be written is removed and the error raised."""
        for raw in raws:
            self._index.add(dict(raw))
        self._leaf_id = leaf_id
        for target, label in labels:
            self._append_model(LabelEntry, target_id=target, label=label)
        try:
            self._persist(strict=True)
        except SessionError:
            self.close(discard=True)
            raise
        return self

    # --- listing ----------------------------------------------------------------------------

    @staticmethod
    def list(cwd: str, session_dir: str | Path | None = None) -> list[SessionInfo]:
        """Sessions of ``cwd`` (pi's folder's too), newest first."""
        folder = Path(session_dir) if session_dir else session_dir_for_cwd(cwd)
        return listing.list_sessions(folder, cwd=cwd)

    @staticmethod
    def list_all(sessions_root: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions of every folder under the sessions root (pi-tui's and pi's), newest first."""
        return listing.list_all_sessions(Path(sessions_root) if sessions_root else None)

    # --- identity ---------------------------------------------------------------------------

    @property
    def session_file(self) -> Path | None:
        """The file path; None for in-memory sessions."""
        return self._path

    @property
    def session_id(self) -> str:
        return str(self._header.get("id", ""))

    @property
    def read_only(self) -> bool:
        """Opened only to be shown (a transcript being followed): nothing can be added."""
        return self._read_only

    @property
    def is_persisted(self) -> bool:
        """True once the file exists with this session's lines."""
        return self._path is not None and self._header_on_disk

    def take_new_warnings(self) -> builtins.list[str]:
        """Warnings not handed out before (for a UI that shows each problem once)."""
        new = self.warnings[self._warnings_taken :]
        self._warnings_taken = len(self.warnings)
        return new

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        log.warning(text)

    def _where(self, entry_id: str) -> str:
        """``file:line`` of an entry read from the file (``file`` alone for a new entry)."""
        raw = self._index.by_id.get(entry_id)
        line = self._line_of(raw) if raw is not None and self._line_of is not None else None
        name = str(self._path) if self._path is not None else "<session>"
        return f"{name}:{line}" if line is not None else name

    def get_header(self) -> SessionHeader:
        try:
            return lenient.validate(HEADER_ADAPTER, self._header)[0]
        except lenient.Unrepairable:
            return SessionHeader(id=str(self._header.get("id", "")))

    def get_session_name(self) -> str | None:
        return self._index.session_name

    # --- appends ----------------------------------------------------------------------------

    def append_message(self, message: AgentMessage | dict[str, Any]) -> str:
        """Append an agent message (typed, or its JSON dict) as a ``message`` entry."""
        # Validate now (a bad message fails here, not on the next load) and write the model's
        # own dump, so snake_case keys given by a caller still land camelCase on disk.
        typed = parse_message(message.to_json_dict() if isinstance(message, Wire) else message)
        return self._append("message", {"message": typed.to_json_dict()}, typed)

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append_model(ModelChangeEntry, provider=provider, model_id=model_id)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        if thinking_level not in THINKING_LEVELS:
            raise ValueError(
                f"Unknown thinking level {thinking_level!r}; use one of {', '.join(THINKING_LEVELS)}"
            )
        return self._append_model(ThinkingLevelChangeEntry, thinking_level=thinking_level)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        *,
        short_summary: str | None = None,
        preserve_data: Any = None,
        usage: Any = None,
    ) -> str:
        """``usage``: what writing the summary cost (pi 1.x keeps it on the entry; it counts in
        the session's totals); None for a summary no model wrote."""
        fields: dict[str, Any] = {
            "summary": summary,
            "first_kept_entry_id": first_kept_entry_id,
            "tokens_before": tokens_before,
        }
        _set_optional(fields, details=details, from_hook=from_hook)
        _set_optional(fields, short_summary=short_summary, preserve_data=preserve_data, usage=usage)
        # On a branch pi 1.x declared a prompt on, the compaction carries the replayed prompt
        # and tools, as pi's do: pi drops the system messages it summarises in favour of it.
        _set_optional(fields, system_message=checkpoint(self.build_session_context().system_messages))
        return self._append_model(CompactionEntry, **fields)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        fields: dict[str, Any] = {"custom_type": custom_type}
        _set_optional(fields, data=data)
        return self._append_model(CustomEntry, **fields)

    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | Sequence[UserBlock | dict[str, Any]],
        display: bool,
        details: Any = None,
    ) -> str:
        """``content`` as a :class:`CustomMessage`'s; the entry holds text and image blocks only
        (pi's ``custom_message``), so another kind of block raises pydantic's ValidationError."""
        body = content if isinstance(content, str) else list(content)
        fields: dict[str, Any] = {"custom_type": custom_type, "content": body, "display": display}
        _set_optional(fields, details=details)
        return self._append_model(CustomMessageEntry, **fields)

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """Set (or, with None/blank, clear) the label of ``target_id``. The change is an entry."""
        if target_id not in self._index.by_id:
            raise EntryNotFoundError(target_id)
        fields: dict[str, Any] = {"target_id": target_id}
        if label is not None and label.strip():
            fields["label"] = label.strip()
        return self._append_model(LabelEntry, **fields)

    def append_session_info(self, name: str) -> str:
        return self._append_model(SessionInfoEntry, name=name.strip())

    def append_ttsr_injection(self, rule_names: Sequence[str]) -> str:
        return self._append_model(TtsrInjectionEntry, injected_rules=list(rule_names))

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        """Change what ``target_id`` gives the model from here on, on this branch: ``None``
        leaves it out, a string or a block list replaces its content (pi 1.x's ``context_edit``).
        The target itself is never rewritten."""
        if target_id not in self._index.by_id:
            raise EntryNotFoundError(target_id)
        body = None if replacement is None else {"content": replacement}
        return self._append_model(ContextEditEntry, target_id=target_id, replacement=body)

    def append_session_init(
        self, system_prompt: str, task: str, tools: Sequence[str], output_schema: Any = None
    ) -> str:
        fields: dict[str, Any] = {"system_prompt": system_prompt, "task": task, "tools": list(tools)}
        _set_optional(fields, output_schema=output_schema)
        return self._append_model(SessionInitEntry, **fields)

    def _append_model(self, model: type[EntryBase], **fields: Any) -> str:
        draft = model(id="", parent_id=None, timestamp="", **fields)
        return self._append(str(draft.type), draft.to_json_dict(), None)

    def _append(self, kind: str, body: dict[str, Any], typed_message: Any) -> str:
        if self._read_only:
            raise SessionError(f"Session {self._path} was opened read-only; nothing can be added to it")
        entry_id = new_entry_id(self._index.by_id)
        raw: RawEntry = {
            "type": kind,
            "id": entry_id,
            "parentId": self._leaf_id,
            "timestamp": iso_now(),
        }
        raw.update((key, value) for key, value in body.items() if key not in raw)
        self._index.add(raw)
        self._leaf_id = entry_id
        if typed_message is not None:
            self._message_memo[entry_id] = typed_message  # the context needs no second validation
            self._typed[entry_id] = MessageEntry.model_construct(
                _fields_set={"type", "id", "parent_id", "timestamp", "message"},
                type="message",
                id=entry_id,
                parent_id=raw["parentId"],
                timestamp=raw["timestamp"],
                message=typed_message,
            )
        self._persist()
        return entry_id

    # --- persistence ------------------------------------------------------------------------

    def _persist(self, *, strict: bool = False) -> None:
        """Write every entry not yet on disk, once the session deserves a file.

        A failure (disk full, I/O error, no permission) is said once and the entries stay in
        memory; every later append, sync and close tries again, so they are written, in order,
        as soon as the file can take them. ``strict`` raises the :class:`SessionError` instead.
        """
        if self._path is None or (not self._header_on_disk and not self._index.has_assistant):
            return  # in memory, or no assistant message yet: no empty sessions on disk
        try:
            self.flush()
        except SessionError as error:
            if strict:
                raise
            self._save_failed(error)
            return
        if self._save_problem is not None:
            self._save_problem = None
            self._say_save(f"Session saved again: every entry is now in {show_name(self._path)}")

    def flush(self) -> None:
        """Write every entry not yet on disk now (creating the file with its header if needed).

        Raises :class:`SessionError` (one line) when it cannot; the file then ends with the last
        complete line, and what was not written stays pending for the next flush.
        """
        if self._path is None:
            return
        if self._writer is None:
            self._writer = SessionFileWriter(self._path)
        if not self._header_on_disk:
            self._writer.append([self._header])
            self._header_on_disk = True
        pending = self._index.entries[self._written :]
        if pending:
            try:
                self._writer.append(pending)
            except SessionWriteError as error:
                self._written += error.written
                raise
            self._written += len(pending)

    @property
    def unsaved_count(self) -> int:
        """Entries the file should hold but does not yet (a write failed)."""
        if self._path is None or (not self._header_on_disk and not self._index.has_assistant):
            return 0
        return len(self._index.entries) - self._written

    @property
    def save_problem(self) -> str | None:
        """Why the last write failed, while entries wait to be written; None when all is saved."""
        return self._save_problem

    @property
    def save_listener(self) -> Callable[[str], None] | None:
        """Called with one line when saving fails, and again when it works again. Lines said
        before a listener is set are handed to it when it is set (or to ``take_save_notices``)."""
        return self._save_listener

    @save_listener.setter
    def save_listener(self, listener: Callable[[str], None] | None) -> None:
        self._save_listener = listener
        if listener is not None:
            for text in self.take_save_notices():
                self._say_save(text)

    def take_save_notices(self) -> builtins.list[str]:
        """Save problems said while no listener was set."""
        notices, self._save_notices = self._save_notices, []
        return notices

    def _save_failed(self, error: SessionError) -> None:
        if self._save_problem is not None:
            return  # said once per failure, not at every retry
        self._save_problem = str(error)
        waiting = self.unsaved_count
        if waiting:
            noun, pronoun = ("entry is", "it") if waiting == 1 else ("entries are", "them")
            self._say_save(
                f"{error}. {waiting} {noun} kept in memory, to be saved when the file can take {pronoun}"
            )
        else:
            self._say_save(f"{error}")

    def _say_save(self, text: str) -> None:
        log.debug(text)
        listener = self._save_listener
        if listener is None:
            self._save_notices.append(text)
            return
        try:
            listener(text)
        except Exception as error:  # a UI that is gone must not stop the session
            log.warning("%s (and telling the user failed: %s)", text, error)

    def check_writable(self) -> None:
        """Raise :class:`SessionError` (one line) now if this session's file could not be written.

        A new session writes its file at the first reply, too late to tell the user that the
        folder cannot be written; opened files are checked when they are opened.
        """
        if self._path is None or self._read_only or self._header_on_disk:
            return
        check_folder_writable(self._path.parent, self._path)

    def sync(self) -> None:
        """fsync the file: the agent calls this at the end of every turn. Entries that a failed
        write left waiting are tried again first; a failure is said once, never raised."""
        if self.unsaved_count:
            self._persist()
        if self._writer is not None:
            try:
                self._writer.sync()
            except SessionError as error:
                self._save_failed(error)

    def close(self, *, discard: bool = False) -> None:
        """fsync and release the file; the manager can still be read afterwards.

        Entries still waiting get a last try; those that cannot be written are said lost.
        ``discard`` (a session that could not be created) removes the file instead.
        """
        if not discard and self.unsaved_count:
            self._persist()
        lost = 0 if discard else self.unsaved_count
        writer, self._writer = self._writer, None
        if writer is None:
            return
        if (discard or not self._header_on_disk) and writer.is_open and self._path is not None:
            with contextlib.suppress(OSError):  # ours, and nothing complete in it
                if discard or os.stat(self._path).st_size == 0:
                    os.unlink(self._path)
        try:
            writer.close()
        except SessionError as error:
            self._save_failed(error)
        if lost and self._path is not None:  # only a file can have entries waiting
            noun = "entry" if lost == 1 else "entries"
            self._say_save(
                f"Lost on exit: {lost} session {noun} that could not be saved to {show_name(self._path)}"
            )

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- navigation -------------------------------------------------------------------------

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> Any | None:
        return self.get_entry(self._leaf_id) if self._leaf_id is not None else None

    def get_entry(self, entry_id: str) -> Any | None:
        """The typed entry, or None if there is no such id."""
        typed = self._typed.get(entry_id)
        if typed is None:
            raw = self._index.by_id.get(entry_id)
            if raw is None:
                return None
            typed = self._typed[entry_id] = typed_entry(raw)
        return typed

    def get_raw_entry(self, entry_id: str) -> RawEntry | None:
        """The entry exactly as on disk (do not modify it)."""
        return self._index.by_id.get(entry_id)

    def get_entries(self) -> builtins.list[Any]:
        """Every entry, typed, in file order (header excluded)."""
        return [self.get_entry(raw["id"]) for raw in self._index.entries]

    def iter_raw_entries(self) -> Iterator[RawEntry]:
        return iter(self._index.entries)

    def __len__(self) -> int:
        return len(self._index.entries)

    def get_children(self, parent_id: str | None) -> builtins.list[Any]:
        """Direct children of ``parent_id`` (None: the roots), in timestamp order."""
        return [self.get_entry(raw["id"]) for raw in self._index.children_of(parent_id)]

    def get_branch(self, from_id: str | None = None) -> builtins.list[Any]:
        """Typed entries from the root to ``from_id`` (default: the leaf)."""
        start = self._leaf_id if from_id is None else from_id
        if start is not None and start not in self._index.by_id:
            raise EntryNotFoundError(start)
        return [self.get_entry(raw["id"]) for raw in path_to_root(self._index.by_id, start)]

    def get_branch_ids(self, from_id: str | None = None) -> builtins.list[str]:
        """Ids from the root to ``from_id`` (default: the leaf), without building typed entries."""
        start = self._leaf_id if from_id is None else from_id
        if start is not None and start not in self._index.by_id:
            raise EntryNotFoundError(start)
        return [raw["id"] for raw in path_to_root(self._index.by_id, start)]

    def get_tree(self) -> builtins.list[TreeNode]:
        """All entries as a forest; roots have a null or missing parent; children by timestamp."""
        return self._index.tree()

    def get_label(self, entry_id: str) -> str | None:
        return self._index.labels.get(entry_id)

    def get_label_timestamp(self, entry_id: str) -> str | None:
        """When the current label of ``entry_id`` was set (for the tree's Shift+T view)."""
        return self._index.label_times.get(entry_id)

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append becomes its child. Writes nothing."""
        if entry_id not in self._index.by_id:
            raise EntryNotFoundError(entry_id)
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """The next append starts a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        *,
        usage: Any = None,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the root) and append a branch summary.
        ``usage``: what writing the summary cost (kept on the entry and counted in the totals,
        as pi 1.x does); None for a summary no model wrote. ``fromId`` names the leaf being
        left, whose path the summary tells (pi 0.84.3+; older pi wrote the target)."""
        abandoned = self._leaf_id or "root"
        if entry_id is None:
            self.reset_leaf()
        else:
            self.branch(entry_id)
        fields: dict[str, Any] = {"from_id": abandoned, "summary": summary}
        _set_optional(fields, details=details, from_hook=from_hook, usage=usage)
        return self._append_model(BranchSummaryEntry, **fields)

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Continue in a new session holding only the root-to-``leaf_id`` path.

        Label entries are dropped and re-created for the labels of entries on the path; the new
        header names this file as ``parentSession``. The manager switches to the new file and
        returns its path (None for in-memory sessions, whose entries are replaced in place).
        """
        path, labels = self._index.branch_and_labels(leaf_id)
        parent_file = self._path
        self.close()
        self._header = _new_header(self.cwd)
        if parent_file is not None:
            self._header["parentSession"] = str(parent_file)
            assert self.session_dir is not None
            self._path = self.session_dir / _file_name(self._header)
        self._index = EntryIndex()
        self._typed = {}
        self._message_memo = {}
        self._line_of = None
        self._left_out_reported = set()
        self._written = 0
        self._header_on_disk = False
        for raw in path:
            self._index.add(dict(raw))
        self._leaf_id = path[-1]["id"] if path else None
        for target, label in labels:
            self._append_model(LabelEntry, target_id=target, label=label)
        self._persist()
        return self._path

    @classmethod
    def copy_branch(cls, source: SessionManager, leaf_id: str | None) -> SessionManager:
        """A new session beside ``source`` holding its root-to-``leaf_id`` path (``None``: an
        empty session), labels kept, ``source``'s file as ``parentSession``. ``source`` itself
        is not touched: the server forks and clones while the original stays open."""
        path, labels = source._index.branch_and_labels(leaf_id) if leaf_id is not None else ([], [])
        manager = cls.create(source.cwd, source.session_dir)
        if source.session_file is not None:
            manager._header["parentSession"] = str(source.session_file)
        return manager._filled(path, path[-1]["id"] if path else None, labels)

    def build_session_context(self) -> SessionContext:
        """The context of the current leaf; built once per (index, leaf, entry count).

        The agent, the footer and startup all ask for it, and on a long session each build
        validates thousands of messages. Entries are append-only, so the triple identifies the
        result; callers get their own list (the messages themselves are shared, never mutated).
        """
        index = self._index
        key = (id(index), self._leaf_id, len(index.entries))
        cached = self._context_cache
        if cached is None or cached[0] != key:
            # Typed messages are acyclic: cycle scans while making 25,000 of them cost more than
            # making them (0.24 s -> 1.4 s on a 50k-entry session), so the collector waits.
            with paused_gc():
                path = self._index.branch_path(self._leaf_id)
                built = self._grown_context(cached, path)
                if built is None:
                    last = index.entries[-1]["id"] if index.entries else None
                    built = build_session_context(index.by_id, self._leaf_id, last, self._message_memo, path)
                    settle(len(built.messages))
            cached = self._context_cache = (key, built, path)
        context = cached[1]
        for entry_id, problem in context.left_out:
            if entry_id not in self._left_out_reported:
                self._left_out_reported.add(entry_id)
                self._warn(f"{self._where(entry_id)}: left out of the model's context: {problem}")
        return dataclasses.replace(
            context, messages=list(context.messages), injected_ttsr_rules=list(context.injected_ttsr_rules)
        )

    def build_session_settings(self) -> SessionContext:
        """The model, thinking level and injected rules of the current leaf; ``messages`` is
        empty. Cheap: no message is read (the built context is used when there is one)."""
        key = (id(self._index), self._leaf_id, len(self._index.entries))
        cached = self._context_cache
        if cached is not None and cached[0] == key:
            built = cached[1]
        elif self._settings_cache is not None and self._settings_cache[0] == key:
            built = self._settings_cache[1]
        else:
            path = self._index.branch_path(self._leaf_id)
            if path is None:
                last = self._index.entries[-1]["id"] if self._index.entries else None
                path = path_to_root(self._index.by_id, last) if self._leaf_id is not None else []
            built = session_settings(path)
            self._settings_cache = (key, built)
        return SessionContext(
            thinking_level=built.thinking_level,
            model=built.model,
            injected_ttsr_rules=list(built.injected_ttsr_rules),
        )

    @property
    def has_built_context(self) -> bool:
        """A context was built for this session before (a later build mostly grows it)."""
        return self._context_cache is not None

    @property
    def context_is_built(self) -> bool:
        """Whether :meth:`build_session_context` would answer from its cache right now."""
        cached = self._context_cache
        return cached is not None and cached[0] == (id(self._index), self._leaf_id, len(self._index.entries))

    def _grown_context(
        self, cached: _CachedContext | None, path: builtins.list[RawEntry] | None
    ) -> SessionContext | None:
        """The cached context extended by the entries the new path adds below its leaf, when
        the new path is the cached one plus those entries (the usual case after an append)."""
        if cached is None or path is None or cached[2] is None or cached[0][0] != id(self._index):
            return None
        old_path = cached[2]
        if not old_path or len(path) <= len(old_path) or path[len(old_path) - 1] is not old_path[-1]:
            return None
        return extend_session_context(cached[1], path[len(old_path) :], self._message_memo)


_CachedContext = tuple[tuple[int, str | None, int], SessionContext, list[RawEntry] | None]
"""(index id, leaf, entry count), the context built for it, and the path it was built from."""


def _set_optional(fields: dict[str, Any], **optional: Any) -> None:
    for key, value in optional.items():
        if value is not None:
            fields[key] = value


def _file_name(header: RawEntry) -> str:
    return f"{file_stamp(header['timestamp'])}_{header['id']}.jsonl"


def _new_header(cwd: str) -> RawEntry:
    return {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": uuid7(),
        "timestamp": iso_now(),
        "cwd": cwd,
    }
