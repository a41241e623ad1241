"""The interactive mode: a Textual app on top of one AgentSession.

Layout, top to bottom: header, chat, status line, completion menu, editor, footer. Keys and
commands become calls on the agent; agent events come back through :class:`LiveFeed` into the
chat. The app owns the glue (which key does what, when to ask the agent) and nothing else: the
chat content is built by ``transcript``/``live``, slash commands live in ``slash``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.reactive import reactive

from pi_tui.commands import CommandRegistry, parse_slash
from pi_tui.config.paths import agent_dir
from pi_tui.text_safety import clean_text, for_terminal
from pi_tui.tui.completion import Completion, complete_arguments, complete_command, complete_path
from pi_tui.tui.editor_actions import EDITOR_ACTIONS, EditorActions
from pi_tui.tui.following import TranscriptFollowing
from pi_tui.tui.key_routing import (
    APP_ACTIONS,
    CHAT_MOVES,
    DOUBLE_PRESS_SECONDS,
    MODEL_STEPS,
    SLASH_KEYS,
    DoublePress,
    bind_app_keys,
    translated_key,
)
from pi_tui.tui.key_routing import bind_extension_keys as bind_extension_shortcuts
from pi_tui.tui.keybindings import KeyBindingsLoad, display_key, load_keybindings
from pi_tui.tui.palette import SettingsProvider, SlashProvider, system_commands
from pi_tui.tui.session_view import SessionView
from pi_tui.tui.settings_control import SettingsControl
from pi_tui.tui.settings_peek import peek_setting
from pi_tui.tui.slash_mcp import report_start_problems
from pi_tui.tui.theme_control import POLL_SECONDS as THEME_POLL_SECONDS
from pi_tui.tui.theme_control import ThemeControl, first_theme_name
from pi_tui.tui.transcript import InfoItem
from pi_tui.tui.typed_ahead import send_when_idle, typed_ahead
from pi_tui.tui.widgets.chat import ChatView
from pi_tui.tui.widgets.editor import CompletionMenu, PromptEditor
from pi_tui.tui.widgets.extension_widgets import ExtensionWidgets
from pi_tui.tui.widgets.footer import PiFooter
from pi_tui.tui.widgets.header import PiHeader
from pi_tui.tui.widgets.search import SearchInput, TranscriptSearch
from pi_tui.tui.widgets.status import StatusLine

if TYPE_CHECKING:
    from collections.abc import Awaitable, Iterable

    from textual.screen import Screen

    from pi_tui.config.settings import Settings
    from pi_tui.modes.attachments import Prompt
    from pi_tui.start_options import StartOptions
    from pi_tui.startup import Started
    from pi_tui.tui.extension_bridge import ExtensionBridge
    from pi_tui.tui.settings_rows import SettingsView


class PiApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "pi-tui"
    COMMANDS = App.COMMANDS | {SlashProvider, SettingsProvider}

    expanded: reactive[bool] = reactive(False)
    show_thinking: reactive[bool] = reactive(True)
    CURSOR_BLINK = True
    """Snapshot tests turn the editor's blinking cursor off so every frame is the same."""
    extension_bridge: ExtensionBridge | None = None
    """The extensions of this session (None until the agent has started, or without them)."""

    def __init__(
        self,
        started: Started | None = None,
        *,
        start_options: StartOptions | None = None,
        cwd: str | None = None,
        loaded: list[str] | None = None,
        initial_prompts: list[Prompt] | None = None,
        theme_name: str | None = None,
        git_branch: str | None = None,
        display_cwd: str | None = None,
        open_resume: bool = False,
    ) -> None:
        if started is None and start_options is None:
            raise ValueError("PiApp needs a started agent or the options to start one")
        self.started = started
        """None until the agent has started (see :meth:`_start_in_background`)."""
        self.start_options = start_options
        self.agent: Any = started.agent if started is not None else None
        self.cwd = cwd or (str(self.agent.cwd) if started is not None else start_options.cwd)  # type: ignore[union-attr]
        self.loaded = loaded
        self.initial_prompts = list(initial_prompts or [])
        self.early_submissions: list[str] = []  # sent while starting (typed_ahead.py)
        self.git_branch = git_branch
        self.display_cwd = display_cwd or self.cwd
        """The folder as the footer shows it (tests pin it for stable snapshots)."""
        self.open_resume = open_resume
        """``pi-tui -r``: open the session picker as soon as the chat is on screen."""
        self.commands = CommandRegistry()
        self.agent_dir = agent_dir()
        self.transcript_following = TranscriptFollowing(self, self, self._show_follow_status)
        self.session_view = SessionView(self, self)
        self.settings_control = SettingsControl(self)
        self.editor_actions = EditorActions(self)
        self.keys: KeyBindingsLoad = load_keybindings(self.agent_dir)
        early = started.settings if started is not None else None
        options = start_options or (started.options if started is not None else None)
        approve = options.approve if options is not None else None
        self.theme_control = ThemeControl.for_options(self, self.say, self.cwd, self.agent_dir, options)
        first_theme = theme_name or first_theme_name(options, early, self.cwd)
        quiet = (early.quiet_startup if early else peek_setting(self.cwd, "quietStartup", approve)) is True
        self.verbose = options is not None and options.verbose
        self.quiet_startup = quiet and not self.verbose
        self._escapes = DoublePress(DOUBLE_PRESS_SECONDS)
        self._ctrl_cs = DoublePress(DOUBLE_PRESS_SECONDS * 2)
        self._run: asyncio.Task[Any] | None = None
        self._cancellable: asyncio.Future[Any] | None = None
        """Work Escape cancels that is not an agent run (a branch summary)."""
        palette = self.keys.bindings.get("command_palette")
        if palette:  # Textual binds its palette to this key (Ctrl+P, which cycles models here)
            # (a class variable in Textual's typing; this app's own value goes on the instance)
            self.__dict__["COMMAND_PALETTE_BINDING"] = ",".join(palette)
        super().__init__()
        self.theme_control.install(first_theme, first=True)
        bind_app_keys(self._bindings, self.keys)
        hide = (
            early.hide_thinking_block if early else bool(peek_setting(self.cwd, "hideThinkingBlock", approve))
        )
        self.set_reactive(PiApp.show_thinking, not hide)

    def reload_keybindings(self) -> list[str]:
        """``/reload``: keybindings.json read again; the chat's keys bound anew."""
        self.keys = load_keybindings(self.agent_dir)
        bind_app_keys(self._bindings, self.keys)
        self.editor.keymap = self.keys  # (/reload runs on a mounted app)
        self.transcript_search.keymap = self.keys
        return list(self.keys.problems)

    def set_loaded(self, loaded: list[str]) -> None:
        self.loaded = loaded
        self.query_one(PiHeader).set_loaded(loaded)

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from pi_tui.tui.keybindings import header_hints, startup_keys

        expand = self.keys.bindings.get("expand") or ("ctrl+o",)
        yield PiHeader(
            self.loaded or [],
            all_keys=startup_keys(self.keys.bindings),
            expand_key=display_key(expand[0]),
            hints=header_hints(self.keys.bindings),
            quiet=self.quiet_startup,
            id="header",
        )
        chat = ChatView(self.cwd, jump_keys=self.keys.bindings.get("chat_bottom"), id="chat")
        yield chat
        yield TranscriptSearch(chat, self.keys, id="search")
        yield ExtensionWidgets(id="extensions-above")
        yield StatusLine(id="status")
        yield CompletionMenu(id="completion")
        yield PromptEditor(id="editor")
        yield ExtensionWidgets(id="extensions-below")
        yield PiFooter(id="footer")

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def transcript_search(self) -> TranscriptSearch:
        return self.query_one(TranscriptSearch)

    @property
    def editor(self) -> PromptEditor:
        return self.query_one(PromptEditor)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    @property
    def footer(self) -> PiFooter:
        return self.query_one(PiFooter)

    async def on_mount(self) -> None:
        editor = self.editor
        editor.menu = self.query_one(CompletionMenu)
        editor.menu.display = False
        editor.completer = self._complete
        editor.keymap = self.keys
        dequeue = self.keys.bindings.get("dequeue")
        self.status.dequeue_key = display_key(dequeue[0]) if dequeue else ""
        editor.cursor_blink = self.CURSOR_BLINK
        self.chat.show_thinking = self.show_thinking
        editor.focus()
        self.early_submissions[:0], rest = typed_ahead()
        editor.insert(rest)
        self.set_interval(THEME_POLL_SECONDS, self.theme_control.reload_if_changed)
        self.app_resume_signal.subscribe(self, self._redraw_after_resume)
        if self.started is not None:
            await self._agent_ready(self.started)
        else:
            self.status.activity = "Starting..."
            self.refresh_footer()
            await self.session_view.show_tail()
            self.run_worker(self._start_in_background, thread=True, exit_on_error=False)

    def _start_in_background(self) -> None:
        """(Thread) import the agent and start it: settings, session, model, tools, rules.

        Runs after the first frame; a problem the user can fix ends the app with one line.
        """
        from pi_tui.startup import StartupError, start

        assert self.start_options is not None
        try:
            started = start(self.start_options)
        except StartupError as error:
            self.call_from_thread(self.exit, None, 2, f"pi-tui: {error}")
            return
        except Exception as error:  # a bug: say it and leave rather than hang on "Starting..."
            self._exit_on_bug_from_thread(error)
            return

        def ready() -> Awaitable[None] | None:  # (the union Textual's hint takes)
            return self._agent_ready(started)

        try:
            self.call_from_thread(ready)
        except Exception as error:  # the same while drawing the session: never a blank screen
            self._exit_on_bug_from_thread(error)

    def _exit_on_bug_from_thread(self, error: Exception) -> None:
        self.call_from_thread(
            self.exit, None, 70, f"pi-tui: internal error while starting: {type(error).__name__}: {error}"
        )

    async def _agent_ready(self, started: Started) -> None:
        """The agent exists: wire its events to the chat and show the session."""
        from pi_tui.tui.live import LiveFeed

        self.started = started
        self.agent = started.agent
        if self.loaded is None:
            from pi_tui.tui.loaded import loaded_summary

            self.loaded = loaded_summary(started, self.cwd)
            self.query_one(PiHeader).set_loaded(self.loaded)
        self.feed = LiveFeed(self.chat, self.status, self.agent, self.refresh_footer)
        self.agent.subscribe(self.feed.handle)
        self.agent.set_save_listener(self.say_save_problem)
        self.apply_screen_settings(started.settings)
        self.status.activity = None
        await self.show_session()
        report_start_problems(self, started)  # the notice; then MCP servers that fail to connect
        for problem in self.theme_problems + self.keys.problems:  # after show_session, which redraws
            self.say(problem, "warning")
        self.run_worker(self._check_tmux_keys, thread=True, group="tmux", exit_on_error=False)
        if self.agent.expander is not None:
            from pi_tui.resources.expander import register_commands

            for problem in register_commands(self.commands, self.agent.expander):
                self.say(problem, "warning")
        self.agent.session_listeners.append(self._session_changed)
        if started.extensions is not None:
            from pi_tui.tui.extension_bridge import ExtensionBridge

            self.extension_bridge = ExtensionBridge(self, started.extensions)
        self.run_worker(self._start_extensions_then_prompts(), group="extensions", exit_on_error=False)

    def _session_changed(self, what: str, **details: Any) -> None:
        """An extension changed the session outside a run: show it."""
        if what == "label":
            self.show_label(details["entry_id"], details.get("label"))
        elif what == "name":
            self.refresh_footer()
        elif what == "tree":
            self.run_worker(self.show_session(), group="redraw", exit_on_error=False)
        elif what == "shutdown":
            self.run_worker(self._shutdown_when_idle(), group="shutdown", exit_on_error=False)

    async def _shutdown_when_idle(self) -> None:
        while self.busy:
            await asyncio.sleep(0.05)
        await self.shutdown()

    async def _start_extensions_then_prompts(self) -> None:
        """Extensions start (after the user's answer about the project's own) before the command
        line's prompts run, so their hooks see those prompts too."""
        if self.extension_bridge is not None:
            await self.extension_bridge.start()
        if self.initial_prompts:
            self.start_work(self._run_initial(self.initial_prompts))
        self.run_worker(send_when_idle(self, self.early_submissions), group="early", exit_on_error=False)
        if self.open_resume:
            self.run_slash("resume", "")

    def _check_tmux_keys(self) -> None:
        """(Thread) inside tmux without extended keys, say how to get Shift+Enter (as pi)."""
        from pi_tui.tui.tmux_keys import tmux_keys_hint

        hint = tmux_keys_hint()
        if hint is not None:
            self.call_from_thread(self.say, hint, "warning")

    @property
    def ready(self) -> bool:
        return self.agent is not None

    async def show_session(self) -> None:
        """Draw the current branch of the session (start, resume, new session, a move in the
        tree): the newest turns at once, older ones from a thread (:class:`SessionView`)."""
        await self.session_view.show()

    async def _run_initial(self, prompts: list[Prompt]) -> None:
        """``pi-tui "do this" @file``: the command line's messages run first, one after another."""
        for prompt in prompts:
            await self.agent.prompt(prompt.text, prompt.images)

    async def switch_session(
        self, manager: Any, *, restore_model: bool = True, reason: str = "resume"
    ) -> None:
        """Continue in another session (resumed, branched, cloned, new) and draw it; extensions
        are told (``session_shutdown`` then ``session_start`` with ``reason``)."""
        previous = self.agent.manager.session_file
        follow = self.following
        if follow is not None and manager.session_file != follow.session:
            self.stop_following()  # another session: the transcript is no longer shown
        assert self.started is not None  # sessions switch once the agent has started
        self.agent.adopt(manager, self.started.registry.usable if restore_model else None)
        await self.show_session()
        if self.extension_bridge is not None:
            target = manager.session_file
            await self.extension_bridge.session_replaced(
                reason, str(previous) if previous else None, str(target) if target else None
            )

    async def extensions_allow(self, event: str, **fields: Any) -> bool:
        if self.extension_bridge is None:
            return True
        return await self.extension_bridge.allow(event, **fields)

    def set_extension_status(self, key: str, text: str | None) -> None:
        self.footer.set_status(key, text)
        self.refresh_footer()

    def set_extension_footer(self, text: str | None) -> None:
        self.footer.override = text
        self.refresh_footer()

    def set_extension_widget(self, key: str, lines: Any, placement: str) -> None:
        where = "#extensions-below" if placement == "below" else "#extensions-above"
        self.query_one(where, ExtensionWidgets).set_block(key, lines)

    def replace_editor_text(self, text: str) -> None:
        self.editor.load_text(text)
        self.editor.move_cursor(self.editor.document.end)

    def bind_extension_keys(self, keys: list[str], previous: list[str]) -> list[str]:
        """Bind extensions' keys (dropping ``previous``); a key pi-tui uses stays pi-tui's."""
        bound, refused = bind_extension_shortcuts(self._bindings, keys, previous)
        for key in refused:
            self.say(f"The key {key} is pi-tui's; the extension's shortcut is not bound.", "warning")
        return bound

    def action_extension_key(self, key: str) -> None:
        if self.extension_bridge is not None:
            work = self.extension_bridge.run_shortcut(key)
            self.run_worker(work, group="extension-key", exit_on_error=False)

    def refresh_footer(self) -> None:
        if self.agent is None:
            self.footer.show_path(self.display_cwd, self.git_branch)
            return
        self.footer.show_state(self.agent, self.display_cwd, self.git_branch)

    def say_save_problem(self, text: str) -> None:
        """A session save failed (disk full ...) or works again: one line in the chat; the
        entries wait in memory meanwhile. After the app has ended, the line goes to stderr."""
        if not self.is_running:
            print(f"pi-tui: {for_terminal(clean_text(text))}", file=sys.stderr)
            return
        failing = self.agent is not None and self.agent.manager.save_problem is not None
        self.say(text, "error" if failing else "info")

    def say(
        self,
        text: str,
        level: str = "info",
        title: str | None = None,
        *,
        markdown: bool = False,
        fold: bool = False,
    ) -> None:
        """A message from pi-tui itself in the chat (not saved in the session). A titled one
        (a command's output: /hotkeys, /session) taller than the chat is shown from its first
        line, as a pager would, instead of from its last."""
        view = self.chat.add(InfoItem(text, level, title=title, markdown=markdown, fold=fold))
        if title is not None:
            self.chat.call_after_refresh(self.chat.show_from_top, view)

    # --- themes -----------------------------------------------------------------------------------

    def theme_files(self) -> dict[str, Path]:
        """Every theme on offer: built-ins, the agent dir's (unless --no-themes), --theme's."""
        return self.theme_control.files()

    @property
    def pi_theme_name(self) -> str:
        """The pi theme's name as the ``theme`` setting says it."""
        return self.theme_control.name

    @pi_theme_name.setter
    def pi_theme_name(self, name: str) -> None:
        self.theme_control.name = name

    @property
    def theme_problems(self) -> list[str]:
        """What was wrong with the theme asked for (said once the chat is up)."""
        return self.theme_control.problems

    @property
    def code_theme(self) -> str:
        """The code blocks' Pygments theme (dark or light, as the pi theme is)."""
        return self.theme_control.code_theme

    def _validate_theme(self, theme_name: str) -> str:
        """Textual's validator of :attr:`theme`: only pi themes (:meth:`ThemeControl.validate`)."""
        return self.theme_control.validate(theme_name)

    def action_change_theme(self) -> None:
        """Textual's theme picker would offer its own themes; pi-tui's is the /settings theme row."""
        self.run_slash("settings", "")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette's own entries: pi-tui's actions only (:data:`palette.SYSTEM_ACTIONS`)."""
        return system_commands(self)

    def switch_theme(self, name: str) -> list[str]:
        """Switch at run time; returns the problems found in the theme file."""
        return self.theme_control.switch(name)

    # --- the editor -------------------------------------------------------------------------------

    def _complete(self, line_before_cursor: str, text: str, explicit: bool) -> Completion | None:
        if text.startswith("/") and "\n" not in text:
            found = complete_command(line_before_cursor, self.commands)
            if found is None and self.extension_bridge is not None:
                found = complete_arguments(line_before_cursor, self.extension_bridge.complete_arguments)
            if found is not None or not explicit:
                return found
        if explicit or "@" in line_before_cursor:
            return complete_path(line_before_cursor, Path(self.cwd))
        return None

    # --- following another agent's transcript --------------------------------------------------

    @property
    def following(self) -> Any:
        """Another agent's transcript being followed (:class:`pi_tui.tui.follow.Follow`)."""
        return self.transcript_following.current

    def follow_transcript(self, follow: Any) -> None:
        """Show what ``follow.source`` gains, live (read-only until the user continues here)."""
        self.transcript_following.start(follow)

    def _show_follow_status(self, text: str | None) -> None:
        self.footer.set_status("follow", text)
        self.refresh_footer()

    def stop_following(self) -> None:
        self.transcript_following.stop()

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.chat.to_bottom()  # whatever was sent, its answer comes at the end
        follow = self.following
        stripped = message.text.strip()
        if follow is not None and stripped and not stripped.startswith(("/", "!")):
            from pi_tui.tui.follow import continue_here

            self.run_worker(continue_here(self, follow, message.text), group="follow", exit_on_error=False)
            return
        if self.agent is None:  # sent as soon as the agent is ready
            self.early_submissions.append(message.text)
            self.show_hint("Starting: your message goes as soon as pi-tui is ready.", 5)
            return
        if message.follow_up and self.agent.is_streaming:
            self.agent.follow_up(message.text)
            return
        self.submit_prompt(message.text)

    def submit_prompt(self, text: str) -> None:
        """What Enter does with the editor's text: a !command, a /command, or a prompt."""
        stripped = text.strip()
        if stripped.startswith("!"):
            exclude = stripped.startswith("!!")
            command = stripped[2 if exclude else 1 :].strip()
            if command:
                self.run_bash(command, exclude)
            return
        slash = parse_slash(stripped)
        if slash is not None:
            name, args = slash
            self.run_slash(name, args)
            return
        if self.agent.is_streaming:
            self.agent.steer(text)  # Enter while running steers; Alt+Enter queues a follow-up
            return
        self.start_work(self.agent.prompt(text))

    def start_work(self, work: Any) -> asyncio.Task[Any]:
        """Run ``work`` as the agent run: the editor shows it running and Escape stops it."""
        self.editor.agent_running = True
        self._run = asyncio.ensure_future(self._guarded(work))
        return self._run

    async def _guarded(self, work: Any) -> None:
        try:
            await work
        except asyncio.CancelledError:
            pass
        except Exception as error:  # a bug or an unexpected failure: say it, keep the app alive
            self.say(f"{type(error).__name__}: {error}", "error")
        finally:
            self.editor.agent_running = False
            self.status.activity = None
            self.refresh_footer()

    @property
    def busy(self) -> bool:
        running = self._run is not None and not self._run.done()
        return running or (self._cancellable is not None and not self._cancellable.done())

    def track_cancellable(self, work: asyncio.Future[Any] | None) -> None:
        self._cancellable = work

    def run_background(self, work: Any, *, group: str) -> Any:
        return self.run_worker(work, group=group, exit_on_error=False)

    def show_hint(self, text: str, seconds: float = 2.0) -> None:
        self.status.show_hint(text, seconds)

    def set_activity(self, text: str | None) -> None:
        self.status.activity = text

    def offer_editor_text(self, text: str) -> None:
        if text and not self.editor.text:
            self.editor.load_text(text)
            self.editor.move_cursor(self.editor.document.end)

    def show_label(self, entry_id: str, label: str | None) -> None:
        self.chat.set_label(entry_id, label)

    def last_answer_text(self) -> str | None:
        return self.chat.last_assistant_text()

    def run_bash(self, command: str, exclude: bool) -> None:
        if self.busy:
            self.say("Wait for the agent to finish (or press Esc) before running a command.", "warning")
            return
        self.feed.bash_started(command, exclude)
        self.status.activity = "Running..."
        self.start_work(self.agent.run_bash(command, exclude_from_context=exclude))

    def run_slash(self, name: str, args: str) -> None:
        from pi_tui.tui.slash_registry import run_command

        if self.agent is None:
            self.show_hint("Still starting; try again in a moment.")
            return
        self.run_worker(run_command(self, name, args), group="slash", exit_on_error=False)

    def settings_view(self) -> SettingsView:
        """What /settings shows: the settings, the live theme and thinking level."""
        return self.settings_control.view()

    def on_settings_screen_previewed(self, message: Any) -> None:
        """A theme under the highlight (or the old one back after Escape): shown, not saved."""
        if message.id == "theme":
            self.switch_theme(message.value)

    def on_settings_screen_changed(self, message: Any) -> None:
        """Apply a /settings change now, save it in pi's keys, redraw the rows."""
        self.settings_control.changed(message)

    def save_setting(self, change: dict[str, Any]) -> None:
        """Write a change (pi's keys) to the global settings.json; a failure is said, not raised."""
        self.settings_control.save(change)

    def apply_screen_settings(self, settings: Settings) -> None:
        """The settings that shape the screen: the header (quiet startup), the editor's padding
        (pi's editorPaddingX, added to the column the border needs) and the completion rows."""
        from pi_tui.tui.display_settings import apply_display_settings

        self.quiet_startup = settings.quiet_startup is True and not self.verbose  # "header": all shown
        self.query_one(PiHeader).set_quiet(self.quiet_startup)
        self.editor.styles.padding = (0, 1 + min(3, max(0, settings.editor_padding_x)))
        rows = min(20, max(3, settings.autocomplete_max_visible))
        self.query_one(CompletionMenu).styles.max_height = rows + 2  # + the border
        apply_display_settings(self, settings)  # outputPad, scrollbar, terminal progress
        self.refresh_footer()

    # --- keys -------------------------------------------------------------------------------------

    def on_prompt_editor_escape_pressed(self, message: PromptEditor.EscapePressed) -> None:
        if self.busy:
            self.abort()
            return
        action = self.agent.settings.double_escape_action if self.agent is not None else "tree"
        if action == "none" or self.editor.text:
            return
        if self._escapes.press():
            self.run_slash("tree" if action == "tree" else "branch", "")

    def abort(self) -> None:
        """Stop the run; queued messages come back into the editor instead of being lost."""
        if self._cancellable is not None and not self._cancellable.done():
            self._cancellable.cancel()
            return
        self.agent.abort()
        self.editor_actions.restore_queued(self.agent.clear_queues())
        self.status.show_hint(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Our keys belong to the chat screen; pickers and panels get theirs.
        # (the palette's own binding too: its key means something else in /scoped-models)
        return not (action in ("app_key", "command_palette") and len(self.screen_stack) > 1)

    def action_app_key(self, key: str) -> None:
        search = self.transcript_search
        if search.active and isinstance(self.focused, SearchInput) and search.input.run_key(key):
            return  # the search's keys come first while its box has the focus (pi's rule)
        recall = [a for a in self.keys.action_for(key, "editor") if a in ("recall_previous", "recall_next")]
        if recall and self.focused is self.editor:
            self.editor.run_key(key)  # pi: the dedicated history keys win over the app's
            return
        for action in self.keys.action_for(key, "app"):
            if self._run_chat_action(action):
                return
        self.editor.run_key(key)  # not for the chat now (Ctrl+D with text): the editor's meaning

    async def on_event(self, event: events.Event) -> None:
        """A key pressed on a picker screen becomes the key that screen listens for, so every
        pi key id works there as keybindings.json says (Ctrl+N for the named filter...)."""
        if isinstance(event, events.Key) and not event.is_forwarded and len(self.screen_stack) > 1:
            event = translated_key(type(self.screen).__name__, event, self.keys)
        await super().on_event(event)

    def _run_chat_action(self, action: str) -> bool:
        """Run one chat action of a key; False when it is not for now (the editor gets the key).
        The one-call actions are tables in :mod:`pi_tui.tui.key_routing`; the others are
        ``_key_<action>`` here (returning False: not for now)."""
        if action in SLASH_KEYS:
            self.run_slash(SLASH_KEYS[action], "")
            return True
        if action in CHAT_MOVES:
            CHAT_MOVES[action](self.chat)
            return True
        if action in MODEL_STEPS:
            self.cycle_model(MODEL_STEPS[action])
            return True
        if action in EDITOR_ACTIONS:
            return getattr(self.editor_actions, EDITOR_ACTIONS[action])() is not False
        if action in APP_ACTIONS:
            getattr(self, f"action_{APP_ACTIONS[action]}")()
            return True
        handler = getattr(self, f"_key_{action}", None)
        return handler is not None and handler() is not False

    # --- the chat's key actions (``_key_<action>``; False: not for now, let the editor have it)

    def _key_exit(self) -> bool:
        if self.editor.text:
            return False
        self.run_worker(self.shutdown(), group="exit")
        return True

    def _key_suspend(self) -> None:
        from textual.app import SuspendNotSupported

        try:
            self.action_suspend_process()
        except SuspendNotSupported:
            self.show_hint("This terminal cannot suspend pi-tui.")

    def set_scoped_models(self, keys: list[str], *, save: bool) -> bool:
        return self.settings_control.set_scoped_models(keys, save=save)

    def cycle_model(self, step: int) -> None:
        """Ctrl+P / Shift+Ctrl+P: the next model of the scope, with its pattern's thinking level."""
        self.settings_control.cycle_model(step)

    def _redraw_after_resume(self, _app: object) -> None:
        """Back from Ctrl+Z (``fg``): the shell drew over the screen, so all of it is drawn again."""
        self.refresh(layout=True)

    def _key_search(self) -> None:
        """pi's transcript search: the key opens the box, and closes it when it is open."""
        search = self.transcript_search
        if search.active:
            self._close_search()
        else:
            search.open()

    def _close_search(self) -> None:
        self.transcript_search.close()
        self.editor.focus()

    async def on_search_input_action(self, message: SearchInput.Action) -> None:
        if message.action == "search_close":
            self._close_search()
        else:
            await self.transcript_search.step(1 if message.action == "search_next" else -1)

    def action_clear_or_exit(self) -> None:
        if self.editor.text:
            self.editor.clear()
            self._ctrl_cs.mark()
            return
        if self._ctrl_cs.press(start_over=False):
            self.run_worker(self.shutdown(), group="exit")
            return
        self.show_hint("Press Ctrl+C again to exit", DOUBLE_PRESS_SECONDS * 2)

    def action_model_picker(self) -> None:
        self.run_slash("model", "")

    def action_cycle_thinking(self) -> None:
        from pi_tui.tui.slash import cycle_thinking

        if self.agent is None:
            return
        cycle_thinking(self)

    async def pick_thinking_level(self) -> None:
        """pi 1.x's thinking selector (Ctrl+S in it saves the level as the default)."""
        await self.settings_control.pick_thinking_level()

    def action_pick_thinking_level(self) -> None:
        self.run_worker(self.pick_thinking_level(), group="thinking")

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def action_toggle_thinking(self) -> None:
        """Show or hide thinking, and keep the choice (hideThinkingBlock), as pi does."""
        self.show_thinking = not self.show_thinking
        if self.agent is not None:
            self.agent.settings.hide_thinking_block = not self.show_thinking
        self.save_setting({"hideThinkingBlock": not self.show_thinking})

    def watch_expanded(self, expanded: bool) -> None:
        self.chat.expanded = expanded  # (set only once the app is mounted)
        self.query_one(PiHeader).expanded = expanded

    def watch_show_thinking(self, show: bool) -> None:
        self.chat.show_thinking = show  # (set_reactive before mount: no watcher)

    async def shutdown(self) -> None:
        """Leave cleanly: stop a run, let it record what happened, close the session file."""
        if self.agent is None:
            self.exit()
            return
        if self.busy:
            self.agent.abort()
            assert self._run is not None
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._run), 5)
        if self.extension_bridge is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.extension_bridge.shutdown(), 5)
        self.agent.manager.close()
        self.exit()

    def on_unmount(self) -> None:
        if self.agent is not None:
            self.agent.manager.close()  # however the app ends, the session file is released

    async def action_quit(self) -> None:
        await self.shutdown()
