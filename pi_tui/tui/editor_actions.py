"""The chat keys that fill or empty the editor from elsewhere: queued messages brought back,
an image pasted from the clipboard, the message edited in $VISUAL/$EDITOR, and the last answer
copied out. The clipboard and editor-process work is in :mod:`pi_tui.tui.clipboard` and
:mod:`pi_tui.tui.external_editor`; this module only connects them to the app's editor.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.tui.host import CommandHost
from pi_tui.tui.widgets.editor import PromptEditor

if TYPE_CHECKING:
    from textual.screen import Screen

EDITOR_ACTIONS: dict[str, str] = {
    "copy": "copy_selection",
    "message_copy": "message_copy",
    "dequeue": "dequeue",
    "paste_image": "paste_image",
    "external_editor": "external_editor",
}
"""The key actions (pi's ids) that :class:`EditorActions` answers, and its method for each."""


class EditorActionsHost(CommandHost, Protocol):
    """The app as these actions see it: a command host with its editor and Ctrl+Z's suspend."""

    @property
    def editor(self) -> PromptEditor:
        """The prompt editor."""

    @property
    def screen(self) -> Screen[object]:
        """The screen on top (where the mouse selection is)."""

    def suspend(self) -> AbstractContextManager[None]:
        """Give the terminal to another program (the external editor) until the block ends."""


class EditorActions:
    """The editor's key actions of one app."""

    def __init__(self, host: EditorActionsHost) -> None:
        self.host = host

    def restore_queued(self, queued: list[Any], *, cursor_to_end: bool = False) -> None:
        """Queued steering and follow-up messages go back in front of what the editor holds."""
        if not queued:
            return
        editor = self.host.editor
        restored = "\n".join(item.text for item in queued)
        current = editor.text
        editor.load_text(f"{restored}\n{current}" if current else restored)
        if cursor_to_end:
            editor.move_cursor(editor.document.end)

    def copy_selection(self) -> bool:
        """Ctrl+C with text selected by the mouse copies it; False (no selection): not for now,
        the key's next action (clearing the editor) runs instead."""
        from pi_tui.tui.clipboard import copy_text

        host = self.host
        selected = host.screen.get_selected_text()
        if not selected:
            return False
        result = copy_text(selected, host.copy_to_clipboard)
        host.screen.clear_selection()
        host.show_hint(result.message, 3)
        return True

    def message_copy(self) -> None:
        """pi 1.x's Ctrl+X: the last assistant message, as its markdown, to the clipboard."""
        from pi_tui.tui.clipboard import copy_text

        host = self.host
        text = host.last_answer_text()
        if text is None:
            host.show_hint("No assistant message to copy yet.")
            return
        result = copy_text(text, host.copy_to_clipboard)
        host.show_hint(result.message, 3)

    def dequeue(self) -> None:
        """Alt+Up: queued steering and follow-up messages come back into the editor to edit."""
        host = self.host
        queued = host.agent.clear_queues() if host.agent is not None else []
        if not queued:
            host.show_hint("No queued messages to bring back.")
            return
        self.restore_queued(queued, cursor_to_end=True)
        # pi says so too: the messages left the queue (they will not be sent) and are now the
        # editor's text, which otherwise happens without a word while the agent works
        count = len(queued)
        host.say(f"Restored {count} queued message{'' if count == 1 else 's'} to the editor.")

    def paste_image(self) -> None:
        """Ctrl+V: the clipboard's image is saved to a file and its path typed in, as pi does;
        the model reads it with the read tool, which hands images over as images."""
        from pi_tui.tui.clipboard import read_clipboard_image, save_clipboard_image

        host = self.host
        image = read_clipboard_image()
        if image.data is None:
            host.show_hint(f"No image pasted: {image.reason}.", 6)
            return
        try:
            path = save_clipboard_image(image)
        except OSError as error:
            host.say(f"Could not save the pasted image: {error.strerror or error}", "error")
            return
        host.editor.insert(str(path))

    def external_editor(self) -> None:
        """Ctrl+G: the message goes to $VISUAL/$EDITOR in a temporary file and comes back edited."""
        from pi_tui.tui.external_editor import EditorProblem, edit_in_external_editor

        host = self.host
        editor = host.editor
        try:
            configured = host.agent.settings.external_editor if host.agent is not None else None
            edited = edit_in_external_editor(editor.text, host.suspend, configured=configured)
        except EditorProblem as problem:
            host.say(str(problem), "warning")
            return
        if edited is not None:
            editor.load_text(edited)
            editor.move_cursor(editor.document.end)
