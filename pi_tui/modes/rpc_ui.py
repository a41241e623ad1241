"""``ctx.ui`` in rpc mode: pi's extension UI sub-protocol over the same stdout/stdin.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) write an ``extension_ui_request`` with a
fresh ``id`` and wait for the client's ``extension_ui_response`` with that id (``value``,
``confirmed``, or ``cancelled: true``). ``notify``, ``setStatus``, ``setWidget`` and
``set_editor_text`` are written and not answered. What the client shows is up to it; a custom
Textual screen cannot travel, so ``custom`` answers None at once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.extensions.ui import ExtensionUI, NotifyLevel, WidgetPlacement


class RpcExtensionUI(ExtensionUI):
    has_ui = True

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        super().__init__()
        self._send = send
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def bound(self, extension: str) -> ExtensionUI:
        other = super().bound(extension)
        assert isinstance(other, RpcExtensionUI)
        other._waiting = self._waiting  # every copy answers through the same table
        return other

    def answer(self, record: dict[str, Any]) -> bool:
        """A client's ``extension_ui_response``: resolve the dialog it answers (False if none)."""
        waiting = self._waiting.pop(str(record.get("id")), None)
        if waiting is None or waiting.done():
            return False
        waiting.set_result(record)
        return True

    def cancel_all(self) -> None:
        """The input ended: every open dialog is answered as cancelled."""
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result({"cancelled": True})
        self._waiting.clear()

    def _request(self, method: str, **fields: Any) -> str:
        request_id = str(uuid.uuid4())
        self._send({"type": "extension_ui_request", "id": request_id, "method": method, **fields})
        return request_id

    async def _dialog(self, method: str, **fields: Any) -> dict[str, Any]:
        request_id = str(uuid.uuid4())
        waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiting
        self._send({"type": "extension_ui_request", "id": request_id, "method": method, **fields})
        try:
            return await waiting
        finally:
            self._waiting.pop(request_id, None)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._request("notify", message=f"{self.extension}: {message}", notifyType=level)

    def set_status(self, key: str, text: str | None) -> None:
        fields: dict[str, Any] = {"statusKey": key}
        if text is not None:
            fields["statusText"] = text
        self._request("setStatus", **fields)

    def set_widget(
        self, key: str, lines: Sequence[str] | str | None, *, placement: WidgetPlacement = "above"
    ) -> None:
        fields: dict[str, Any] = {"widgetKey": key, "widgetPlacement": f"{placement}Editor"}
        if lines is not None:
            fields["widgetLines"] = (
                lines.splitlines() if isinstance(lines, str) else [str(line) for line in lines]
            )
        self._request("setWidget", **fields)

    def set_editor_text(self, text: str) -> None:
        self._request("set_editor_text", text=text)

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        answer = await self._dialog("confirm", title=title, message=message)
        return bool(answer.get("confirmed")) if not answer.get("cancelled") else False

    async def select(self, title: str, options: Sequence[str], *, default: str | None = None) -> str | None:
        answer = await self._dialog("select", title=title, options=[str(option) for option in options])
        value = answer.get("value")
        return None if answer.get("cancelled") or not isinstance(value, str) else value

    async def input(self, title: str, placeholder: str = "", *, default: str | None = None) -> str | None:
        answer = await self._dialog("input", title=title, placeholder=placeholder)
        value = answer.get("value")
        return None if answer.get("cancelled") or not isinstance(value, str) else value

    async def editor(self, title: str, prefill: str = "") -> str | None:
        answer = await self._dialog("editor", title=title, prefill=prefill)
        value = answer.get("value")
        return None if answer.get("cancelled") or not isinstance(value, str) else value

    async def custom(self, screen: Any) -> Any:
        return None
