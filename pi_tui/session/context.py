"""What the model sees: building the context of the current branch and converting it.

Both steps are pure functions over plain data, so they can be tested without files and reused by
the agent, the print modes and the export.

:func:`build_session_context` walks the raw entries from the leaf to the root and returns the
agent messages on that path (with the last compaction resolved), the thinking level, the model
and the TTSR rules injected on the path. :func:`convert_to_llm` turns agent messages into the
three roles providers understand, wrapping summaries, custom messages and user shell commands in
the exact texts pi uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from pi_tui.messages import (
    THINKING_LEVELS,
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    LlmMessage,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserBlock,
    UserMessage,
)
from pi_tui.session import lenient
from pi_tui.session.ids import parse_iso
from pi_tui.session.reader import RawEntry

BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
GENERATED_BRANCH_SUMMARY_PREFIX = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)
"""Start of every branch summary pi-tui generates (stored in the entry, before the model's text)."""

_MESSAGE_ADAPTER: TypeAdapter[Any] = TypeAdapter(AgentMessage)


@dataclass(slots=True)
class ModelRef:
    provider: str
    model_id: str


@dataclass(slots=True)
class SessionContext:
    messages: list[Any] = field(default_factory=list)
    """Agent messages (typed models from :mod:`pi_tui.messages`) in order."""
    thinking_level: str = "off"
    model: ModelRef | None = None
    injected_ttsr_rules: list[str] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    """``(entry id, why)`` for each message on the path that could not be sent to the model."""
    system_messages: list[SystemMessage] = field(default_factory=list)
    """pi 1.x system messages as the model's context has them: the last compaction's checkpoint,
    then those after it (or every one on the branch without a compaction). Their ``content``
    goes into the system prompt (see :mod:`pi_tui.session.system_replay`)."""
    branch_system: list[SystemMessage] = field(default_factory=list)
    """Every system message on the branch, compacted or not: they decide the tool loadout."""


def parse_message(raw: Mapping[str, Any]) -> Any:
    """Typed agent message from its JSON dict (strict: for what pi-tui itself writes)."""
    return _MESSAGE_ADAPTER.validate_python(raw)


def read_message(raw: Any) -> Any:
    """Typed agent message from a dict read from a file: wrong fields are dropped, as pi ignores
    them; raises :class:`lenient.Unrepairable` when no message can be made of it."""
    if not isinstance(raw, dict):
        raise lenient.Unrepairable(f"message is {type(raw).__name__}, not an object")
    if "content" in raw and not isinstance(raw["content"], str | list):
        # No provider takes such a message (pi itself stops before sending): leave it out.
        raise lenient.cannot_hold("content", raw["content"])
    return lenient.validate(_MESSAGE_ADAPTER, raw)[0]


RESET_BOUNDARY = "reset_boundary"
"""oh-my-pi's ``/clear``: the model sees only what follows the last boundary on the branch."""


def path_to_root(by_id: Mapping[str, RawEntry], leaf_id: str | None) -> list[RawEntry]:
    """Raw entries from the root down to ``leaf_id`` (inclusive); stops at a missing parent."""
    path: list[RawEntry] = []
    seen: set[str | None] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None:
        entry_id = current.get("id")
        if entry_id in seen:  # a parent cycle in a damaged file: stop rather than loop forever
            break
        seen.add(entry_id)
        path.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if parent is not None else None
    path.reverse()
    return path


def build_session_context(
    by_id: Mapping[str, RawEntry],
    leaf_id: str | None,
    last_entry_id: str | None = None,
    memo: dict[str, Any] | None = None,
    path: list[RawEntry] | None = None,
) -> SessionContext:
    """Context of the branch ending at ``leaf_id``.

    A null leaf gives an empty context; an unknown leaf falls back to ``last_entry_id``.
    ``memo`` (entry id -> its message, or the problem that kept it out) lets a caller whose
    entries never change reuse the typed messages of earlier builds: on a long session, building
    the view of every message is nearly all of the cost, and the agent builds the context
    several times a turn as entries are appended. ``path``, when given, is
    ``path_to_root(by_id, leaf_id)`` already walked (it is read, not changed).
    """
    if leaf_id is None:
        return SessionContext()
    if leaf_id not in by_id:
        leaf_id = last_entry_id
        path = None
    if path is None:
        path = path_to_root(by_id, leaf_id)

    context = session_settings(path)
    compaction_index: int | None = None
    boundary_index = -1
    edited = False
    for index, entry in enumerate(path):
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if type(message) is dict and message.get("role") == "system":
                found = _memo_message(entry, memo)
                if isinstance(found, SystemMessage):
                    context.branch_system.append(found)
        elif kind == "compaction":
            compaction_index = index
        elif kind == RESET_BOUNDARY:
            boundary_index = index
        elif kind == CONTEXT_EDIT:
            edited = True

    if boundary_index >= 0:  # messages come only from after the last boundary
        path = path[boundary_index + 1 :]
        if compaction_index is not None:
            compaction_index = compaction_index - boundary_index - 1
            if compaction_index < 0:
                compaction_index = None

    if compaction_index is None:
        edits = _latest_edits(path) if edited else None
        for entry in path:
            _append_context_message(context, entry, memo, edits)
        return context

    compaction = path[compaction_index]
    first_kept = compaction.get("firstKeptEntryId")
    kept: list[RawEntry] = []
    for index in range(compaction_index):  # a retain-none compaction names itself: none kept
        if path[index].get("id") == first_kept:
            kept = [entry for entry in path[index:compaction_index] if not _is_system_entry(entry)]
            break
    after = path[compaction_index + 1 :]
    edits = _latest_edits(kept + after) if edited else None
    if edits is None or _edit_of(compaction, edits) is not _OMITTED:
        checkpoint = compaction.get("systemMessage")
        if isinstance(checkpoint, dict):
            try:
                found = read_message({**checkpoint, "role": "system"})
            except lenient.Unrepairable:
                found = None
            if isinstance(found, SystemMessage):
                context.system_messages.append(found)
        context.messages.append(
            CompactionSummaryMessage(
                summary=str(compaction.get("summary", "")),
                tokens_before=_whole_number(compaction.get("tokensBefore")),
                timestamp=_entry_ms(compaction),
            )
        )
    for entry in kept:
        _append_context_message(context, entry, memo, edits)
    for entry in after:
        _append_context_message(context, entry, memo, edits)
    return context


CONTEXT_EDIT = "context_edit"
"""pi 1.x: an entry that changes what one earlier entry gives the model (see ``_latest_edits``)."""

_OMITTED = object()
"""What ``_edit_of`` answers for an entry a context edit leaves out of the context."""


def _is_system_entry(entry: RawEntry) -> bool:
    message = entry.get("message") if entry.get("type") == "message" else None
    return type(message) is dict and message.get("role") == "system"


def _latest_edits(entries: Iterable[RawEntry]) -> dict[str, RawEntry]:
    """Target id -> the last context edit of it among ``entries`` (the context's own entries:
    an edit that a compaction summarised away no longer applies, as in pi)."""
    edits: dict[str, RawEntry] = {}
    for entry in entries:
        if entry.get("type") == CONTEXT_EDIT:
            target = entry.get("targetId")
            if isinstance(target, str):
                edits[target] = entry
    return edits


def _edit_of(entry: RawEntry, edits: Mapping[str, RawEntry]) -> Any:
    """None (no usable edit), ``_OMITTED``, or the replacement content for ``entry``."""
    edit = edits.get(entry.get("id"))  # type: ignore[arg-type]
    if edit is None:
        return None
    replacement = edit.get("replacement")
    if replacement is None:
        return _OMITTED
    if not isinstance(replacement, dict) or not isinstance(replacement.get("content"), str | list):
        return None  # an edit no model could take: the entry stays as it was
    return replacement["content"]


def _edited_entry(entry: RawEntry, content: Any) -> RawEntry:
    """``entry`` with its message content replaced (only the roles whose content pi replaces)."""
    kind = entry.get("type")
    if kind == "custom_message":
        return {**entry, "content": content}
    message = entry.get("message") if kind == "message" else None
    if not isinstance(message, dict):
        return entry
    role = message.get("role")
    if role not in ("user", "assistant", "toolResult", "custom", "hookMessage"):
        return entry
    if role in ("assistant", "toolResult") and isinstance(content, str):
        content = [{"type": "text", "text": content}]  # these roles hold block lists only
    return {**entry, "message": {**message, "content": content}}


def session_settings(path: Iterable[RawEntry]) -> SessionContext:
    """The model, thinking level and injected rules of a branch, without its messages.

    Startup needs only these to choose a model; the messages (most of a build's cost on a long
    session) wait until something needs them.
    """
    path = path if isinstance(path, list) else list(path)
    settings = SessionContext()
    # The last word on the model and on the thinking level wins, so both are taken from the
    # end; injected rules add up, in path order. One pass that reads only each entry's type
    # (a branch of 50,000 entries without a thinking change is walked whole).
    model: ModelRef | None = None
    level: str | None = None
    injections: list[RawEntry] = []
    for entry in reversed(path):
        kind = entry.get("type")
        if kind == "ttsr_injection":
            injections.append(entry)
        elif kind == "thinking_level_change":
            level = level or _thinking_of(entry)
        elif model is None and (kind == "message" or kind == "model_change"):
            model = _model_of(entry)
    settings.model = model
    if level is not None:
        settings.thinking_level = level
    for entry in reversed(injections):
        _note_settings(settings, entry)
    return settings


def extend_session_context(
    context: SessionContext, added: Iterable[RawEntry], memo: dict[str, Any] | None = None
) -> SessionContext | None:
    """``context`` grown by entries appended below its leaf (in path order), or None when one of
    them changes what came before (a compaction, a reset boundary) and only a full build will do.

    A turn appends a few entries to a path of tens of thousands; walking the whole path again
    for each of the agent's builds was most of a turn's work on a long session.
    """
    grown = SessionContext(
        messages=list(context.messages),
        thinking_level=context.thinking_level,
        model=context.model,
        injected_ttsr_rules=list(context.injected_ttsr_rules),
        left_out=list(context.left_out),
        system_messages=list(context.system_messages),
        branch_system=list(context.branch_system),
    )
    for entry in added:
        if _note_settings(grown, entry) in _REBUILDS:
            return None
        declared = len(grown.system_messages)
        _append_context_message(grown, entry, memo)
        if len(grown.system_messages) > declared:  # a new system message: the loadout too
            grown.branch_system.append(grown.system_messages[-1])
    return grown


_REBUILDS = frozenset({"compaction", RESET_BOUNDARY, CONTEXT_EDIT})


def _note_settings(context: SessionContext, entry: RawEntry) -> Any:
    """Apply what ``entry`` says about the model, thinking level or injected rules; its type."""
    kind = entry.get("type")
    if kind == "thinking_level_change":
        context.thinking_level = _thinking_of(entry) or context.thinking_level
    elif kind in ("model_change", "message"):
        context.model = _model_of(entry) or context.model
    elif kind == "ttsr_injection":
        rules = entry.get("injectedRules")
        for name in rules if isinstance(rules, list) else ():
            if isinstance(name, str) and name not in context.injected_ttsr_rules:
                context.injected_ttsr_rules.append(name)
    return kind


def _model_of(entry: RawEntry) -> ModelRef | None:
    """The model ``entry`` says is in use: a model change, or the model of an assistant reply."""
    kind = entry.get("type")
    if kind == "model_change":
        return _model_from_change(entry)
    if kind == "message":
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            provider, model_id = message.get("provider"), message.get("model")
            if isinstance(provider, str) and isinstance(model_id, str):
                return ModelRef(provider, model_id)
    return None


def _thinking_of(entry: RawEntry) -> str | None:
    """The thinking level a ``thinking_level_change`` sets (oh-my-pi writes null for "off")."""
    if entry.get("type") != "thinking_level_change":
        return None
    level = entry.get("thinkingLevel")
    if level is None:
        return "off"
    return level if level in THINKING_LEVELS else None


def _model_from_change(entry: RawEntry) -> ModelRef | None:
    provider, model_id = entry.get("provider"), entry.get("modelId")
    if isinstance(provider, str) and isinstance(model_id, str):
        return ModelRef(provider, model_id)
    combined = entry.get("model")  # oh-my-pi: "provider/model-id"
    if isinstance(combined, str) and "/" in combined:
        provider, _, model_id = combined.partition("/")
        return ModelRef(provider, model_id)
    return None


def _entry_ms(entry: RawEntry) -> int:
    moment = parse_iso(str(entry.get("timestamp", "")))
    return int(moment.timestamp() * 1000) if moment else 0


def _whole_number(value: Any) -> int:
    """A count read from a file: numbers as they are, anything else 0 (as pi's arithmetic would
    make of it nothing useful either)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return 0
    return int(value) if abs(value) < 2**63 else 0


_NOT_IN_CONTEXT = object()
"""Memo value of an entry that contributes no message (a settings change, an empty summary)."""


def _memo_message(entry: RawEntry, memo: dict[str, Any] | None) -> Any:
    """The message ``entry`` contributes, an :class:`lenient.Unrepairable`, or
    ``_NOT_IN_CONTEXT``; from ``memo`` when an earlier build made it."""
    entry_id = entry.get("id")
    found = memo.get(entry_id, None) if memo is not None else None  # type: ignore[arg-type]
    if found is None:
        try:
            found = _context_message(entry)
        except lenient.Unrepairable as error:
            found = error
        if found is None:
            found = _NOT_IN_CONTEXT
        if memo is not None and isinstance(entry_id, str):
            memo[entry_id] = found
    return found


def _append_context_message(
    context: SessionContext,
    entry: RawEntry,
    memo: dict[str, Any] | None,
    edits: Mapping[str, RawEntry] | None = None,
) -> None:
    # The membership test first: edits are few, entries are tens of thousands.
    edit = _edit_of(entry, edits) if edits and entry.get("id") in edits else None
    if edit is _OMITTED:
        return
    if edit is None:
        found = _memo_message(entry, memo)
    else:  # an edited message is the branch's own view of the entry: never memoised
        try:
            found = _context_message(_edited_entry(entry, edit)) or _NOT_IN_CONTEXT
        except lenient.Unrepairable as error:
            found = error
    if isinstance(found, lenient.Unrepairable):
        context.left_out.append((str(entry.get("id")), found.problem))
    elif isinstance(found, SystemMessage):
        context.system_messages.append(found)
    elif found is not _NOT_IN_CONTEXT:
        context.messages.append(found)


def _context_message(entry: RawEntry) -> Any | None:
    """The agent message ``entry`` puts into the context (None: none); raises
    :class:`lenient.Unrepairable` for one that cannot be sent."""
    kind = entry.get("type")
    if kind == "message":
        return read_message(entry.get("message"))
    if kind == "custom_message":
        return read_message(
            {
                "role": "custom",
                "customType": str(entry.get("customType", "")),
                "content": entry.get("content", ""),
                "display": entry.get("display", True) is not False,
                "details": entry.get("details"),
                "timestamp": _entry_ms(entry),
            }
        )
    if kind == "branch_summary":
        summary = entry.get("summary")
        if summary:
            return BranchSummaryMessage(
                summary=str(summary), from_id=str(entry.get("fromId", "")), timestamp=_entry_ms(entry)
            )
    return None


# --- conversion to provider messages --------------------------------------------------------


def bash_execution_text(message: BashExecutionMessage) -> str:
    """How a user's ``!command`` is shown to the model."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def convert_to_llm(messages: Iterable[Any]) -> list[LlmMessage]:
    """Agent messages -> user / assistant / toolResult messages, in order.

    Roles the model must not see (``!!`` commands, unknown roles) are left out.
    """
    converted: list[LlmMessage] = []
    for message in messages:
        if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
            converted.append(message)
        elif isinstance(message, BashExecutionMessage):
            if not message.exclude_from_context:
                converted.append(_user_text(bash_execution_text(message), message.timestamp))
        elif isinstance(message, CustomMessage):
            content = message.content
            blocks: list[UserBlock] = (
                [TextContent(text=content)] if isinstance(content, str) else list(content)
            )
            converted.append(UserMessage(content=blocks, timestamp=message.timestamp))
        elif isinstance(message, BranchSummaryMessage):
            text = BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX
            converted.append(_user_text(text, message.timestamp))
        elif isinstance(message, CompactionSummaryMessage):
            text = COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX
            converted.append(_user_text(text, message.timestamp))
    return converted


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)
