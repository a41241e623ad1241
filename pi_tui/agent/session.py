"""AgentSession: the agent loop on top of a SessionManager.

``prompt(text)`` appends the user message and runs turns until the model stops asking for tools:
stream one assistant message from the context rebuilt from the session, run its tool calls one
after another, append the results, go again. Every message is saved as it ends; the file is
fsynced at the end of every turn. Everything that happens is an :class:`AgentEvent` on the bus.

While a run is going the user can abort (stream and running tool stop, the message ends
``aborted``), queue a *steering* message (delivered after the current tool calls, before the next
model call; remaining tool calls of that turn are skipped) or a *follow-up* (delivered when the
agent would stop). ``run_bash`` records a user ``!command`` as a ``bashExecution`` message.

The TUI, the print/json/rpc modes and tests all drive exactly this API.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.agent.events import AgentEvent, EventBus, Subscriber
from pi_tui.agent.hooks import AgentHooks
from pi_tui.ai.errors import ConfigError, is_context_overflow
from pi_tui.ai.stream import AssistantStream, RetryInfo, StallInfo, stream_message
from pi_tui.ai.thinking import clamp_level
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.config.settings import Settings
from pi_tui.messages import (
    THINKING_LEVELS,
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    now_ms,
)
from pi_tui.secrets.active import hiding_secrets
from pi_tui.secrets.active import inbound as reveal_secrets
from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.system_replay import active_tool_names, replayed_content, system_prompt_with
from pi_tui.text_safety import clean_text, clean_value, show_name
from pi_tui.tools import ALL_TOOL_NAMES
from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult
from pi_tui.ttsr.coordinator import INJECTION_TYPE, TtsrCoordinator

TTSR_RETRY_DELAY = 0.05
"""Pause between a rule's interrupt and the retry, so a user action in between wins."""
SKIPPED_TEXT = "Skipped: the user sent a new message before this tool ran."
ABORTED_TOOL_TEXT = "Aborted by the user."
BLOCKED_PREFIX = "Blocked: "
"""Start of the result of a tool call an extension refused (the reason follows)."""

KeyResolver = Callable[[Model], StreamOptions]
"""Gives the request options (API key, headers) for a model; raises ConfigError without a key."""


@dataclass(slots=True)
class NavigationResult:
    editor_text: str | None = None
    """The selected user message's text, for the editor (None for other entries)."""
    summary_entry_id: str | None = None
    already_there: bool = False
    cancelled_by: str | None = None
    """Set when an extension's ``session_before_tree`` handler cancelled the move."""


class CompactionFailed(Exception):
    """The summary request for a compaction failed; the message says why."""


class AgentBusyError(RuntimeError):
    """A prompt arrived while the agent is running and no queueing behaviour was given."""


@dataclass(slots=True)
class QueuedMessage:
    text: str
    images: list[ImageContent] = field(default_factory=list)
    message: Any = None
    """A message made elsewhere (an extension's custom message), sent as it is."""

    def to_message(self) -> Any:
        return self.message if self.message is not None else user_message(self.text, self.images)


BUILT_IN_TOOL_NAMES = frozenset(ALL_TOOL_NAMES)


class AgentSession:
    def __init__(
        self,
        manager: SessionManager,
        model: Model,
        *,
        tools: Sequence[AgentTool] = (),
        system_prompt: str = "",
        thinking_level: str = "off",
        settings: Settings | None = None,
        request_options: KeyResolver | None = None,
        cwd: str | Path | None = None,
        ttsr: TtsrCoordinator | None = None,
    ) -> None:
        self.manager = manager
        self.model = model
        self.tools = list(tools)
        self.loadout_pool: list[AgentTool] = []
        """Built-in tools that are off but that a pi 1.x branch may declare on (see
        :meth:`active_tools`); startup fills it with those ``--tools`` allows."""
        self.system_prompt = system_prompt
        self.thinking_level = thinking_level
        self.settings = settings or Settings()
        self.cwd = Path(cwd or manager.cwd)
        # Every request of this agent (turns, compaction, branch summaries, extensions') hides
        # secrets; the provider layer is handed the transformer and knows nothing of them.
        self._request_options = hiding_secrets(request_options or (lambda _model: StreamOptions()))
        self.bus = EventBus()
        self.steering: list[QueuedMessage] = []
        self.follow_ups: list[QueuedMessage] = []
        self._run_task: asyncio.Task[Any] | None = None
        self._stream: AssistantStream | None = None
        self._tool_task: asyncio.Task[ToolResult] | None = None
        self._bash_task: asyncio.Task[Any] | None = None
        self._aborted = False
        self.ttsr = ttsr
        self._save_listener: Callable[[str], None] | None = None
        self.hooks: AgentHooks = AgentHooks()
        """What extensions change (see :mod:`pi_tui.agent.hooks`); nothing by default."""
        self.session_listeners: list[Callable[..., None]] = []
        """Told when something outside a run changed the session (a label, the name...)."""
        self._run_system_prompt: str | None = None
        self.expander: Any = None
        """Expands ``/skill:name`` and prompt-template lines (a PromptExpander; None: none)."""
        self._record_initial_state()
        self._restore_ttsr()

    # --- events and state -------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        return self.bus.subscribe(subscriber)

    def emit(self, event_type: str, **data: Any) -> AgentEvent:
        return self.bus.emit(event_type, **data)

    @property
    def is_streaming(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    @property
    def run_task(self) -> asyncio.Task[Any] | None:
        """The task running the current run, if any."""
        return self._run_task

    @property
    def current_system_prompt(self) -> str:
        """The system prompt of the current run (an extension may change it per run)."""
        return self._run_system_prompt if self._run_system_prompt is not None else self.system_prompt

    def emit_session_changed(self, what: str, **details: Any) -> None:
        """Tell the listeners that ``what`` changed in the session outside a run (``label``
        with ``entry_id`` and ``label``, ``name``, ``tree``, ``shutdown``)."""
        for listener in list(self.session_listeners):
            listener(what, **details)

    @property
    def messages(self) -> list[Any]:
        """The agent messages of the current branch (what the model sees, before conversion)."""
        return self.manager.build_session_context().messages

    def state(self) -> dict[str, Any]:
        """Snapshot for ``get_state`` (pi's field names)."""
        return {
            "model": self.model.model_dump(by_alias=True, exclude_none=True),
            "thinkingLevel": self.thinking_level,
            "isStreaming": self.is_streaming,
            "isCompacting": False,
            "steeringMode": self.settings.steering_mode,
            "followUpMode": self.settings.follow_up_mode,
            "sessionFile": str(self.manager.session_file) if self.manager.session_file else None,
            "sessionId": self.manager.session_id,
            "sessionName": self.manager.get_session_name(),
            "autoCompactionEnabled": self.settings.compaction.enabled,
            "messageCount": len(self.messages),
            "pendingMessageCount": len(self.steering) + len(self.follow_ups),
        }

    @property
    def ttsr_abort_pending(self) -> bool:
        """A rule just cut the stream: the UI shows the cut reply as a normal stop."""
        return self.ttsr is not None and self.ttsr.abort_pending

    def _restore_ttsr(self) -> None:
        """The rules already injected on the current branch do not fire again (``once``)."""
        if self.ttsr is not None:
            self.ttsr.restore(self.manager.build_session_settings().injected_ttsr_rules)

    def set_ttsr(self, ttsr: Any) -> None:
        """Rules read again (``/reload``): the new coordinator knows which already fired here."""
        self.ttsr = ttsr
        self._restore_ttsr()

    def _record_initial_state(self) -> None:
        """New sessions start with the model and thinking level, as pi writes them; a resumed
        session gets a model_change only when the model differs from the branch's. A session
        shown read-only (another agent's transcript being followed) records nothing."""
        if self.manager.read_only:
            return
        context = self.manager.build_session_settings()
        current = context.model
        if current is None or (current.provider, current.model_id) != (self.model.provider, self.model.id):
            self.manager.append_model_change(self.model.provider, self.model.id)
        if len(self.manager) <= 1 or context.thinking_level != self.thinking_level:
            self.manager.append_thinking_level_change(self.thinking_level)

    def replace_manager(self, manager: SessionManager) -> None:
        """Continue in another session (new, switched to, forked): close the old file, record
        the model and thinking level in the new one if it does not have them."""
        if manager is not self.manager:
            self.manager.close()
        self.manager = manager
        if self._save_listener is not None:
            manager.save_listener = self._save_listener
        self.steering, self.follow_ups = [], []
        self._record_initial_state()
        self._restore_ttsr()

    def set_save_listener(self, listener: Callable[[str], None]) -> None:
        """Where one-line save problems go (disk full, I/O error: the entries stay in memory and
        are written when the file can take them). Kept for every session this agent continues."""
        self._save_listener = listener
        self.manager.save_listener = listener

    def adopt(
        self, manager: SessionManager, find_model: Callable[[str, str], Model | None] | None = None
    ) -> None:
        """Continue in ``manager`` (switched to, resumed, forked), dropping queued messages.

        With ``find_model`` (provider, id -> Model or None) an existing session continues with
        the model and thinking level it used, as pi does, when that model is known here.
        """
        self.clear_queues()
        if find_model is not None and len(manager):
            context = manager.build_session_settings()
            if context.model is not None:
                known = find_model(context.model.provider, context.model.model_id)
                if known is not None:
                    if known is not self.model:
                        self.hooks.notify(
                            "model_select", model=known, previous_model=self.model, source="restore"
                        )
                    self.model = known
            if context.thinking_level in THINKING_LEVELS:  # as it runs on this model (pi 1.x)
                self.thinking_level = clamp_level(self.model, context.thinking_level)
        self.replace_manager(manager)

    # --- model and thinking -------------------------------------------------------------------

    def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch model (recorded as an entry); the thinking level becomes the nearest the new
        model has (off for a model without reasoning), as pi 1.x clamps it.

        ``source`` is how it was chosen, for extensions: "set" (/model) or "cycle" (Ctrl+P).
        """
        previous = self.model
        self.model = model
        self.manager.append_model_change(model.provider, model.id)
        if clamp_level(model, self.thinking_level) != self.thinking_level:
            self.set_thinking_level(self.thinking_level)
        self.hooks.notify("model_select", model=model, previous_model=previous, source=source)

    def set_thinking_level(self, level: str) -> None:
        """Run at ``level``, or the nearest level the model has (``max`` on a model without it
        runs as ``high``); the level that runs is what the session records, as in pi 1.x."""
        if level not in THINKING_LEVELS:
            raise ValueError(f"Unknown thinking level {level!r}; use one of {', '.join(THINKING_LEVELS)}")
        level = clamp_level(self.model, level)
        previous = self.thinking_level
        self.thinking_level = level
        self.manager.append_thinking_level_change(level)
        if level != previous:  # pi 1.x tells json/rpc clients when the level really changed
            self.emit("thinking_level_changed", level=level)
        self.hooks.notify("thinking_level_select", level=level, previous_level=previous)

    # --- prompting -----------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] = (),
        *,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        accepted: Callable[[str], None] | None = None,
    ) -> AssistantMessage | None:
        """Run the agent on a new user message; returns the last assistant message.

        While the agent runs, ``streaming_behavior`` "steer" or "followUp" queues the message
        instead (returns None); without it a busy agent raises :class:`AgentBusyError`.

        Extensions see the text first: an extension command (``/name args``) runs instead of a
        turn, ``input`` handlers may change or answer the text, and ``before_agent_start`` may
        add messages and change this run's system prompt. ``source`` says who typed it
        ("interactive", "rpc", "print" or "extension").

        ``accepted`` hears what became of the text before any event of its run (pi 1.x's rpc
        ``disposition``): "handled" (an extension command or input handler took it), "queued"
        (steered or queued behind the running run) or "started".
        """
        hooks = self.hooks

        def tell(disposition: str) -> None:
            if accepted is not None:
                accepted(disposition)

        if text.startswith("/") and await hooks.run_command(text):
            tell("handled")
            return None
        if hooks.wants("input"):
            outcome = await hooks.input(text, images, source)
            if outcome.handled:
                tell("handled")
                return None
            text, images = outcome.text, outcome.images
        if self.expander is not None and text.startswith("/"):
            text = self.expander.expand(text) or text
        if self.is_streaming:
            if streaming_behavior == "steer":
                self.steer(text, images)
                tell("queued")
                return None
            if streaming_behavior in ("followUp", "follow_up"):
                self.follow_up(text, images)
                tell("queued")
                return None
            raise AgentBusyError("The agent is already running; steer or queue a follow-up instead.")
        self._run_task = asyncio.current_task()
        if accepted is not None:
            accepted("started")
            # The listener's answer goes out before the run's first event: a waiter woken by
            # it runs ahead of this task, which yields once here.
            await asyncio.sleep(0)
        try:
            first = [user_message(text, images), *hooks.take_next_turn_messages()]
            start = await hooks.before_agent_start(text, images, self.system_prompt)
            self._run_system_prompt = start.system_prompt
            return await self._run([*first, *start.messages])
        finally:
            self._run_task = None
            self._run_system_prompt = None

    async def run_messages(self, messages: Sequence[Any]) -> AssistantMessage | None:
        """Run the agent on messages made elsewhere (an extension's ``trigger_turn``); while a
        run is going they are queued as steering messages instead (returns None)."""
        if self.is_streaming:
            for message in messages:
                self.queue_message(message)
            return None
        self._run_task = asyncio.current_task()
        try:
            return await self._run(list(messages))
        finally:
            self._run_task = None

    def queue_message(self, message: Any, *, follow_up: bool = False) -> None:
        """Deliver ``message`` (a custom message) with the next steering or follow-up batch."""
        text = message.content if isinstance(message.content, str) else ""
        queue = self.follow_ups if follow_up else self.steering
        queue.append(QueuedMessage(text, [], message))
        self._queue_changed()

    def record_message(self, message: Any) -> None:
        """Save a message outside a run (an extension's custom message while idle)."""
        self.emit("message_start", message=message)
        self._append(message)
        self.manager.sync()
        self.emit("message_end", message=message)

    def steer(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        self.steering.append(QueuedMessage(text, list(images)))
        self._queue_changed()

    def follow_up(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        self.follow_ups.append(QueuedMessage(text, list(images)))
        self._queue_changed()

    def clear_queues(self) -> list[QueuedMessage]:
        """Take back every queued message the user typed (e.g. into the editor after an abort);
        messages queued by extensions stay for the next run."""
        taken = [item for item in self.steering + self.follow_ups if item.message is None]
        self.steering = [item for item in self.steering if item.message is not None]
        self.follow_ups = [item for item in self.follow_ups if item.message is not None]
        if taken:
            self._queue_changed()
        return taken

    def _queue_changed(self) -> None:
        self.emit(
            "queue_update",
            steering=[item.text for item in self.steering],
            followUp=[item.text for item in self.follow_ups],
        )

    def abort_retry(self) -> bool:
        """Cancel a retry wait (pi 1.x's rpc ``abort_retry``): the reply ends with the error
        that caused the wait and no further attempt is made. False when no reply is waiting."""
        stream = self._stream
        return stream is not None and stream.abort_retry()

    def set_session_name(self, name: str) -> None:
        """Name the session (an entry) and say so: ``session_info_changed`` for json/rpc/server
        clients, as pi 1.x, and the session listeners (``name``)."""
        self.manager.append_session_info(name)
        self.emit("session_info_changed", name=self.manager.get_session_name())
        self.emit_session_changed("name", name=self.manager.get_session_name())

    def abort(self) -> None:
        """Stop the running stream and tool now; the run ends after recording what happened."""
        self._aborted = True
        self.hooks.aborted()
        if self._stream is not None:
            self._stream.abort()
        if self._tool_task is not None and not self._tool_task.done():
            self._tool_task.cancel()
        if self._bash_task is not None and not self._bash_task.done():
            self._bash_task.cancel()

    # --- the loop ------------------------------------------------------------------------------

    async def _run(self, first: list[Any]) -> AssistantMessage | None:
        """One run and what follows it automatically (compaction), then ``agent_settled``:
        pi 1.x's word that nothing more happens without the user. ``aborted`` says whether the
        run was stopped by an abort."""
        try:
            return await self._run_turns(first)
        finally:
            self.emit("agent_settled", aborted=self._aborted)

    async def _run_turns(self, first: list[Any]) -> AssistantMessage | None:
        self._aborted = False
        produced: list[Any] = []
        self.emit("agent_start")
        last: AssistantMessage | None = None
        pending: list[Any] = list(first)
        try:
            overflow_retried = False
            while True:
                self.emit("turn_start")
                if self.ttsr is not None:
                    self.ttsr.turn_started()
                for message in pending:  # as pi: a turn's new user messages come after turn_start
                    await self._save(message, produced)
                pending = []
                assistant = await self._stream_assistant()
                produced.append(assistant)
                last = assistant
                results: list[ToolResultMessage] = []
                if self.ttsr is not None and self.ttsr.abort_pending and assistant.stop_reason == "aborted":
                    self._end_turn(assistant, results)
                    if await self._ttsr_retry(produced):
                        continue  # time travel: the same turn again, with the rule in context
                    break
                if assistant.stop_reason in ("error", "aborted"):
                    self._end_turn(assistant, results)
                    overflow = assistant.stop_reason == "error" and is_context_overflow(
                        assistant.error_message
                    )
                    if overflow and not overflow_retried and not self._aborted:
                        overflow_retried = True
                        if await self._auto_compact("overflow"):
                            continue  # one retry with the compacted context
                    break
                calls = [block for block in assistant.content if isinstance(block, ToolCall)]
                await self._run_tools(calls, results, produced)
                self._end_turn(assistant, results)
                self.manager.sync()
                if self._aborted:
                    break
                if self.ttsr is not None:
                    prose = self.ttsr.take_prose()
                    if prose:  # a non-interrupting rule matched the reply's text: remind, go on
                        self._inject_rules(prose, produced)
                        continue
                if self.steering:
                    taken = self._take(self.steering, self.settings.steering_mode)
                    pending = [queued.to_message() for queued in taken]
                    continue
                if calls:
                    continue
                if self.follow_ups:
                    taken = self._take(self.follow_ups, self.settings.follow_up_mode)
                    pending = [queued.to_message() for queued in taken]
                    continue
                break
        finally:
            self.manager.sync()
            # willRetry: pi 1.x may start another low-level run for a retry after agent_end;
            # pi-tui retries inside the run (the stream's own retries, the one overflow retry),
            # so a run that ended is never followed by a retry run.
            self.emit("agent_end", messages=produced, willRetry=False)
            if self.hooks.wants("agent_end"):
                await self.hooks.drain()  # a run ends when its handlers have seen it end
        if not self._aborted and last is not None and last.stop_reason not in ("error", "aborted"):
            await self._maybe_compact()
        return last

    def _end_turn(self, assistant: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.emit("turn_end", message=assistant, toolResults=results)
        if self.ttsr is not None:
            self.ttsr.turn_ended()

    # --- TTSR ------------------------------------------------------------------------------------

    async def _ttsr_retry(self, produced: list[Any]) -> bool:
        """After a rule cut the stream: wait a moment, inject the rule, go again.

        The pause lets a user action (Escape, a new prompt) win: then nothing is injected.
        """
        assert self.ttsr is not None
        await asyncio.sleep(TTSR_RETRY_DELAY)
        if self._aborted:
            self.ttsr.cancel_interrupt()
            return False
        rules = self.ttsr.take_interrupt()
        if not rules:
            return False
        self._inject_rules(rules, produced)
        return True

    def _inject_rules(self, rules: list[Any], produced: list[Any]) -> None:
        """The hidden ``ttsr-injection`` message + the ``ttsr_injection`` entry."""
        assert self.ttsr is not None
        names = [rule.name for rule in rules]
        details = {"rules": names, "contextMode": self.ttsr.context_mode}
        message = CustomMessage(
            custom_type=INJECTION_TYPE,
            content=self.ttsr.injection_text(rules),
            display=False,
            details=details,
            timestamp=now_ms(),
        )
        self.emit("message_start", message=message)
        self.manager.append_custom_message_entry(INJECTION_TYPE, message.content, False, details)
        self.manager.append_ttsr_injection(names)
        self.ttsr.mark_injected(names)
        produced.append(message)
        self.emit("message_end", message=message)

    # --- compaction -----------------------------------------------------------------------------

    def context_tokens(self) -> int:
        """Tokens the current context takes (last usage plus estimates of what followed it)."""
        from pi_tui.compaction.tokens import context_tokens

        return context_tokens(self.messages)

    def context_tokens_if_built(self) -> int | None:
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
                options = self._request_options(self.model)
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

    def _take(self, queue: list[QueuedMessage], mode: str) -> list[QueuedMessage]:
        """The queued messages for the next turn: the oldest one (``one-at-a-time``, the rest wait
        for the reply) or all of them (``all``). The mode is read at each turn, so a change in
        /settings applies to what is already queued."""
        count = len(queue) if mode == "all" else 1
        items = queue[:count]
        del queue[:count]
        self._queue_changed()
        return items

    async def _save(self, message: Any, produced: list[Any]) -> None:
        produced.append(await self._record(message))

    async def _record(self, message: Any) -> Any:
        """A finished message: announced, offered to extensions (which may replace it), saved,
        announced as ended. Returns the message as saved."""
        self.emit("message_start", message=message)
        message = await self._finished(message)
        self._append(message)
        self.emit("message_end", message=message)
        return message

    async def _finished(self, message: Any) -> Any:
        return await self.hooks.message_end(message) if self.hooks.wants("message_end") else message

    def _append(self, message: Any) -> None:
        if isinstance(message, CustomMessage):
            self.manager.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details
            )
        else:
            self.manager.append_message(message)

    def active_tools(self) -> list[AgentTool]:
        """The tools the model is offered now.

        A branch pi 1.x wrote declares its own loadout in system messages (``write`` removed,
        ``grep`` added...): those of our tools are on, in the branch's order, plus extension
        tools it never mentioned. A branch without one (every 0.73 or pi-tui file) gets
        :attr:`tools` as they are.
        """
        declared = self.manager.build_session_context().branch_system
        if not declared:
            return self.tools
        pool = {tool.name: tool for tool in self.tools}
        for tool in self.loadout_pool:
            pool.setdefault(tool.name, tool)
        names = active_tool_names(declared, list(pool), BUILT_IN_TOOL_NAMES)
        return [pool[name] for name in names or ()]

    def build_context(self, messages: list[Any] | None = None) -> Context:
        """The request's context: the branch's messages (or ``messages``, as an extension's
        ``context`` handler left them), this run's system prompt, the active tools.

        The system prompt is ours, after any text a pi 1.x branch's system messages added."""
        session = self.manager.build_session_context()
        if messages is None:
            messages = session.messages
        messages = convert_to_llm(keep_ttsr_partials(messages))
        if self.settings.images.block_images:  # read at each request: a /settings change applies at once
            from pi_tui.ai.transform import block_images

            messages = block_images(messages)
        tools = [
            Tool(name=t.name, description=t.description, parameters=t.parameters) for t in self.active_tools()
        ]
        prompt = system_prompt_with(replayed_content(session.system_messages), self.current_system_prompt)
        # clean_text: the cwd, an argv --system-prompt or a context file may hold bytes that are
        # not UTF-8; a lone surrogate in the request would be refused by a strict provider.
        return Context(system_prompt=clean_text(prompt), messages=messages, tools=tools)

    async def _stream_assistant(self) -> AssistantMessage:
        try:
            options = self._request_options(self.model)
        except ConfigError as error:
            return await self._failed_message(str(error))
        options.thinking = self.thinking_level  # type: ignore[assignment]
        retry = self.settings.retry
        if not retry.enabled:  # read per request: rpc's set_auto_retry switches it mid-session
            options.max_retries = 0
        # pi 1.x's retry.maxAgentDelayMs: the backoff stops growing there, and a server asking
        # for a longer wait (Retry-After) fails the reply instead of holding the session.
        options.max_delay = retry.max_agent_delay_ms / 1000
        retry_state: dict[str, int] = {}

        def on_retry(info: RetryInfo) -> None:
            retry_state["attempt"] = info.attempt
            self.emit(
                "auto_retry_start",
                attempt=info.attempt,
                maxAttempts=info.max_retries,
                delayMs=int(info.delay * 1000),
                errorMessage=info.error,
            )

        def on_stall(info: StallInfo) -> None:
            # A silent server: how long, and when the reply is given up (see ai.stream.IdleLimits).
            self.emit(
                "stream_stall",
                stalled=info.idle_seconds > 0,
                idleSeconds=info.idle_seconds,
                timeoutSeconds=info.timeout,
                receivedData=info.received,
            )

        from pi_tui.ai.http import idle_limits  # httpIdleTimeoutMs over retry.* when set

        idle = idle_limits(self.settings)
        hooks = self.hooks
        messages = None
        if hooks.wants("context"):
            messages = await hooks.context(self.manager.build_session_context().messages)
        stream = stream_message(
            self.model,
            self.build_context(messages),
            options,
            on_retry=on_retry,
            idle=idle,
            on_stall=on_stall,
            on_payload=hooks.before_provider_request if hooks.wants("before_provider_request") else None,
            on_response=hooks.after_provider_response if hooks.wants("after_provider_response") else None,
        )
        self._stream = stream
        if self._aborted:
            stream.abort()
        started = False
        try:
            async for event in stream:
                if event.type in ("done", "error"):
                    break
                if not started:
                    started = True
                    # pi 1.x: the reply under way has stopReason "pending" until message_end
                    start = event.partial.model_copy(update={"stop_reason": "pending"})
                    self.emit("message_start", message=start)
                if event.type == "start":
                    continue  # told by message_start, as pi's loop does (no update carries it)
                self.emit("message_update", assistantMessageEvent=event)
                if self.ttsr is not None and event.type.endswith("_delta"):
                    rules = self.ttsr.check(event)
                    if rules:
                        stream.abort()  # at once: no further chunk is read
                        self.emit(
                            "ttsr_triggered",
                            rules=[rule_summary(rule) for rule in rules],
                            scope=_stream_scope(event),
                            cutText=_cut_text(event),
                        )
            message = await stream.result()
        finally:
            self._stream = None
        message.thinking_level = options.thinking  # pi 1.x records the level this reply asked for
        if not started:
            self.emit("message_start", message=message)
        message = await self._finished(message)
        self.manager.append_message(message)
        if self.ttsr is not None:
            self.ttsr.message_ended(message.stop_reason)
        self.emit("message_end", message=message)
        if "attempt" in retry_state:  # after the reply it ends, as pi 1.x
            done = message.stop_reason not in ("error",)
            extra = {} if done else {"finalError": message.error_message}
            self.emit("auto_retry_end", success=done, attempt=retry_state["attempt"], **extra)
        return message

    async def _failed_message(self, error: str) -> AssistantMessage:
        """A reply that failed before any request (no API key). pi reads ``usage`` of every
        assistant message without a guard (its footer crashed on this one), so it gets zeros."""
        message = AssistantMessage(
            content=[],
            api=self.model.api,
            provider=self.model.provider,
            model=self.model.id,
            usage=Usage(),
            stop_reason="error",
            error_message=error,
            timestamp=now_ms(),
        )
        return await self._record(message)

    async def _run_tools(
        self, calls: list[ToolCall], results: list[ToolResultMessage], produced: list[Any]
    ) -> None:
        by_name = {tool.name: tool for tool in self.active_tools()}
        hooks = self.hooks
        gated, reshaped = hooks.wants("tool_call"), hooks.wants("tool_result")
        for index, call in enumerate(calls):
            self.emit("tool_execution_start", toolCallId=call.id, toolName=call.name, args=call.arguments)
            duration_ms: int | None = None
            # Extensions may change the arguments in place: never the saved call's own dict.
            arguments = copy.deepcopy(call.arguments) if gated or reshaped else dict(call.arguments)
            # Placeholders the model was shown become the real values again (a new dict: the
            # saved call keeps what the model sent).
            arguments = reveal_secrets(arguments)
            blocked = None
            if gated and not self._aborted:
                await hooks.drain()  # a gate has seen every event before the call it judges
                blocked = await hooks.tool_call(call.id, call.name, arguments)
            if self._aborted:
                result = ToolResult.text(ABORTED_TOOL_TEXT)
                result.is_error = True
            elif self.steering and index > 0:
                result = ToolResult.text(SKIPPED_TEXT)
                result.is_error = True
            elif blocked is not None:
                result = ToolResult.text(f"{BLOCKED_PREFIX}{blocked}")
                result.is_error = True
            else:
                tool = by_name.get(call.name)
                began = time.monotonic()
                result = await self._execute(tool, call, arguments)
                if tool is not None:  # pi 1.x: how long execute() took; absent when it did not run
                    duration_ms = max(0, round((time.monotonic() - began) * 1000))
            result = clean_result(result)
            if reshaped:
                result = clean_result(await hooks.tool_result(call.id, call.name, arguments, result))
            reminder, reminded = self.ttsr.reminder_for(call.id) if self.ttsr is not None else (None, [])
            content = list(result.content)
            if reminder is not None:
                content.insert(0, TextContent(text=reminder))
                result.content = content
            message = ToolResultMessage(
                tool_call_id=call.id,
                tool_name=call.name,
                content=content,
                is_error=result.is_error,
                timestamp=now_ms(),
            )
            if result.details is not None:
                message.details = result.details
            results.append(message)
            self.emit(
                "tool_execution_end",
                toolCallId=call.id,
                toolName=call.name,
                result={"content": result.content, "details": result.details},
                isError=result.is_error,
                **({} if duration_ms is None else {"durationMs": duration_ms}),
            )
            await self._save(message, produced)
            if reminded and self.ttsr is not None:
                self.manager.append_ttsr_injection(reminded)
                self.ttsr.mark_injected(reminded)

    async def _execute(self, tool: AgentTool | None, call: ToolCall, arguments: dict[str, Any]) -> ToolResult:
        if tool is None:
            available = ", ".join(t.name for t in self.active_tools()) or "none"
            return _error_result(f"Tool {call.name!r} is not available (available: {available}).")

        def on_update(partial: ToolResult) -> None:
            partial = clean_result(partial)
            self.emit(
                "tool_execution_update",
                toolCallId=call.id,
                toolName=call.name,
                args=call.arguments,
                partialResult={"content": partial.content, "details": partial.details},
            )

        context = ToolContext(
            cwd=self.cwd,
            on_update=on_update,
            shell_path=self.settings.shell_path,
            command_prefix=self.settings.shell_command_prefix,
        )
        task = asyncio.ensure_future(tool.execute(call.id, arguments, context))
        self._tool_task = task
        try:
            return await task
        except asyncio.CancelledError:
            if not self._aborted:
                raise  # our own task is being cancelled: let it go
            return _error_result(ABORTED_TOOL_TEXT)
        except ToolError as error:
            return _error_result(str(error), error.details if error.details is not None else {})
        except Exception as error:  # a tool bug: the model hears about it, the loop goes on
            return _error_result(f"{call.name} failed: {type(error).__name__}: {error}", {})
        finally:
            self._tool_task = None

    # --- moving in the tree --------------------------------------------------------------------

    async def navigate_tree(
        self, target_id: str, *, summarize: bool = False, custom_focus: str | None = None
    ) -> NavigationResult:
        """Move to ``target_id`` (the /tree selection), optionally summarising what is left.

        Selecting a user (or custom) message puts the leaf on its parent and hands its text back
        for the editor, so the next prompt becomes a sibling; any other entry becomes the leaf.
        With ``summarize`` the abandoned entries are summarised first and a ``branch_summary``
        is appended at the new position. Cancelling the awaiting task cancels the summary and
        leaves the session where it was.
        """
        from pi_tui.compaction.branch_summary import collect_entries_for_branch_summary, summarize_branch
        from pi_tui.compaction.request import CompactionError

        entry = self.manager.get_entry(target_id)
        if entry is None:
            raise ValueError(f"Entry {target_id} not found")
        old_leaf = self.manager.get_leaf_id()
        if target_id == old_leaf:
            return NavigationResult(already_there=True)
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
                options = self._request_options(self.model)
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
        self.hooks.notify(
            "session_tree",
            new_leaf_id=self.manager.get_leaf_id(),
            old_leaf_id=old_leaf,
            summary_entry=self.manager.get_entry(summary_id) if summary_id else None,
            from_extension=summary_id is not None and given is not None,
        )
        return NavigationResult(editor_text=editor_text, summary_entry_id=summary_id)

    # --- user shell commands --------------------------------------------------------------------

    async def run_bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_chunk: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run a user ``!command`` (``!!`` excludes it from the context) and record it.

        Same runner as the bash tool (own process group, bounded output with the full text in a
        temp file when cut); :meth:`abort` kills it and the message records ``cancelled``.
        ``on_chunk`` gets the output as it comes, every byte (rpc's ``bash_execution_update``),
        decoded as the output is (bytes that are not UTF-8 become U+FFFD).
        """
        import codecs

        from pi_tui.tools.bash import OutputBuffer, run_command

        if self.hooks.wants("user_bash"):
            given = await self.hooks.user_bash(command, exclude_from_context, str(self.cwd))
            if given is not None:  # an extension ran it its own way (a remote shell...)
                return await self._record_bash(command, exclude_from_context, given)
        buffers: list[OutputBuffer] = []
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        seen = [0]

        def on_output(buffer: OutputBuffer) -> None:
            if not buffers:
                buffers.append(buffer)
            if on_chunk is not None and buffer.total_bytes > seen[0]:
                # Called after each chunk the buffer took: its newest chunk is the new output.
                fresh = buffer._chunks[-1][-(buffer.total_bytes - seen[0]) :]
                seen[0] = buffer.total_bytes
                text = decoder.decode(fresh)
                if text:
                    on_chunk(clean_text(text))

        task = asyncio.ensure_future(
            run_command(
                command,
                self.cwd,
                on_output=on_output,
                shell_path=self.settings.shell_path,
                command_prefix=self.settings.shell_command_prefix,
            )
        )
        self._bash_task = task
        self._aborted = False
        exit_code: int | None = None
        cancelled = False
        try:
            result = await task
            exit_code = result.exit_code
            buffer: OutputBuffer | None = result.output
        except asyncio.CancelledError:
            if not self._aborted:
                raise
            cancelled = True
            buffer = buffers[0] if buffers else None
        finally:
            self._bash_task = None
        if on_chunk is not None:
            rest = decoder.decode(b"", final=True)
            if rest:
                on_chunk(rest)
        output, truncated, full_path = "", False, None
        if buffer is not None:
            cut = buffer.tail()
            output, truncated = cut.content, cut.truncated
            buffer.finish(keep_file=truncated)
            full_path = buffer.file_path if truncated else None
        message = BashExecutionMessage(
            command=clean_text(command),
            output=clean_text(output),
            exit_code=exit_code,
            cancelled=cancelled,
            truncated=truncated,
            timestamp=now_ms(),
            exclude_from_context=exclude_from_context,
        )
        if full_path:
            message.full_output_path = show_name(full_path)
        await self._record(message)
        self.manager.sync()
        return message

    async def _record_bash(self, command: str, exclude: bool, given: dict[str, Any]) -> BashExecutionMessage:
        """Record the result an extension's ``user_bash`` handler gave instead of a run."""
        code = given.get("exit_code", given.get("exitCode"))
        message = BashExecutionMessage(
            command=clean_text(command),
            output=clean_text(str(given.get("output", ""))),
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            cancelled=bool(given.get("cancelled", False)),
            truncated=bool(given.get("truncated", False)),
            timestamp=now_ms(),
            exclude_from_context=exclude,
        )
        await self._record(message)
        self.manager.sync()
        return message


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


SMALL_SESSION_ENTRIES = 2_000
"""Sessions up to this size have their context built whenever the footer asks (milliseconds)."""


def _stream_scope(event: Any) -> str:
    """Where a rule matched: ``text``, ``thinking`` or ``tool:<name>`` (as rules scope it)."""
    if event.type == "thinking_delta":
        return "thinking"
    if event.type == "toolcall_delta" and event.tool_call is not None:
        return f"tool:{event.tool_call.name}"
    return "text"


def _cut_text(event: Any) -> str:
    """The reply's output of that scope up to the cut (what the rule saw break it)."""
    if event.type == "toolcall_delta" and event.tool_call is not None:
        return _json_text(event.tool_call.arguments)
    kind = ThinkingContent if event.type == "thinking_delta" else TextContent
    block = (
        event.partial.content[event.content_index]
        if event.content_index < len(event.partial.content)
        else None
    )
    if isinstance(block, kind):
        return block.thinking if isinstance(block, ThinkingContent) else block.text
    return event.delta or ""


def _json_text(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def rule_summary(rule: Any) -> dict[str, Any]:
    """A rule as events carry it (JSON-friendly)."""
    return {
        "name": rule.name,
        "path": str(rule.path) if rule.path else None,
        "description": rule.description,
        "content": rule.content,
        "interruptMode": rule.interrupt_mode,
    }


def keep_ttsr_partials(messages: list[Any]) -> list[Any]:
    """With ``contextMode: keep`` the reply a rule cut stays in the context the model sees.

    Saved replies keep ``stopReason: aborted`` (which providers never resend); a reply directly
    followed by a keep-mode injection is resent as a normal reply, without the tool calls that
    never ran.
    """
    out = list(messages)
    for index, message in enumerate(out):
        if (
            index > 0
            and isinstance(message, CustomMessage)
            and message.custom_type == INJECTION_TYPE
            and isinstance(message.details, dict)
            and message.details.get("contextMode") == "keep"
        ):
            previous = out[index - 1]
            if isinstance(previous, AssistantMessage) and previous.stop_reason == "aborted":
                kept = [block for block in previous.content if not isinstance(block, ToolCall)]
                out[index - 1] = previous.model_copy(update={"stop_reason": "stop", "content": kept})
    return out


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


def user_message(text: str, images: Sequence[ImageContent] = ()) -> UserMessage:
    """pi stores prompts as content arrays: the text block, then any images.

    The text passes :func:`clean_text`: words from argv or a paste may hold bytes that are not
    UTF-8 (as lone surrogates), which no session line or request may carry.
    """
    blocks: list[TextContent | ImageContent] = [TextContent(text=clean_text(text)), *images]
    return UserMessage(content=blocks, timestamp=now_ms())


def clean_result(result: ToolResult) -> ToolResult:
    """``result`` with no lone surrogate left in its text or details (see
    :mod:`pi_tui.text_safety`): a path or an error message from a tool may hold bytes that are
    not UTF-8, and the message must still save, send and print."""
    content = [_clean_block(block) for block in result.content]
    return ToolResult(content, clean_value(result.details), result.is_error)


def _clean_block(block: TextContent | ImageContent) -> TextContent | ImageContent:
    if isinstance(block, TextContent):
        text = clean_text(block.text)
        if text is not block.text:
            return block.model_copy(update={"text": text})
    return block


def _error_result(text: str, details: Any = None) -> ToolResult:
    return ToolResult([TextContent(text=text)], details, is_error=True)
