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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.events import AgentEvent, EventBus, Subscriber
from pi_tui.agent.file_restore import FileRestoreMixin
from pi_tui.agent.file_turns import TurnFiles, notice_event
from pi_tui.agent.history import (
    HistoryMixin,
    KeyResolver,
)
from pi_tui.agent.hooks import AgentHooks
from pi_tui.agent.tool_calls import ToolCallsMixin
from pi_tui.agent.ttsr_turns import TtsrMixin, cut_text, keep_ttsr_partials, rule_summary, stream_scope
from pi_tui.agent.user_bash import UserBashMixin
from pi_tui.ai.errors import ConfigError, is_context_overflow
from pi_tui.ai.events import StreamEvent, without_events
from pi_tui.ai.stream import AssistantStream, RetryInfo, StallInfo, stream_message
from pi_tui.ai.thinking import clamp_level
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.config.settings import Settings
from pi_tui.messages import (
    THINKING_LEVELS,
    AssistantMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserBlock,
    UserMessage,
    now_ms,
)
from pi_tui.secrets.active import hiding_secrets
from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.system_replay import active_tool_names, replayed_content, system_prompt_with
from pi_tui.text_safety import clean_text
from pi_tui.tools import ALL_TOOL_NAMES
from pi_tui.tools.base import AgentTool, ToolResult
from pi_tui.ttsr.coordinator import TtsrCoordinator

if TYPE_CHECKING:
    from pi_tui.mcp.manager import McpManager


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


class AgentSession(HistoryMixin, FileRestoreMixin, ToolCallsMixin, UserBashMixin, TtsrMixin):
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
        self.mcp: McpManager | None = None
        """The session's MCP servers (pi_tui/mcp/manager.py); their tools join :meth:`active_tools`."""
        self.files = TurnFiles(lambda: self.manager, notice_event(self.emit))
        """File checkpoints around each turn's tools (off until startup gives it a history)."""
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
        self.files.forget()
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
                self.files.turn_started()
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
                turn_id = self.manager.get_leaf_id()
                before = await self.files.before_tools(calls) if calls else None
                await self._run_tools(calls, results, produced)
                if calls:
                    self.files.after_tools(turn_id, before)
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
            await self.files.run_ended()
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
        await self.files.settle()  # the last turn's checkpoint entry comes first
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
            return self._with_mcp(self.tools)
        pool = {tool.name: tool for tool in self.tools}
        for tool in self.loadout_pool:
            pool.setdefault(tool.name, tool)
        names = active_tool_names(declared, list(pool), BUILT_IN_TOOL_NAMES)
        return self._with_mcp([pool[name] for name in names or ()])

    def _with_mcp(self, tools: list[AgentTool]) -> list[AgentTool]:
        """``tools`` and the MCP tools offered now: direct ones, and deferred ones ``tool_search``
        loaded on this branch (a name a tool of ours already has stays ours)."""
        mcp_tools = self.mcp.agent_tools() if self.mcp is not None else ()
        if not mcp_tools:
            return tools
        from pi_tui.mcp.tools import visible_tools

        have = {tool.name for tool in tools}
        loaded = self.mcp.loaded_names() if self.mcp is not None else set()
        return [*tools, *(tool for tool in visible_tools(mcp_tools, loaded) if tool.name not in have)]

    def mcp_loaded_names(self) -> set[str]:
        """The deferred MCP tools ``tool_search`` loaded on the current branch."""
        from pi_tui.mcp.tool_search import loaded_on_branch

        manager = self.manager
        raw = (manager.get_raw_entry(entry_id) for entry_id in manager.get_branch_ids())
        return loaded_on_branch(
            entry.get("message") for entry in raw if entry and entry.get("type") == "message"
        )

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
        if self.mcp is not None and any(tool.name == "tool_search" for tool in tools):
            section = self.mcp.prompt_section()
            prompt = f"{prompt}\n\n{section}" if section else prompt
        # clean_text: the cwd, an argv --system-prompt or a context file may hold bytes that are
        # not UTF-8; a lone surrogate in the request would be refused by a strict provider.
        return Context(system_prompt=clean_text(prompt), messages=messages, tools=tools)

    async def _stream_assistant(self) -> AssistantMessage:
        if self.mcp is not None:  # the first prompt waits (10 s at most) for direct MCP tools
            await self.mcp.wait_for_direct()
        try:
            # Off the event loop: a saved login may be renewed here (one HTTP POST, pi's lock on
            # auth.json) and a models.json ``!command`` key runs a process.
            options = await asyncio.to_thread(self._request_options, self.model)
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
        unseen: list[StreamEvent] | None = None
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
                        unseen = stream.abort_here()  # at once: no further chunk is read
                        self.emit(
                            "ttsr_triggered",
                            rules=[rule_summary(rule) for rule in rules],
                            scope=stream_scope(event),
                            cutText=cut_text(event),
                        )
                        break  # the reply ends at this delta, however the bytes were split
            message = await stream.result()
        finally:
            self._stream = None
        if unseen is not None:
            message = cut_message(message, unseen)
        message.thinking_level = options.thinking  # pi 1.x records the level this reply asked for
        if not started:
            self.emit("message_start", message=message)
        message = await self._finished(message)
        await self.files.settle()  # the last turn's checkpoint entry comes first
        self.manager.append_message(message)
        if self.ttsr is not None:
            self.ttsr.message_ended(message.stop_reason)
        self.emit("message_end", message=message)
        if "attempt" in retry_state:  # after the reply it ends, as pi 1.x
            done = message.stop_reason not in ("error",)
            extra = {} if done else {"finalError": message.error_message}
            self.emit("auto_retry_end", success=done, attempt=retry_state["attempt"], **extra)
        reply: AssistantMessage = message  # what a message_end handler left (an assistant reply)
        return reply

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
        recorded: AssistantMessage = await self._record(message)
        return recorded


def user_message(text: str, images: Sequence[ImageContent] = ()) -> UserMessage:
    """pi stores prompts as content arrays: the text block, then any images.

    The text passes :func:`clean_text`: words from argv or a paste may hold bytes that are not
    UTF-8 (as lone surrogates), which no session line or request may carry.
    """
    blocks: list[UserBlock] = [TextContent(text=clean_text(text)), *images]
    return UserMessage(content=blocks, timestamp=now_ms())


def cut_message(message: AssistantMessage, unseen: list[StreamEvent]) -> AssistantMessage:
    """A reply a stream rule cut: what was delivered up to the matching delta, ``aborted``.

    The stream may have finished in the same network chunk as the match (its ``done`` among the
    unseen events); the reply still ends as cut, so a ``toolUse`` stop never runs its tools.
    """
    cut = without_events(message, unseen)
    if cut.stop_reason == "aborted":
        return cut
    return cut.model_copy(update={"stop_reason": "aborted", "error_message": "Request was aborted"})
