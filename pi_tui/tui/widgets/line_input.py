"""A one-line text box that keeps the keys of a burst in the order they were typed.

Textual's ``Input`` inserts a printable key as soon as the key reaches it, but its editing keys
(Left, Backspace, Home, Ctrl+W...) are bindings: such a key is not handled by the box, it bubbles
up through the box's parents' message queues and the app runs the binding when it gets there.
Keys that arrive together (a paste-speed burst from tmux, an ssh session catching up, a fast
typist) therefore come out of order: ``abcdef`` Left x4 ``X`` gave ``abcdefX`` (the X inserted
before the Lefts ran), and ``abcdef`` Backspace x6 ``gh`` gave ``ab``. :class:`LineInput` runs its
own bindings while it handles the key, in the order the keys came, as pi's editor does.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class LineInput(Input):
    """``Input`` whose own editing keys run in order with the typed characters."""

    async def _on_key(self, event: events.Key) -> None:
        """The box's own binding for this key runs now, not after the key's trip to the app
        (the box's bindings are the first the app would have found for it anyway: it has the
        focus; screen bindings marked priority are run by the app before the key gets here)."""
        for binding in self._bindings.key_to_bindings.get(event.key, []):
            if self.check_action(binding.action, ()) is False:
                continue
            event.stop()
            event.prevent_default()
            await self.run_action(binding.action)
            return
        await super()._on_key(event)
