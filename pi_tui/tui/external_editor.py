"""Ctrl+G: edit the prompt in the user's own editor, as pi does.

The editor is the ``externalEditor`` setting (pi 1.x), else $VISUAL, else $EDITOR; each may
carry arguments (``code --wait``).

The text goes to a temporary file, the app gives the terminal to the editor (Textual's
``App.suspend``) and takes it back when the editor exits; the file's text becomes the prompt.
A failing editor leaves the prompt as it was: nothing typed is ever lost to a typo in $EDITOR.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path


class EditorProblem(Exception):
    """Why the external editor could not be used (one line for the chat)."""


def _argv(value: str, where: str) -> list[str]:
    """``value`` split as a shell would; a quote left open is an :class:`EditorProblem`."""
    try:
        return shlex.split(value)
    except ValueError as error:
        raise EditorProblem(f"{where} cannot be read as a command ({error}): {value}") from error


def editor_command(env: Mapping[str, str] | None = None, configured: str | None = None) -> list[str]:
    """The editor's command line: the ``externalEditor`` setting wins over $VISUAL, which wins
    over $EDITOR (pi 1.x's order)."""
    if configured is not None and configured.strip():
        argv = _argv(configured.strip(), "The externalEditor setting")
        if argv:
            return argv
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            argv = _argv(value, f"${name}")
            if argv:
                return argv
    raise EditorProblem(
        'Set "externalEditor" in settings.json, or $VISUAL or $EDITOR (for example: export '
        "EDITOR=vim), to edit the message there."
    )


def edit_in_external_editor(
    text: str,
    suspend: Callable[[], AbstractContextManager[None]],
    env: Mapping[str, str] | None = None,
    configured: str | None = None,
) -> str | None:
    """Run the editor on ``text``; the edited text, or None when the editor failed.

    ``suspend`` hands the terminal over for the editor's lifetime (the app's ``suspend``);
    ``configured`` is the ``externalEditor`` setting.
    One trailing newline, which editors add on save, is dropped.
    """
    argv = editor_command(env, configured)
    handle, name = tempfile.mkstemp(prefix="pi-tui-message-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            with suspend():
                completed = subprocess.run([*argv, str(path)], check=False)
        except FileNotFoundError as error:
            raise EditorProblem(f"The editor {argv[0]!r} was not found ({error.strerror}).") from error
        except Exception as error:
            if type(error).__name__ == "SuspendNotSupported":
                raise EditorProblem("This terminal cannot hand the screen to another program.") from error
            raise
        if completed.returncode != 0:
            status = completed.returncode
            raise EditorProblem(f"{argv[0]} exited with status {status}; the message is unchanged.")
        edited = path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
    return edited[:-1] if edited.endswith("\n") else edited
