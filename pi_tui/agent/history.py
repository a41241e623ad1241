"""The agent's moves over its own history: compaction (``/compact``, automatic) and moving in
the session tree (``/tree``), with the summaries both may ask the model for.

A mixin of :class:`~pi_tui.agent.session.AgentSession`, kept in its own module so the agent loop
stays one readable size; it uses the agent's session, model, settings, hooks and events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_tui.agent.file_restore import FileMode
from pi_tui.agent.hooks import AgentHooks
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.types import Model, StreamOptions
from pi_tui.checkpoints.history import FilesRestored
from pi_tui.config.settings import Settings
from pi_tui.messages import TextContent
from pi_tui.session import SessionManager

if TYPE_CHECKING:
    from pi_tui.agent.events import AgentEvent

KeyResolver = Callable[[Model], StreamOptions]
"""Gives the request options (API key, headers) for a model; raises ConfigError without a key."""

SMALL_SESSION_ENTRIES = 2_000
"""Sessions up to this size have their context built whenever the footer asks (milliseconds)."""


@dataclass(slots=True)
class NavigationResult:
    editor_text: str | None = None
    """The selected user message's text, for the editor (None for other entries)."""
    summary_entry_id: str | None = None
    already_there: bool = False
    cancelled_by: str | None = None
    """Set when an extension's ``session_before_tree`` handler cancelled the move."""
    files: FilesRestored | None = None
    """What happened to the project's files (a move with ``files`` other than ``keep``)."""


class CompactionFailed(Exception):
    """The summary request for a compaction failed; the message says why."""


class HistoryMixin:
    """Compaction and tree moves for :class:`~pi_tui.agent.session.AgentSession`."""

    manager: SessionManager
    model: Model
    settings: Settings
    hooks: AgentHooks
    thinking_level: str
    _request_options: KeyResolver

    if TYPE_CHECKING:

        @property
        def messages(self) -> list[Any]: ...

        def emit(self, event_type: str, **data: Any) -> AgentEvent: ...

        def _restore_ttsr(self) -> None: ...

        async def restore_files_at(
            self, entry_id: str | None, *, force: bool = False, keep_edited: bool = False
        ) -> FilesRestored: ...

        async def check_file_restore(self, entry_id: str | None) -> None: ...

    # --- compaction -----------------------------------------------------------------------------

    def context_tokens(self) -> float:
        """Tokens the current context takes (last usage plus estimates of what followed it)."""
        from pi_tui.compaction.tokens import context_tokens

        return context_tokens(self.messages)

    def context_tokens_if_built(self) -> float | None:
        """:meth:`context_tokens`, or None while the context is not built yet: the footer must
        not make a long session's first screen wait for every message to be read."""
        manager = self.manager
        if self.compacted_since_last_usage():
            return None  # as pi: unknown ("?") until the next reply reports its usage
        if manager.context_is_built or manager.has_built_context or len(manager) <= SMALL_SESSION_ENTRIES:
            return self.context_tokens()  # at hand, grown from the last build, or cheap to build
        return None

    def compacted_since_last_usage(self) -> bool:
        """A compaction is newer on the branch than the last reply that reported usage: that
        usage measured the context before the summary replaced it."""
        manager = self.manager
        for entry_id in reversed(manager.get_branch_ids()):
            raw = manager.get_raw_entry(entry_id) or {}
            if raw.get("type") == "compaction":
                return True
            message = raw.get("message") if raw.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "assistant" and message.get("usage"):
                return False
        return False

    def compaction_settings(self) -> Any:
        """``compaction`` with the active model's ``modelOverrides`` entry applied (pi 1.x): read
        afresh at each check, so a model switch changes the next threshold and cut."""
        return self.settings.compaction.for_model(self.model.provider, self.model.id)

    async def _maybe_compact(self) -> None:
        """Automatic compaction when the context leaves less than ``reserveTokens`` free."""
        from pi_tui.compaction.compact import should_compact

        if should_compact(self.context_tokens(), self.model.context_window, self.compaction_settings()):
            await self._auto_compact("threshold")

    async def _auto_compact(self, reason: str) -> bool:
        try:
            return await self.compact(reason=reason) is not None
        except CompactionFailed:
            return False

    async def compact(self, custom_instructions: str | None = None, *, reason: str = "manual") -> Any:
        """Summarise the older part of the branch into a ``compaction`` entry (``/compact``).

        Returns the CompactionResult, or None when there is nothing to compact. Raises
        :class:`CompactionFailed` with the provider's message when the summary request fails.
        """
        from pi_tui.compaction.compact import compact, prepare_compaction
        from pi_tui.compaction.request import CompactionError

        self.emit("compaction_start", reason=reason)
        branch = self.manager.get_branch()
        preparation = prepare_compaction(branch, self.compaction_settings())
        if preparation is None:
            self.emit("compaction_end", reason=reason, result=None, aborted=False, willRetry=False)
            return None
        given: dict[str, Any] | None = None
        if self.hooks.wants("session_before_compact"):
            answer = await self.hooks.before(
                "session_before_compact",
                preparation=preparation,
                branch_entries=branch,
                custom_instructions=custom_instructions,
                reason=reason,
            )
            if answer is not None and answer.get("cancel"):
                self.emit("compaction_end", reason=reason, result=None, aborted=True, willRetry=False)
                return None
            given = answer.get("compaction") if answer is not None else None
        try:
            if isinstance(given, dict) and isinstance(given.get("summary"), str):
                result = _given_compaction(given, preparation)
            else:
                given = None
                options = await asyncio.to_thread(self._request_options, self.model)
                options.thinking = self.thinking_level  # type: ignore[assignment]
                result = await compact(preparation, self.model, options, custom_instructions)
        except (CompactionError, ConfigError) as error:
            self.emit(
                "compaction_end",
                reason=reason,
                result=None,
                aborted=False,
                willRetry=False,
                errorMessage=str(error),
            )
            raise CompactionFailed(str(error)) from error
        except asyncio.CancelledError:
            self.emit("compaction_end", reason=reason, result=None, aborted=True, willRetry=False)
            raise
        entry_id = result.append_to(self.manager, from_hook=given is not None)
        self.manager.sync()
        entry = self.manager.get_entry(entry_id)
        self.hooks.notify("session_compact", compaction_entry=entry, from_extension=given is not None)
        self.emit(
            "compaction_end",
            reason=reason,
            result=compaction_json(result, self.messages),
            aborted=False,
            willRetry=reason == "overflow",
        )
        return result

    # --- moving in the tree --------------------------------------------------------------------

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_focus: str | None = None,
        files: FileMode = "keep",
        force: bool = False,
        keep_edited: bool = False,
    ) -> NavigationResult:
        """Move to ``target_id`` (the /tree selection), optionally summarising what is left.

        Selecting a user (or custom) message puts the leaf on its parent and hands its text back
        for the editor, so the next prompt becomes a sibling; any other entry becomes the leaf.
        With ``summarize`` the abandoned entries are summarised first and a ``branch_summary``
        is appended at the new position. Cancelling the awaiting task cancels the summary and
        leaves the session where it was.

        ``files``: ``keep`` leaves the project's files alone; ``restore`` brings back the files
        of the new position too, ``only`` those files without moving the conversation. Files
        changed outside pi-tui that would be overwritten raise ``FileRestoreConflict`` before
        anything moves, unless ``force`` (or ``keep_edited``: those files are left as they are);
        the files replaced stay available to
        :meth:`undo_file_restore`.
        """
        from pi_tui.compaction.branch_summary import collect_entries_for_branch_summary, summarize_branch
        from pi_tui.compaction.request import CompactionError

        entry = self.manager.get_entry(target_id)
        if entry is None:
            raise ValueError(f"Entry {target_id} not found")
        old_leaf = self.manager.get_leaf_id()
        editor_text = None
        new_leaf: str | None = target_id
        message = getattr(entry, "message", None)
        if entry.type == "custom_message" or (message is not None and message.role == "user"):
            new_leaf = entry.parent_id
            content = message.content if message is not None else entry.content
            editor_text = (
                content
                if isinstance(content, str)
                else "".join(block.text for block in content if isinstance(block, TextContent))
            )
        if files == "only" or (files == "restore" and target_id == old_leaf):
            alone = await self.restore_files_at(new_leaf, force=force, keep_edited=keep_edited)
            return NavigationResult(already_there=target_id == old_leaf, files=alone)
        if target_id == old_leaf:
            return NavigationResult(already_there=True)
        if files == "restore" and not (force or keep_edited):
            await self.check_file_restore(new_leaf)  # before anything moves or is summarised
        summary_id = None
        given: Any = None
        if self.hooks.wants("session_before_tree"):
            answer = await self.hooks.before(
                "session_before_tree", target_id=target_id, old_leaf_id=old_leaf, summarize=summarize
            )
            if answer is not None and answer.get("cancel"):
                return NavigationResult(cancelled_by="an extension")
            given = answer.get("summary") if answer is not None else None
        if isinstance(given, dict) and isinstance(given.get("summary"), str) and old_leaf is not None:
            details = given.get("details")
            summary_id = self.manager.branch_with_summary(new_leaf, given["summary"], details, True)
        elif summarize and old_leaf is not None:
            entries = collect_entries_for_branch_summary(self.manager, old_leaf, target_id)
            try:
                options = await asyncio.to_thread(self._request_options, self.model)
                result = await summarize_branch(
                    entries,
                    self.model,
                    options,
                    custom_focus,
                    reserve_tokens=self.settings.branch_summary.reserve_tokens,
                )
            except (CompactionError, ConfigError) as error:
                raise CompactionFailed(str(error)) from error
            if result is not None:
                summary_id = self.manager.branch_with_summary(
                    new_leaf, result.summary, result.details, False, usage=result.usage
                )
        if summary_id is None:
            if new_leaf is None:
                self.manager.reset_leaf()
            else:
                self.manager.branch(new_leaf)
        self._restore_ttsr()  # another branch has its own injected rules
        restored = (
            await self.restore_files_at(new_leaf, force=not keep_edited, keep_edited=keep_edited)
            if files == "restore"
            else None
        )
        self.hooks.notify(
            "session_tree",
            new_leaf_id=self.manager.get_leaf_id(),
            old_leaf_id=old_leaf,
            summary_entry=self.manager.get_entry(summary_id) if summary_id else None,
            from_extension=summary_id is not None and given is not None,
        )
        return NavigationResult(editor_text=editor_text, summary_entry_id=summary_id, files=restored)


def _given_compaction(given: dict[str, Any], preparation: Any) -> Any:
    """The compaction an extension's ``session_before_compact`` handler wrote itself."""
    from pi_tui.compaction.compact import CompactionResult

    first_kept = given.get("first_kept_entry_id", given.get("firstKeptEntryId"))
    tokens = given.get("tokens_before", given.get("tokensBefore"))
    details = given.get("details")
    return CompactionResult(
        summary=given["summary"],
        first_kept_entry_id=first_kept if isinstance(first_kept, str) else preparation.first_kept_entry_id,
        tokens_before=tokens if isinstance(tokens, int) else preparation.tokens_before,
        details=details if isinstance(details, dict) else {"readFiles": [], "modifiedFiles": []},
    )


def compaction_json(result: Any, messages: Sequence[Any]) -> dict[str, Any]:
    """A compaction's result as pi 1.x reports it (``compaction_end``, rpc ``compact``):
    ``estimatedTokensAfter`` is an estimate over the rebuilt context (no reply has measured it
    yet); ``usage`` what the summary cost, absent when no model wrote it."""
    from pi_tui.compaction.tokens import estimate_tokens

    data: dict[str, Any] = {
        "summary": result.summary,
        "firstKeptEntryId": result.first_kept_entry_id,
        "tokensBefore": result.tokens_before,
        "estimatedTokensAfter": sum(estimate_tokens(message) for message in messages),
        "details": result.details,
    }
    usage = getattr(result, "usage", None)
    if usage is not None:
        data["usage"] = usage.model_dump(by_alias=True, mode="json")
    return data
