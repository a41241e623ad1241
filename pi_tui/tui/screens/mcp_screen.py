"""``/mcp``: the MCP servers of the session, and one server's tools, details and actions.

One modal screen with a small stack of views, as pi's manager: the server list (servers that
need attention first), a server (state, where it is defined, how it is reached, its error and
stderr tail, and the actions that apply to it), its tools (each with its effective exposure and
the name the model sees), the exposure chooser, and the sign-in view (the authorization URL and
a field for a redirected URL pasted from a browser on another machine). Arrows move, Enter
chooses, Escape goes back one view and closes from the list.

The screen redraws whenever the manager reports a change (a server connects, fails, lists new
tools). Its listener runs on the MCP thread and only posts a message, which is thread-safe and
never waits for the app: the MCP loop must not block on the UI (the app stops the servers from
its own thread when it quits). The listener is removed when the screen goes.

Everything a server or a file says (names, errors, stderr, tool descriptions, URLs) is drawn as
plain :class:`~textual.content.Content` through :func:`~pi_tui.text_safety.for_terminal`: no
markup is read from it and no escape sequence reaches the terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.text_safety import for_terminal
from pi_tui.tui import mcp_actions
from pi_tui.tui.widgets.line_input import LineInput
from pi_tui.view import mcp_rows

if TYPE_CHECKING:
    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.mcp.manager import McpManager

STATE_STYLES = {
    "connected": "$pi-success",
    "connecting": "$pi-muted",
    "disabled": "$pi-dim",
    "failed": "$pi-error",
    "needs-sign-in": "$pi-warning",
    "disconnected": "$pi-error",
}


def plain(text: str, style: str = "") -> Content:
    """Outside text as something to draw: no markup, no control character."""
    content = Content(for_terminal(text))
    return content.stylize(style) if style else content


@dataclass(frozen=True, slots=True)
class McpPlace:
    """Where the session is: what "in this project" and the files' paths are relative to."""

    cwd: Path
    trusted: bool
    """The project is trusted (its mcp.json files are read, so "in this project" may write)."""


class McpScreen(ModalScreen[None]):
    """The /mcp manager; ``server`` opens straight on that server's view."""

    BINDINGS = [Binding("escape", "back", "Back", show=False)]

    class Changed(Message):
        """The manager reported a change (posted from the MCP thread)."""

    def __init__(self, manager: McpManager, place: McpPlace, *, server: str | None = None) -> None:
        super().__init__()
        self.manager = manager
        self.place = place
        self.view = "server" if server else "list"
        self.server = server or ""
        self.note: tuple[str, str] | None = None
        """The last action's outcome (text, level), shown under the list."""
        self.busy: str | None = None
        """What is being done now ("Reconnecting..."), or None."""
        self.sign_in_url: str | None = None
        """The authorization URL while a sign-in waits (tests follow it like a browser)."""
        self._pasted: asyncio.Future[str] | None = None
        self._chosen: str | None = None
        """The action running now: the highlight goes back to it when it is done (its row may
        leave the view meanwhile, as Reconnect does while the server is connecting)."""
        self._listener: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="picker", classes="mcp-panel"):
            yield Static("", classes="picker-title", id="mcp-title")
            yield Static("", id="mcp-details")
            yield Static("", id="mcp-problem")
            yield LineInput(placeholder="paste the redirected URL here", id="mcp-paste")
            yield OptionList(id="mcp-options")
            yield Static("", id="mcp-note")
            yield Static("", classes="picker-help", id="mcp-help")

    def on_mount(self) -> None:
        def changed() -> None:  # on the MCP thread: post, never wait for the app
            self.post_message(self.Changed())

        self._listener = changed
        self.manager.listeners.append(changed)
        self.draw()
        self.query_one(OptionList).focus()

    def on_unmount(self) -> None:
        if self._listener is not None and self._listener in self.manager.listeners:
            self.manager.listeners.remove(self._listener)
        self._listener = None
        if self._pasted is not None and not self._pasted.done():
            self._pasted.set_result("")

    def on_mcp_screen_changed(self, _message: McpScreen.Changed) -> None:
        self.draw()

    # --- drawing ----------------------------------------------------------------------------------

    def _status(self) -> ServerStatus | None:
        return mcp_actions.find(self.manager, self.server)

    def draw(self) -> None:
        """Rebuild the current view from a fresh snapshot, keeping the highlighted row."""
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        keep = options.get_option_at_index(highlighted).id if highlighted is not None else None
        status = self._status()
        if self.view != "list" and status is None:
            self.view = "list"  # the server went (a /reload removed it)
        title, details, problem, rows, help_text = self._build(status)
        self.query_one("#mcp-title", Static).update(plain(title))
        self._show("#mcp-details", details)
        self._show("#mcp-problem", problem)
        paste = self.query_one("#mcp-paste", Input)
        paste.display = self.view == "sign-in"
        options.display = self.view != "sign-in"
        options.clear_options()
        options.add_options(rows)
        ids = [option.id for option in rows]
        if rows:
            enabled = [i for i, option in enumerate(rows) if not option.disabled]
            if self._chosen is not None and self._chosen in ids:
                keep = self._chosen
            target = ids.index(keep) if keep in ids else (enabled[0] if enabled else 0)
            options.highlighted = target
        note = Content("")
        if self.busy:
            note = plain(self.busy, "$pi-muted")
        elif self.note is not None:
            text, level = self.note
            note = plain(text, {"error": "$pi-error", "warning": "$pi-warning"}.get(level, "$pi-success"))
        self._show("#mcp-note", note)
        self.query_one("#mcp-help", Static).update(help_text)

    def _show(self, selector: str, content: Content) -> None:
        widget = self.query_one(selector, Static)
        widget.update(content)
        widget.display = bool(content.plain)

    def _build(self, status: ServerStatus | None) -> tuple[str, Content, Content, list[Option], str]:
        if self.view == "list" or status is None:
            return self._list_view()
        if self.view == "tools":
            return self._tools_view(status)
        if self.view == "exposure":
            return self._exposure_view(status)
        if self.view == "sign-in":
            return self._sign_in_view(status)
        return self._server_view(status)

    def _list_view(self) -> tuple[str, Content, Content, list[Option], str]:
        statuses = mcp_rows.ordered(self.manager.statuses())
        rows = []
        for status in statuses:
            row = mcp_rows.server_row(status)
            style = STATE_STYLES.get(row.state, "")
            rows.append(
                Option(
                    Content.assemble(
                        plain(f"{row.mark} ", style), plain(row.name), plain(f"  {row.detail}", "$pi-muted")
                    ),
                    id=row.name,
                )
            )
        if not rows:
            rows.append(Option(plain("No MCP server is configured."), disabled=True))
        problems = [problem.line() for problem in self.manager.config.problems]
        return (
            "MCP servers",
            Content(""),
            plain("\n".join(problems), "$pi-warning"),
            rows,
            "↑↓ move · enter open · esc close",
        )

    def _server_view(self, status: ServerStatus) -> tuple[str, Content, Content, list[Option], str]:
        config = status.config
        details = plain("\n".join(mcp_rows.detail_lines(status)), "$pi-muted")
        problem = plain(mcp_rows.problem_text(status), "$pi-error")
        saved = mcp_actions.saved_where(config)
        in_project = mcp_actions.can_change_in_project(config, trusted=self.place.trusted)
        here = "saved to .agent/mcp.json"
        actions: list[tuple[str, str, str]] = []
        if not config.enabled:
            actions.append(("enable", "Enable", saved))
            if in_project:
                actions.append(("enable-project", "Enable in this project", here))
        else:
            if status.state == "needs-sign-in":
                actions.append(("sign-in", "Sign in", "opens the authorization page"))
            if status.state == "connected":
                count = mcp_rows.tool_count(status)
                actions.append(("tools", "Tools", f"{count} offered" if status.tools else "none offered"))
            if status.state != "connecting":
                actions.append(("reconnect", "Reconnect", ""))
            if mcp_actions.signed_in(self.manager, config):
                actions.append(("sign-out", "Sign out", "deletes the stored credentials"))
            actions.append(("exposure", "Exposure", config.exposure))
            actions.append(("disable", "Disable", saved))
            if in_project:
                actions.append(("disable-project", "Disable in this project", here))
        rows = [
            Option(Content.assemble(plain(label), plain(f"  {note}" if note else "", "$pi-muted")), id=key)
            for key, label, note in actions
        ]
        return (f"MCP server {status.name}", details, problem, rows, "↑↓ move · enter choose · esc back")

    def _tools_view(self, status: ServerStatus) -> tuple[str, Content, Content, list[Option], str]:
        names = {
            getattr(tool, "tool", ""): tool.name
            for tool in self.manager.agent_tools()
            if getattr(tool, "server", None) == status.name
        }
        rows = []
        for row in mcp_rows.tool_rows(status, names):
            exposure = f"[{row.exposure}]" if row.differs else row.exposure
            rows.append(
                Option(
                    Content.assemble(
                        plain(row.mcp_name),
                        plain(f"  {exposure}", "$pi-warning" if row.differs else "$pi-accent"),
                        plain(f"  {row.description}" if row.description else "", "$pi-muted"),
                    ),
                    id=f"tool:{row.tool}",
                )
            )
        if not rows:
            rows.append(Option(plain("The server offers no tools."), disabled=True))
        exposure = status.config.exposure
        details = f"Exposure {exposure}: {mcp_rows.EXPOSURE_WORDS.get(exposure, '')}"
        if status.config.tool_exposure:
            details += "\nTools in [brackets] set their own exposure (toolExposure)."
        title = f"Tools of {status.name}"
        return (title, plain(details, "$pi-muted"), Content(""), rows, "↑↓ move · esc back")

    def _exposure_view(self, status: ServerStatus) -> tuple[str, Content, Content, list[Option], str]:
        current = status.config.exposure
        rows = [
            Option(
                Content.assemble(
                    plain(f"{'✓' if word == current else ' '} {word}"),
                    plain(f"  {mcp_rows.EXPOSURE_WORDS[word]}", "$pi-muted"),
                ),
                id=f"exposure:{word}",
            )
            for word in mcp_actions.EXPOSURE_CHOICES
        ]
        where = mcp_actions.saved_where(status.config)
        return (
            f"Exposure of {status.name}",
            plain(f"The choice is {where}: {mcp_actions.file_of(status.config)}", "$pi-muted"),
            Content(""),
            rows,
            "↑↓ move · enter save · esc back",
        )

    def _sign_in_view(self, status: ServerStatus) -> tuple[str, Content, Content, list[Option], str]:
        if self.sign_in_url is None:
            text = "Finding the authorization server..."
        else:
            text = (
                "Approve access in your browser. If it did not open, visit:\n"
                f"{self.sign_in_url}\n\n"
                "If the browser runs on another machine, paste the URL it was redirected to:"
            )
        return (
            f"Sign in to {status.name}",
            plain(text),
            Content(""),
            [],
            "enter submit the pasted URL · esc cancel",
        )

    # --- keys -------------------------------------------------------------------------------------

    def action_back(self) -> None:
        if self.view == "list":
            self.dismiss(None)
            return
        if self.view == "sign-in":
            self._cancel_sign_in()
        previous = "list" if self.view == "server" else "server"
        keep = self.server if previous == "list" else self.view  # the action that opened the view
        self.view = previous
        self.draw()
        self._highlight(keep)
        self.query_one(OptionList).focus()

    def _highlight(self, option_id: str) -> None:
        options = self.query_one(OptionList)
        for index in range(options.option_count):
            if options.get_option_at_index(index).id == option_id:
                options.highlighted = index
                return

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id or ""
        if self.busy:
            return
        if self.view == "list":
            self.view, self.server, self.note = "server", chosen, None
            self.draw()
            self.query_one(OptionList).highlighted = 0
            return
        if self.view == "exposure" and chosen.startswith("exposure:"):
            word = chosen.removeprefix("exposure:")
            outcome = mcp_actions.set_exposure(self.manager, self.server, word, cwd=self.place.cwd)
            self.note = (outcome.text, outcome.level)
            self.view = "server"
            self.draw()
            self._highlight("exposure")  # where the user was: Enter opens the chooser again
            return
        if self.view == "server":
            self.act(chosen)

    def act(self, action: str) -> None:
        """Run one of the server view's actions (``/mcp login`` starts here with ``sign-in``)."""
        name, cwd = self.server, self.place.cwd
        if action in ("tools", "exposure"):
            self.view, self.note = action, None
            self.draw()
            status = self._status()
            if action == "exposure" and status is not None:
                self._highlight(f"exposure:{status.config.exposure}")  # opens on the current one
            return
        self._chosen = action
        if action == "reconnect":
            self._run("Reconnecting...", mcp_actions.reconnect(self.manager, name))
        elif action in ("enable", "enable-project", "disable", "disable-project"):
            enabled = action.startswith("enable")
            work = mcp_actions.set_enabled(
                self.manager, name, enabled, cwd=cwd, in_project=action.endswith("-project")
            )
            self._run("Enabling..." if enabled else "Disabling...", work)
        elif action == "sign-out":
            self._run("Signing out...", mcp_actions.sign_out(self.manager, name))
        elif action == "sign-in":
            self._start_sign_in()

    def _run(self, doing: str, work: Coroutine[Any, Any, mcp_actions.Outcome]) -> None:
        """Run an action off the key handler; its outcome is the note under the list."""
        self.busy, self.note = doing, None
        self.draw()

        async def go() -> None:
            try:
                outcome = await work
            except Exception as error:  # an action's own failure is a line here, never a traceback
                outcome = mcp_actions.Outcome(f"{type(error).__name__}: {error}", "error")
            self.busy = None
            self.note = (outcome.text, outcome.level)
            if self.view == "sign-in":
                self.view = "server"
                self.query_one(OptionList).focus()
            self.draw()
            self._chosen = None  # from now on the highlight follows the keys alone

        self.run_worker(go(), group="mcp-action", exclusive=True, exit_on_error=False)

    # --- signing in -------------------------------------------------------------------------------

    def _start_sign_in(self) -> None:
        loop = asyncio.get_running_loop()
        self._pasted = loop.create_future()
        self.sign_in_url = None

        def open_url(url: str) -> None:
            self.sign_in_url = url
            mcp_actions.open_in_browser(url)
            self.draw()

        async def pasted() -> str:
            assert self._pasted is not None
            return await self._pasted

        self.view = "sign-in"
        self._run(
            "Waiting for the browser...",
            mcp_actions.sign_in(self.manager, self.server, open_url=open_url, pasted_redirect=pasted),
        )
        paste = self.query_one("#mcp-paste", Input)
        paste.value = ""
        paste.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if value and self._pasted is not None and not self._pasted.done():
            self._pasted.set_result(value)

    def _cancel_sign_in(self) -> None:
        if self._pasted is not None and not self._pasted.done():
            self._pasted.set_result("")  # an empty paste cancels the sign-in
        self.sign_in_url = None
