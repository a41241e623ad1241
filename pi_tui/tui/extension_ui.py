"""``ctx.ui`` in the interactive mode.

Dialogs are the app's own modal screens; they can be opened from any task on the app's loop (a
handler, a tool, a command), as a screen's result is delivered through a future rather than by
``push_screen_wait`` (which only workers may call). Everything an extension passes is outside
text: the screens and the chat draw it with control characters made visible.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from pi_tui.extensions.ui import ExtensionUI, NotifyLevel, WidgetPlacement

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost


class TuiExtensionUI(ExtensionUI):
    """The dialogs and lines of the interactive app."""

    has_ui = True

    def __init__(self, app: CommandHost) -> None:
        super().__init__()
        self.app = app

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self.app.say(f"{self.extension}: {message}", level if level in ("warning", "error") else "info")

    def set_status(self, key: str, text: str | None) -> None:
        self.app.set_extension_status(key, text)

    def set_widget(
        self, key: str, lines: Sequence[str] | str | None, *, placement: WidgetPlacement = "above"
    ) -> None:
        if isinstance(lines, str):
            lines = lines.splitlines()
        self.app.set_extension_widget(key, lines, placement)

    def set_footer(self, text: str | None) -> None:
        self.app.set_extension_footer(text)

    def set_editor_text(self, text: str) -> None:
        self.app.replace_editor_text(text)

    async def _ask(self, screen: Any) -> Any:
        answered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(result: Any) -> None:
            if not answered.done():
                answered.set_result(result)

        self.app.push_screen(screen, done)
        return await answered

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        from pi_tui.tui.screens.prompts import ChoiceMenu

        answer = await self._ask(
            ChoiceMenu(f"{self.extension}: {title}", [("yes", "Yes"), ("no", "No")], message=message)
        )
        return answer == "yes" if answer is not None else False

    async def select(self, title: str, options: Sequence[str], *, default: str | None = None) -> str | None:
        from pi_tui.tui.screens.prompts import ChoiceMenu

        choices = [(str(option), str(option)) for option in options]
        return cast("str | None", await self._ask(ChoiceMenu(f"{self.extension}: {title}", choices)))

    async def input(self, title: str, placeholder: str = "", *, default: str | None = None) -> str | None:
        from pi_tui.tui.screens.prompts import TextPrompt

        prompt = TextPrompt(f"{self.extension}: {title}", default or "", placeholder=placeholder)
        return cast("str | None", await self._ask(prompt))

    async def editor(self, title: str, prefill: str = "") -> str | None:
        from pi_tui.tui.screens.prompts import EditorPrompt

        return cast("str | None", await self._ask(EditorPrompt(f"{self.extension}: {title}", prefill)))

    async def custom(self, screen: Any) -> Any:
        return await self._ask(screen)
