"""The interactive mode: a Textual app on top of one AgentSession.

Layout, top to bottom: header, chat, status line, completion menu, editor, footer. Keys and
commands become calls on the agent; agent events come back through :class:`LiveFeed` into the
chat. The app owns the glue (which key does what, when to ask the agent) and nothing else: the
chat content is built by ``transcript``/``live``, slash commands live in ``slash``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.theme import Theme as RichTheme
from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.command import Hit, Hits, Provider
from textual.reactive import reactive

from pi_tui import jsonio
from pi_tui.commands import CommandRegistry, parse_slash
from pi_tui.config.paths import agent_dir
from pi_tui.text_safety import clean_text, for_terminal
from pi_tui.tui.completion import Completion, complete_arguments, complete_command, complete_path
from pi_tui.tui.keybindings import ACTIONS, KeyBindingsLoad, display_key, load_keybindings
from pi_tui.tui.terminal_colours import terminal_appearance
from pi_tui.tui.theme import (
    SYSTEM_THEME,
    ThemeLoad,
    available_themes,
    choose_theme,
    is_pi_theme,
    load_theme,
    theme_choices,
    to_textual_theme,
)
from pi_tui.tui.transcript import InfoItem, UserItem, build_transcript
from pi_tui.tui.widgets.chat import ChatView
from pi_tui.tui.widgets.editor import CompletionMenu, PromptEditor
from pi_tui.tui.widgets.extension_widgets import ExtensionWidgets
from pi_tui.tui.widgets.footer import PiFooter
from pi_tui.tui.widgets.header import PiHeader
from pi_tui.tui.widgets.search import SearchInput, TranscriptSearch
from pi_tui.tui.widgets.status import StatusLine

if TYPE_CHECKING:
    from collections.abc import Iterable

    from textual.screen import Screen

    from pi_tui.config.settings import Settings
    from pi_tui.modes.attachments import Prompt
    from pi_tui.start_options import StartOptions
    from pi_tui.startup import Started
    from pi_tui.tui.extension_bridge import ExtensionBridge
    from pi_tui.tui.settings_rows import SettingsView

FIRST_ENTRIES = 400
"""Entries turned into chat items before the first screen of a resumed session."""
BUILD_CONTEXT_AT_ONCE = 2_000
"""Branches up to this many entries get their context (the footer's token count) before the
first screen; a longer one builds it in a thread after that screen."""
FILE_PROBLEMS_SHOWN = 8
"""How many file problems the chat lists before "... and N more"."""
DOUBLE_PRESS_SECONDS = 0.6
"""Two Escapes (or Ctrl+Cs) closer than this count as a double press."""
THEME_POLL_SECONDS = 1.0

SCREEN_KEY_SCOPES: dict[str, tuple[str, ...]] = {
    "TreeScreen": ("tree", "select"),
    "ResumePicker": ("sessions", "select"),
    "ScopedModelsScreen": ("models", "select"),
    "ThinkingPicker": ("thinking", "select"),
    "ModelPicker": ("models", "select"),
}
"""Which key-binding scopes a picker screen answers to (any other pushed screen: "select")."""


class SlashProvider(Provider):
    """Textual's command palette (Ctrl+P) lists every slash command."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, PiApp)
        matcher = self.matcher(query)
        for command in app.commands.all():
            # the command's name counts fully, its description half ("theme" finds /settings'
            # Theme row before /reload, which merely mentions themes)
            score = max(matcher.match(f"/{command.name}"), matcher.match(command.description) / 2)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"/{command.name}"),
                    lambda name=command.name: app.run_slash(name, ""),
                    help=command.description,
                )


class SettingsProvider(Provider):
    """The palette also finds each setting by its label: Enter opens /settings on that row."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, PiApp)
        if app.agent is None:
            return
        from pi_tui.tui.settings_rows import build_rows

        matcher = self.matcher(query)
        for row in build_rows(app.settings_view()):
            score = matcher.match(row.label) * 1.2
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"{row.label} (setting)"),
                    lambda label=row.label: app.run_slash("settings", label),
                    help=f"/settings: {row.description}",
                )


class PiApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "pi-tui"
    COMMANDS = App.COMMANDS | {SlashProvider, SettingsProvider}

    expanded: reactive[bool] = reactive(False)
    show_thinking: reactive[bool] = reactive(True)
    CURSOR_BLINK = True
    """Snapshot tests turn the editor's blinking cursor off so every frame is the same."""

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
        self.git_branch = git_branch
        self.display_cwd = display_cwd or self.cwd
        """The folder as the footer shows it (tests pin it for stable snapshots)."""
        self.open_resume = open_resume
        """``pi-tui -r``: open the session picker as soon as the chat is on screen."""
        self.commands = CommandRegistry()
        self.agent_dir = agent_dir()
        self.following: Any = None
        """Another agent's transcript being followed (:class:`pi_tui.tui.follow.Follow`)."""
        self._follow_timer: Any = None
        self._follow_watch: Any = None
        self.keys: KeyBindingsLoad = load_keybindings(self.agent_dir)
        early = started.settings if started is not None else None
        options = start_options or (started.options if started is not None else None)
        given = options.theme_paths or [] if options is not None else []
        approve = options.approve if options is not None else None
        self.discover_themes = not (options is not None and options.no_themes)
        listed = _settings_themes(self.cwd, self.agent_dir, approve) if self.discover_themes else []
        self.theme_paths = [*listed, *(path for path in given if Path(path).expanduser().exists())]
        use_theme = options.use_theme if options is not None else None  # --use-theme: this run only
        theme_name = theme_name or use_theme or _theme_from_options(options)
        self.pi_theme_name = (
            theme_name or (early.theme if early else peek_setting(self.cwd, "theme", approve)) or SYSTEM_THEME
        )
        quiet = (early.quiet_startup if early else peek_setting(self.cwd, "quietStartup", approve)) is True
        self.verbose = options is not None and options.verbose
        self.quiet_startup = quiet and not self.verbose
        self.theme_problems: list[str] = []
        self._theme_path: Path | None = None
        self._theme_mtime: float | None = None
        self.code_theme = "monokai"
        self._last_escape = 0.0
        self._last_ctrl_c = 0.0
        self._run: asyncio.Task[Any] | None = None
        self.extension_bridge: ExtensionBridge | None = None
        """The extensions of this session (None until the agent has started)."""
        self._shown_generation = 0
        self._cancellable: asyncio.Future[Any] | None = None
        """Work Escape cancels that is not an agent run (a branch summary)."""
        palette = self.keys.bindings.get("command_palette")
        if palette:  # Textual binds its palette to this key (Ctrl+P, which cycles models here)
            self.COMMAND_PALETTE_BINDING = ",".join(palette)
        super().__init__()
        self._install_theme(self.pi_theme_name, first=True)
        self._bind_app_keys()
        hide = (
            early.hide_thinking_block if early else bool(peek_setting(self.cwd, "hideThinkingBlock", approve))
        )
        self.set_reactive(PiApp.show_thinking, not hide)

    def reload_keybindings(self) -> list[str]:
        """``/reload``: keybindings.json read again; the chat's keys bound anew."""
        self.keys = load_keybindings(self.agent_dir)
        self._bind_app_keys()
        if self.is_mounted:
            self.editor.keymap = self.keys
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
        chat = ChatView(self.cwd, id="chat")
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
        self.set_interval(THEME_POLL_SECONDS, self._reload_theme_if_changed)
        self.app_resume_signal.subscribe(self, self._redraw_after_resume)
        if self.started is not None:
            await self._agent_ready(self.started)
        else:
            self.status.activity = "Starting..."
            self.refresh_footer()
            await self._show_tail_preview()
            self.run_worker(self._start_in_background, thread=True, exit_on_error=False)

    async def _show_tail_preview(self) -> None:
        """Draw the newest turns of the session being opened from the end of its file, before
        the full load (which replaces them): on a long session that is most of a second sooner.
        Done before the load starts, which would otherwise hold the GIL against the drawing."""
        path = self._session_path_to_open()
        if path is None:
            return  # nothing imported: a new session's first frame stays as quick as it was
        from pi_tui.session.tail import read_tail_branch

        tail = read_tail_branch(path, FIRST_ENTRIES)
        if tail is None:
            return
        items = build_transcript(tail.entries, tail.label_of)
        await self.chat.show(items)
        self.editor.prompt_history = user_texts(items)

    def _session_path_to_open(self) -> Path | None:
        """The file ``--session FILE`` or ``-c`` will open, when that is plain to see."""
        options = self.start_options
        if options is None or options.no_session or options.fork:
            return None
        if options.session:
            path = Path(options.session).expanduser()
            return path if path.suffix == ".jsonl" and path.is_file() else None
        if options.continue_recent:
            from pi_tui.config.paths import session_dir_for_cwd
            from pi_tui.session.listing import most_recent_session

            folder = Path(options.session_dir) if options.session_dir else session_dir_for_cwd(options.cwd)
            return most_recent_session(folder, options.cwd)
        return None

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
        try:
            self.call_from_thread(self._agent_ready, started)
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
            from pi_tui.tui.run import loaded_summary

            self.loaded = loaded_summary(started, self.cwd)
            self.query_one(PiHeader).set_loaded(self.loaded)
        self.feed = LiveFeed(self.chat, self.status, self.agent, self.refresh_footer)
        self.agent.subscribe(self.feed.handle)
        self.agent.set_save_listener(self.say_save_problem)
        self.apply_screen_settings(started.settings)
        self.status.activity = None
        await self.show_session()
        for line in started.notice.splitlines() if started.notice else []:
            self.say(line, "warning")
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
        """Draw the current branch of the session (start, resume, new session).

        The newest :data:`FIRST_ENTRIES` entries are turned into items at once, so the last screen
        shows quickly however long the session is; older items are built in a thread and put
        in front of them (they are mounted only when the user scrolls up).
        """
        manager = self.agent.manager
        self._shown_generation += 1
        ids = manager.get_branch_ids()
        cut = max(0, len(ids) - FIRST_ENTRIES)
        items = build_transcript([manager.get_entry(i) for i in ids[cut:]], manager.get_label)
        await self.chat.show(items)
        self.editor.prompt_history = user_texts(items)
        if len(ids) <= BUILD_CONTEXT_AT_ONCE:
            manager.build_session_context()
        else:  # reading 25,000 messages would hold the first screen back: the footer waits instead
            self.run_worker(self._build_context, thread=True, group="context", exit_on_error=False)
        self.refresh_footer()
        self.say_file_problems()
        if cut:
            self.run_worker(
                partial(self._load_older, ids[:cut], self._shown_generation),
                thread=True,
                group="older",
                exit_on_error=False,
            )

    def _build_context(self) -> None:
        """(Thread) the model's context of a long branch, for the footer's token count; the
        agent's first turn would build it anyway, and then finds it ready."""
        self.agent.manager.build_session_context()
        self.call_from_thread(self._context_built)

    def _context_built(self) -> None:
        self.refresh_footer()
        self.say_file_problems()  # messages left out of the context are found while building it

    def _load_older(self, ids: list[str], generation: int) -> None:
        """(Thread) the items before the first screen; handed to the chat on the UI thread."""
        manager = self.agent.manager
        items = build_transcript([manager.get_entry(i) for i in ids], manager.get_label)
        self.call_from_thread(self._prepend_older, items, generation)

    def _prepend_older(self, items: list[Any], generation: int) -> None:
        if generation != self._shown_generation:
            return  # another session (or branch) is shown by now
        self.chat.prepend_items(items)
        self.editor.prompt_history[:0] = user_texts(items)

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
        self.agent.adopt(manager, self.started.registry.get if restore_model else None)
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
        table = self._bindings.key_to_bindings
        for key in previous:
            kept = [b for b in table.get(key, []) if not b.action.startswith("extension_key(")]
            if kept:
                table[key] = kept
            else:
                table.pop(key, None)
        bound = []
        for key in keys:
            if key in table:
                self.say(f"The key {key} is pi-tui's; the extension's shortcut is not bound.", "warning")
                continue
            self._bindings.bind(key, f"extension_key({key!r})", show=False, priority=True)
            bound.append(key)
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

    def say_file_problems(self) -> None:
        """Problems met reading the session file (skipped, torn or repaired lines, messages left
        out of the context), each said once, the way print mode writes them to stderr."""
        problems = self.agent.manager.take_new_warnings()
        if problems:
            shown = problems[:FILE_PROBLEMS_SHOWN]
            if len(problems) > len(shown):
                shown.append(f"... and {len(problems) - len(shown)} more")
            self.say("\n".join(shown), "warning", title="Session file problems (nothing was changed on disk)")

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

    def _install_theme(self, name: str, *, first: bool = False) -> ThemeLoad | None:
        choice = choose_theme(name, self.theme_files(), terminal_appearance())
        if choice.problem:
            self.theme_problems.append(choice.problem)
        path = choice.path
        loaded = load_theme(path)
        self.theme_problems.extend(loaded.problems)
        textual_theme = to_textual_theme(loaded.theme)
        self.register_theme(textual_theme)
        if first:
            # Before the app runs, the stylesheet has not been read yet: set the theme without
            # the watcher, whose queued refresh_css would parse every rule a second time.
            self.set_reactive(App.theme, textual_theme.name)
            dark = textual_theme.dark
            self.update_classes(
                {f"-theme-{textual_theme.name}": True, "-dark-mode": dark, "-light-mode": not dark},
                update=False,
            )
            self.stylesheet.set_variables(self.get_css_variables())
        elif self.theme == textual_theme.name:
            self.refresh_css()  # the same theme, new colours: re-read the variables
        else:
            self.theme = textual_theme.name
        self.pi_theme_name = SYSTEM_THEME if choice.problem else name  # as the setting says it
        self._theme_path = path
        self._theme_mtime = _mtime(path)
        self.code_theme = "monokai" if loaded.theme.dark else "friendly"
        self._push_markdown_styles(loaded.theme.colors)
        if not first:
            self.chat.refresh_all()
        return loaded

    def theme_files(self) -> dict[str, Path]:
        """Every theme on offer: built-ins, the agent dir's (unless --no-themes), --theme's."""
        return available_themes(self.agent_dir, self.theme_paths, discover=self.discover_themes)

    def _push_markdown_styles(self, colors: dict[str, str | None]) -> None:
        """Rich's markdown style names, from the theme's md* tokens (finished replies use Rich)."""

        def style(token: str, extra: str = "") -> str:
            colour = colors.get(token)
            return f"{extra} {colour}".strip() if colour else (extra or "none")

        theme = RichTheme(
            {
                "markdown.h1": style("mdHeading", "bold underline"),
                "markdown.h2": style("mdHeading", "bold"),
                "markdown.h3": style("mdHeading", "bold"),
                "markdown.h4": style("mdHeading", "italic"),
                "markdown.h5": style("mdHeading", "italic"),
                "markdown.h6": style("mdHeading", "dim"),
                "markdown.link": style("mdLink", "underline"),
                "markdown.link_url": style("mdLinkUrl", "underline"),
                "markdown.code": style("mdCode", "bold"),
                "markdown.block_quote": style("mdQuote", "italic"),
                "markdown.hr": style("mdHr"),
                "markdown.item.bullet": style("mdListBullet", "bold"),
                "markdown.item.number": style("mdListBullet", "bold"),
                "markdown.paragraph": style("text"),
                "markdown.text": style("text"),
            }
        )
        console = self.console
        if getattr(self, "_markdown_theme_pushed", False):
            console.pop_theme()
        console.push_theme(theme)
        self._markdown_theme_pushed = True

    def _validate_theme(self, theme_name: str) -> str:
        """Keep the current pi theme when something sets a theme that is not one.

        Textual's own themes (nord, gruvbox, ... from its theme picker or ``action_toggle_dark``)
        lack the ``$pi-*`` colours, and the stylesheet stops the app with an undefined-variable
        error under them; refusing here, before the watcher runs, means no theme can crash it.
        """
        theme = self.get_theme(theme_name)
        if theme is not None and is_pi_theme(theme):
            return theme_name
        kind = "a Textual theme" if theme is not None else "not a known theme"
        warning = (
            f'"{theme_name}" is {kind}, not a pi theme: keeping "{self.pi_theme_name}". '
            "Pick a theme in /settings."
        )
        if self.is_mounted:
            self.call_later(self.say, warning, "warning")
        else:
            self.theme_problems.append(warning)
        return self.theme

    def action_change_theme(self) -> None:
        """Textual's theme picker would offer its own themes; pi-tui's is the /settings theme row."""
        self.run_slash("settings", "")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette's own entries: pi-tui's actions only (the slash commands come from
        :class:`SlashProvider`). Textual's (Theme, Keys, Maximize, Screenshot, Quit) are left
        out: they bypass pi-tui's themes, squeeze the chat or fail in a terminal app."""
        yield SystemCommand("Select model", "Choose the model, as /model", self.action_model_picker)
        yield SystemCommand("Cycle thinking level", "The model's next level", self.action_cycle_thinking)
        yield SystemCommand(
            "Choose thinking level",
            "Pick a level; the save key (Ctrl+S) keeps it as the default",
            self.action_pick_thinking_level,
        )
        yield SystemCommand("Expand tool output", "Show or fold long output", self.action_toggle_expanded)
        yield SystemCommand("Toggle thinking", "Show or hide thinking", self.action_toggle_thinking)

    def switch_theme(self, name: str) -> list[str]:
        """Switch at run time; returns the problems found in the theme file."""
        self.theme_problems = []
        self._install_theme(name)
        return list(self.theme_problems)

    def _reload_theme_if_changed(self) -> None:
        if self._theme_path is None:
            return
        mtime = _mtime(self._theme_path)
        if mtime is not None and mtime != self._theme_mtime:
            problems = self.switch_theme(self.pi_theme_name)
            self.say(f"Theme {self._theme_path.name} changed on disk: reloaded.")
            for problem in problems:
                self.say(problem, "warning")

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

    def follow_transcript(self, follow: Any) -> None:
        """Look at ``follow.source`` once a second and show what it gains (read-only until the
        user continues the conversation here)."""
        from pi_tui.tui.follow import POLL_SECONDS, FileWatch

        self.stop_following()
        self.following = follow
        self._follow_timer = self.set_interval(POLL_SECONDS, self._check_follow)
        self._follow_watch = FileWatch.start(follow.source, lambda: self.run_worker(self._check_follow()))
        self.footer.set_status("follow", f"following {follow.name} (live)")
        self.refresh_footer()

    def stop_following(self) -> None:
        if self._follow_timer is not None:
            self._follow_timer.stop()
        if self._follow_watch is not None:
            self._follow_watch.close()
        self._follow_timer = self._follow_watch = None
        if self.following is not None:
            self.following = None
            self.footer.set_status("follow", None)
            self.refresh_footer()

    async def _check_follow(self) -> None:
        from pi_tui.tui.follow import catch_up

        if self.following is not None:
            await catch_up(self, self.following)

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        follow = self.following
        stripped = message.text.strip()
        if follow is not None and stripped and not stripped.startswith(("/", "!")):
            from pi_tui.tui.follow import continue_here

            self.run_worker(continue_here(self, follow, message.text), group="follow", exit_on_error=False)
            return
        if self.agent is None:
            self.editor.load_text(message.text)  # keep it: it can be sent in a moment
            self.editor.move_cursor(self.editor.document.end)
            self.status.hint = "Still starting; send again in a moment."
            self.set_timer(2, self._clear_hint)
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
        self.status.hint = text
        self.set_timer(seconds, self._clear_hint)

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
        from pi_tui.tui.slash import run_command

        if self.agent is None:
            self.status.hint = "Still starting; try again in a moment."
            self.set_timer(2, self._clear_hint)
            return
        self.run_worker(run_command(self, name, args), group="slash", exit_on_error=False)

    def settings_view(self) -> SettingsView:
        """What /settings shows: the settings, the live theme and thinking level."""
        from pi_tui.ai.thinking import supported_levels
        from pi_tui.tui.settings_rows import SettingsView

        agent = self.agent
        levels = supported_levels(agent.model)
        themes = theme_choices(self.theme_files())
        return SettingsView(
            agent.settings, self.pi_theme_name, themes, agent.thinking_level, levels, not self.show_thinking
        )

    def on_settings_screen_previewed(self, message: Any) -> None:
        """A theme under the highlight (or the old one back after Escape): shown, not saved."""
        if message.id == "theme":
            self.switch_theme(message.value)

    def on_settings_screen_changed(self, message: Any) -> None:
        """Apply a /settings change now, save it in pi's keys, redraw the rows."""
        from pi_tui.tui.settings_rows import SettingValueError, apply_to_settings, build_rows, parse_change

        try:
            change = parse_change(message.id, message.value)
        except SettingValueError as error:
            message.screen.show_problem(str(error))
            return
        if change.id == "thinking" and change.value == self.agent.thinking_level:
            return  # as pi: the same level is neither recorded nor saved as the default
        if change.id == "theme":
            for problem in self.switch_theme(change.value):
                self.say(problem, "warning")
        elif change.id == "thinking":
            self.agent.set_thinking_level(change.value)
        elif change.id == "hide-thinking":
            self.show_thinking = not change.value
        apply_to_settings(self.agent.settings, change)
        if change.id == "secrets":
            self.reinstall_secrets()
        self.apply_screen_settings(self.agent.settings)
        self.save_setting(change.saved)
        message.screen.show_rows(build_rows(self.settings_view()))

    def reinstall_secrets(self) -> None:
        """Gather the secrets again (a setting, secrets.yml or a key changed); problems are said."""
        from pi_tui.startup import install_secrets

        if self.started.options is None:
            return
        for problem in install_secrets(self.agent.settings, self.started.options, self.started.registry):
            self.say(problem, "warning")

    def save_setting(self, change: dict[str, Any]) -> None:
        """Write a change (pi's keys) to the global settings.json; a failure is said, not raised."""
        from pi_tui.config.settings import SettingsError, update_global_settings

        try:
            update_global_settings(change)
        except (OSError, SettingsError) as error:
            self.say(f"Applied, but could not save the setting: {error}", "warning")

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
        now = time.monotonic()
        if self.busy:
            self.abort()
            return
        action = self.agent.settings.double_escape_action if self.agent is not None else "tree"
        if action == "none" or self.editor.text:
            return
        if now - self._last_escape < DOUBLE_PRESS_SECONDS:
            self._last_escape = 0.0
            self.run_slash("tree" if action == "tree" else "branch", "")
            return
        self._last_escape = now

    def abort(self) -> None:
        """Stop the run; queued messages come back into the editor instead of being lost."""
        if self._cancellable is not None and not self._cancellable.done():
            self._cancellable.cancel()
            return
        self.agent.abort()
        queued = self.agent.clear_queues()
        if queued:
            restored = "\n".join(item.text for item in queued)
            current = self.editor.text
            self.editor.load_text(f"{restored}\n{current}" if current else restored)
        self.status.hint = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Our keys belong to the chat screen; pickers and panels get theirs.
        # (the palette's own binding too: its key means something else in /scoped-models)
        return not (action in ("app_key", "command_palette") and len(self.screen_stack) > 1)

    def _bind_app_keys(self) -> None:
        """Each key of the chat scope goes to :meth:`action_app_key`, which runs the first of
        its actions that applies (Ctrl+C copies a mouse selection, else clears the editor).
        On /reload the keys bound before are dropped first."""
        table = self._bindings.key_to_bindings
        for key in list(table):
            kept = [binding for binding in table[key] if not binding.action.startswith("app_key(")]
            if kept:
                table[key] = kept
            else:
                del table[key]
        keys = {
            key
            for action, spec in ACTIONS.items()
            if spec.scope == "app"
            for key in self.keys.bindings.get(action, ())
        }
        for key in sorted(keys):
            self._bindings.bind(key, f"app_key({key!r})", show=False, priority=True)

    def action_app_key(self, key: str) -> None:
        search = self.transcript_search
        if search.active and isinstance(self.focused, SearchInput) and search.input.run_key(key):
            return  # the search's keys come first while its box has the focus (pi's rule)
        recall = [a for a in self.keys.action_for(key, "editor") if a in ("recall_previous", "recall_next")]
        if recall and self.focused is self.editor:
            self.editor.run_key(key)  # pi: the dedicated history keys win over the app's
            return
        for action in self.keys.action_for(key, "app"):
            handler = getattr(self, f"_key_{action}", None)
            if handler is not None and handler() is not False:
                return
        self.editor.run_key(key)  # not for the chat now (Ctrl+D with text): the editor's meaning

    async def on_event(self, event: events.Event) -> None:
        """A key pressed on a picker screen becomes the key that screen listens for, so every
        pi key id works there as keybindings.json says (Ctrl+N for the named filter...)."""
        if isinstance(event, events.Key) and not event.is_forwarded and len(self.screen_stack) > 1:
            event = self._translated_key(event)
        await super().on_event(event)

    def _translated_key(self, event: events.Key) -> events.Key:
        scopes = SCREEN_KEY_SCOPES.get(type(self.screen).__name__, ("select",))
        for scope in scopes:
            actions = self.keys.action_for(event.key, scope)
            if actions:
                wanted = self.keys.default_key(actions[0])
                if wanted is None or wanted == event.key:
                    return event
                character = wanted if len(wanted) == 1 else None
                return events.Key(wanted, character)
        if type(self.screen).__name__ == "TreeScreen" and event.key in self.keys.keys_for("message_copy"):
            return events.Key("ctrl+x", None)  # pi 1.x: app.message.copy copies the selected entry
        return event

    # --- the chat's key actions (``_key_<action>``; False: not for now, let the editor have it)

    def _key_clear(self) -> None:
        self.action_clear_or_exit()

    def _key_copy(self) -> bool:
        selected = self.screen.get_selected_text()
        if not selected:
            return False
        from pi_tui.tui.clipboard import copy_text

        result = copy_text(selected, self.copy_to_clipboard)
        self.screen.clear_selection()
        self.show_hint(result.message, 3)
        return True

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

    def _key_command_palette(self) -> None:
        self.action_command_palette()

    def _key_cycle_model_forward(self) -> None:
        self.cycle_model(1)

    def _key_cycle_model_backward(self) -> None:
        self.cycle_model(-1)

    def set_scoped_models(self, keys: list[str], *, save: bool) -> bool:
        from pi_tui.ai.scoped_models import resolve_scoped_models
        from pi_tui.config.settings import SettingsError, update_global_settings

        assert self.started is not None
        levels = {item.key: item.thinking for item in self.started.scoped_models}
        scoped = resolve_scoped_models(self.started.registry, keys)
        self.started.scoped_models = [type(item)(item.model, levels.get(item.key)) for item in scoped]
        if not save:
            return False
        patterns = [
            f"{item.key}:{item.thinking}" if item.thinking else item.key
            for item in self.started.scoped_models
        ]
        try:
            update_global_settings({"enabledModels": patterns or None})
        except (OSError, SettingsError) as error:
            self.say(f"Could not save enabledModels: {error}", "warning")
            return False
        self.agent.settings.enabled_models = patterns or None
        return True

    def cycle_model(self, step: int) -> None:
        """Ctrl+P / Shift+Ctrl+P: the next model of the scope (--models, enabledModels, or every
        usable model), with the thinking level its pattern gave."""
        from pi_tui.ai.scoped_models import cycle_list, next_model

        if self.agent is None or self.started is None:
            return
        if self.busy:
            self.show_hint("Wait for the reply to finish (or press Esc) before switching models.")
            return
        cycle = cycle_list(self.started.registry, self.started.scoped_models, self.agent.model)
        chosen = next_model(cycle, self.agent.model, step)
        if chosen is None:
            self.show_hint("Only one model to cycle through: add more with --models or /scoped-models.", 4)
            return
        self.agent.set_model(chosen.model, source="cycle")
        level = chosen.thinking
        if level is not None and (level == "off" or chosen.model.reasoning):
            self.agent.set_thinking_level(level)
        self.refresh_footer()
        thinking = f" (thinking {self.agent.thinking_level})" if chosen.model.reasoning else ""
        self.show_hint(f"Model: {chosen.model.provider}/{chosen.model.id}{thinking}", 3)

    def _redraw_after_resume(self, _app: object) -> None:
        """Back from Ctrl+Z (``fg``): the shell drew over the screen, so all of it is drawn again."""
        self.refresh(layout=True)

    def _key_model_picker(self) -> None:
        self.action_model_picker()

    def _key_cycle_thinking(self) -> None:
        self.action_cycle_thinking()

    def _key_expand(self) -> None:
        self.action_toggle_expanded()

    def _key_toggle_thinking(self) -> None:
        self.action_toggle_thinking()

    def _key_page_up(self) -> None:
        self.chat.page_up()

    def _key_page_down(self) -> None:
        self.chat.page_down()

    def _key_half_page_up(self) -> None:
        self.chat.half_page_up()

    def _key_half_page_down(self) -> None:
        self.chat.half_page_down()

    def _key_line_up(self) -> None:
        self.chat.scroll_lines(-1)

    def _key_line_down(self) -> None:
        self.chat.scroll_lines(1)

    def _key_previous_prompt(self) -> None:
        self.chat.jump_to_prompt(-1)

    def _key_next_prompt(self) -> None:
        self.chat.jump_to_prompt(1)

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

    def _key_message_copy(self) -> None:
        """pi 1.x's Ctrl+X: the last assistant message, as its markdown, to the clipboard."""
        from pi_tui.tui.clipboard import copy_text

        text = self.last_answer_text()
        if text is None:
            self.show_hint("No assistant message to copy yet.")
            return
        result = copy_text(text, self.copy_to_clipboard)
        self.show_hint(result.message, 3)

    def _key_chat_top(self) -> None:
        self.chat.to_top()

    def _key_chat_bottom(self) -> None:
        self.chat.to_bottom()

    def _key_new_session(self) -> None:
        self.run_slash("new", "")

    def _key_open_tree(self) -> None:
        self.run_slash("tree", "")

    def _key_fork(self) -> None:
        self.run_slash("fork", "")

    def _key_resume(self) -> None:
        self.run_slash("resume", "")

    def _key_dequeue(self) -> None:
        """Alt+Up: queued steering and follow-up messages come back into the editor to edit."""
        queued = self.agent.clear_queues() if self.agent is not None else []
        if not queued:
            self.show_hint("No queued messages to bring back.")
            return
        restored = "\n".join(item.text for item in queued)
        current = self.editor.text
        self.editor.load_text(f"{restored}\n{current}" if current else restored)
        self.editor.move_cursor(self.editor.document.end)

    def _key_paste_image(self) -> None:
        """Ctrl+V: the clipboard's image is saved to a file and its path typed in, as pi does;
        the model reads it with the read tool, which hands images over as images."""
        from pi_tui.tui.clipboard import read_clipboard_image, save_clipboard_image

        image = read_clipboard_image()
        if image.data is None:
            self.show_hint(f"No image pasted: {image.reason}.", 6)
            return
        try:
            path = save_clipboard_image(image)
        except OSError as error:
            self.say(f"Could not save the pasted image: {error.strerror or error}", "error")
            return
        self.editor.insert(str(path))

    def _key_external_editor(self) -> None:
        """Ctrl+G: the message goes to $VISUAL/$EDITOR in a temporary file and comes back edited."""
        from pi_tui.tui.external_editor import EditorProblem, edit_in_external_editor

        try:
            configured = self.agent.settings.external_editor if self.agent is not None else None
            edited = edit_in_external_editor(self.editor.text, self.suspend, configured=configured)
        except EditorProblem as problem:
            self.say(str(problem), "warning")
            return
        if edited is not None:
            self.editor.load_text(edited)
            self.editor.move_cursor(self.editor.document.end)

    def action_clear_or_exit(self) -> None:
        now = time.monotonic()
        if self.editor.text:
            self.editor.clear()
            self._last_ctrl_c = now
            return
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS * 2:
            self.run_worker(self.shutdown(), group="exit")
            return
        self._last_ctrl_c = now
        self.status.hint = "Press Ctrl+C again to exit"
        self.set_timer(DOUBLE_PRESS_SECONDS * 2, self._clear_hint)

    def _clear_hint(self) -> None:
        self.status.hint = None

    def action_model_picker(self) -> None:
        self.run_slash("model", "")

    def action_cycle_thinking(self) -> None:
        from pi_tui.tui.slash import cycle_thinking

        if self.agent is None:
            return
        cycle_thinking(self)

    async def pick_thinking_level(self) -> None:
        """pi 1.x's thinking selector: Enter uses the level for this session, the
        ``app.thinking.save`` key (Ctrl+S) also saves it as ``defaultThinkingLevel``."""
        from pi_tui.ai.thinking import supported_levels
        from pi_tui.tui.screens.thinking_picker import ThinkingPicker

        if self.agent is None:
            return
        agent = self.agent
        save_keys = self.keys.bindings.get("thinking_save", ())
        picker = ThinkingPicker(
            list(supported_levels(agent.model)),
            agent.thinking_level,
            agent.settings.default_thinking_level,
            display_key(save_keys[0]) if save_keys else "(unbound)",
        )
        chosen = await self.push_screen_wait(picker)
        if chosen is None:
            return
        level, save = chosen
        agent.set_thinking_level(level)
        if save:
            agent.settings.default_thinking_level = level
            self.save_setting({"defaultThinkingLevel": level})
        self.refresh_footer()
        self.show_hint(f"Default thinking level: {level}" if save else f"Thinking level: {level}", 3)

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
        if self.is_mounted:
            self.chat.expanded = expanded
            self.query_one(PiHeader).expanded = expanded

    def watch_show_thinking(self, show: bool) -> None:
        if self.is_mounted:
            self.chat.show_thinking = show

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


def peek_setting(cwd: str, key: str, approve: bool | None = None) -> Any:
    """One top-level setting, read before the settings module (pydantic) is imported: what the
    first frame needs (the theme). The project file wins, as in load_settings, when the folder
    is trusted without asking (``approve`` is ``-a``/``-na``; pi_tui/config/project_trust.py);
    a broken file is ignored here and reported properly when the agent starts."""

    from pi_tui.config.paths import global_settings_path, project_settings_path
    from pi_tui.config.project_trust import saved_trust_allows

    value = None
    paths = [global_settings_path()]
    if saved_trust_allows(cwd, approve):
        paths.append(project_settings_path(cwd))
    for path in paths:
        try:
            data = jsonio.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and key in data:
            value = data[key]
    return value


def _settings_themes(cwd: str, folder: Path, approve: bool | None) -> list[str]:
    """pi's settings ``themes``: theme files or folders named in the user's (and the trusted
    project's) settings, offered like ``--theme`` folders (``--no-themes`` skips them)."""
    from pi_tui.config.project_trust import saved_trust_allows
    from pi_tui.resources.listed import listed_paths

    trusted = saved_trust_allows(cwd, approve)
    return [
        str(path) for path in listed_paths(cwd, folder, "themes", project_trusted=trusted) if path.exists()
    ]


def _theme_from_options(options: StartOptions | None) -> str | None:
    """The theme ``--theme`` asks for: the last name, or the last theme file given."""
    chosen = None
    for value in (options.theme_paths or []) if options is not None else []:
        path = Path(value).expanduser()
        if path.is_dir():
            continue
        chosen = path.stem if path.suffix == ".json" else value
    return chosen


def user_texts(items: list[Any]) -> list[str]:
    return [item.text for item in items if isinstance(item, UserItem)]


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
