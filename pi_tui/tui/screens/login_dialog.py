"""The dialog of a subscription sign-in in ``/login``: the authorization URL (or the device code
and its page) shown as text to copy, a line to paste the redirect URL or code into, the step
under way, and Esc to stop.

It is the :class:`~pi_tui.ai.oauth.login.LoginUI` of the flow that ``/login`` runs
(pi_tui/tui/slash_auth.py), and its ``paste`` answers the flow's question. Everything shown that
came from a server (the device code, its page) is drawn as plain, terminal-safe text; the URL is
opened in a browser only where one can show it (:mod:`pi_tui.ai.oauth.browser`), and Ctrl+Y puts
it on the clipboard for a browser elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.tui.screens.prompts import plain
from pi_tui.tui.widgets.line_input import LineInput

CANCEL_HELP = "esc cancel"


class LoginDialog(ModalScreen[None]):
    """One sign-in's dialog; ``on_cancel`` is called when the user presses Esc."""

    CSS_PATH = "login_dialog.tcss"
    BINDINGS = [Binding("ctrl+y", "copy_url", "Copy URL", show=False)]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title
        self.url: str | None = None
        self.user_code: str | None = None
        self.on_cancel: Callable[[], object] | None = None
        self._answer: asyncio.Future[str | None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="picker", classes="login-dialog"):
            yield Static(plain(self.title_text), classes="picker-title")
            yield Static("", id="login-url")
            yield Static("", id="login-code")
            yield Static("", id="login-instructions")
            yield Static("", id="login-prompt")
            yield LineInput(id="login-input", placeholder="paste the redirect URL or code")
            yield Static("", id="login-progress")
            yield Static(CANCEL_HELP, id="login-help", classes="picker-help")

    def on_mount(self) -> None:
        self.query_one("#login-input", Input).display = False
        for name in ("url", "code", "instructions", "prompt", "progress"):
            self._set(name, "")

    def _set(self, name: str, text: str) -> None:
        """Show ``text`` (outside text, drawn plain) in the ``login-<name>`` line; an empty one
        takes no room."""
        line = self.query_one(f"#login-{name}", Static)
        line.update(plain(text))
        line.display = bool(text)

    # --- LoginUI --------------------------------------------------------------------------------

    def show_url(self, url: str, instructions: str) -> None:
        from pi_tui.ai.oauth.browser import headless_reason, open_browser

        self.url = url
        opened = open_browser(url)
        where = "A browser was opened at:" if opened else "Open this URL in a browser to sign in:"
        if not opened and headless_reason():
            where = f"Open this URL in a browser ({headless_reason()} here):"
        self._set("url", f"{where}\n{url}")
        self._set("instructions", instructions)
        self._help("ctrl+y copy URL · esc cancel")

    def show_device_code(self, user_code: str, verification_uri: str) -> None:
        self.user_code = user_code
        self.url = verification_uri
        self._set("url", f"Open this page in a browser:\n{verification_uri}")
        self._set("code", f"Enter code: {user_code}")
        self._set("instructions", "Waiting for the code to be entered...")
        self._help("ctrl+y copy the page's URL · esc cancel")

    def progress(self, text: str) -> None:
        self._set("progress", text)

    async def paste(self, prompt: str) -> str | None:
        """The line the user pastes (Enter); the browser's callback may come first."""
        self._answer = asyncio.get_running_loop().create_future()
        self._set("prompt", prompt)
        field = self.query_one("#login-input", Input)
        field.display = True
        field.focus()
        return await self._answer

    # --- keys -----------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._answer is not None and not self._answer.done() and event.value.strip():
            self._answer.set_result(event.value.strip())
            field = self.query_one("#login-input", Input)
            field.display = False
            self._set("prompt", "> " + event.value.strip())

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            if self.on_cancel is not None:
                self.on_cancel()

    def action_copy_url(self) -> None:
        from pi_tui.tui.clipboard import copy_text

        if self.url is None:
            return
        result = copy_text(self.url, self.app.copy_to_clipboard)
        self.progress(result.message)

    def _help(self, text: str) -> None:
        self.query_one("#login-help", Static).update(text)
