"""Copy text to the clipboard, and say truthfully whether it worked.

Two routes exist and neither is reliable alone. A system tool (pbcopy, wl-copy, xclip, xsel,
clip.exe) either succeeds or reports an error, but only exists on a desktop session. OSC 52 asks
the *terminal* to set the clipboard, which also works over ssh and inside tmux, but the escape
sequence is fire-and-forget: many terminals silently ignore it. So both are used, and the message
never claims more than we know: "copied" only when a tool confirmed it, "sent" for OSC 52.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TOOL_TIMEOUT = 2.0
"""Seconds a clipboard tool may take; a hung X connection must not freeze the UI."""

INSTALL_HINT = "install wl-copy, xclip or xsel"


@dataclass(slots=True)
class CopyResult:
    """What happened: ``method`` names the route that carried the text ("none" if nothing did)."""

    ok: bool
    method: str
    message: str


def _is_wsl(env: Mapping[str, str]) -> bool:
    """WSL sets these for every process; /proc/version is the fallback for stripped envs."""
    if env.get("WSL_DISTRO_NAME") or env.get("WSL_INTEROP"):
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        return "microsoft" in Path("/proc/version").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


def system_copy_commands(env: Mapping[str, str] | None = None) -> list[list[str]]:
    """Command lines of the clipboard tools usable here, best first.

    A tool only counts when the display it talks to is there too: xclip without ``DISPLAY``
    fails after a delay, which would only slow the fallback down.
    """
    env = os.environ if env is None else env
    path = env.get("PATH", "")
    found: list[list[str]] = []

    def add(name: str, *args: str) -> None:
        program = shutil.which(name, path=path)
        if program is not None:
            found.append([program, *args])

    if sys.platform == "darwin":
        add("pbcopy")
    if env.get("WAYLAND_DISPLAY"):
        add("wl-copy")
    if env.get("DISPLAY"):
        add("xclip", "-selection", "clipboard")
        add("xsel", "--clipboard", "--input")
    if _is_wsl(env):
        add("clip.exe")
    return found


def _tool_name(argv: Sequence[str]) -> str:
    return Path(argv[0]).name


def _characters(text: str) -> str:
    count = len(text)
    return f"{count:,} character" + ("" if count == 1 else "s")


def _run_tool(argv: Sequence[str], text: str, env: Mapping[str, str] | None) -> str | None:
    """Feed ``text`` to one tool; returns None on success, else why it failed.

    stderr goes to a temporary file rather than a pipe: xclip and wl-copy leave a child behind
    to serve the selection, and that child would hold a pipe open until the timeout.
    """
    name = _tool_name(argv)
    # clip.exe reads the Windows code page unless the input is UTF-16 with a byte-order mark.
    data = ("\ufeff" + text).encode("utf-16-le") if name.lower() == "clip.exe" else text.encode("utf-8")
    with tempfile.TemporaryFile() as errors:
        try:
            completed = subprocess.run(
                list(argv),
                input=data,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                timeout=TOOL_TIMEOUT,
                env=dict(env) if env is not None else None,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"{name} timed out after {TOOL_TIMEOUT:g} s"
        except OSError as error:
            return f"{name} could not be started ({error.strerror or error})"
        if completed.returncode == 0:
            return None
        errors.seek(0)
        detail = errors.read(2000).decode("utf-8", "replace").strip().splitlines()
        reason = f"exit code {completed.returncode}"
        if detail:
            reason += f": {detail[-1]}"
        return f"{name} failed ({reason})"


def copy_text(
    text: str,
    osc52: Callable[[str], None] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    commands: Sequence[Sequence[str]] | None = None,
) -> CopyResult:
    """Put ``text`` on the clipboard by every route available and report honestly.

    ``osc52`` is the terminal route (Textual's ``App.copy_to_clipboard``); it is used even when a
    system tool worked, because over ssh the tool fills the remote machine's clipboard while the
    user wants the local one. ``commands`` overrides tool discovery (tests, user settings).
    """
    if not text:
        return CopyResult(False, "none", "Nothing to copy.")
    tools = system_copy_commands(env) if commands is None else [list(argv) for argv in commands if argv]
    tool_failures: list[str] = []
    copied_with: str | None = None
    for argv in tools:
        failure = _run_tool(argv, text, env)
        if failure is None:
            copied_with = _tool_name(argv)
            break
        tool_failures.append(failure)

    osc52_sent = False
    osc52_failure: str | None = None
    if osc52 is not None:
        try:
            osc52(text)
            osc52_sent = True
        except Exception as error:  # a terminal write error must not hide a successful copy
            osc52_failure = f"sending OSC 52 failed ({type(error).__name__}: {error})"

    amount = _characters(text)
    if copied_with is not None:
        message = f"Copied {amount} with {copied_with}."
        if osc52_sent:
            message += " Also sent to the terminal clipboard (OSC 52)."
        return CopyResult(True, copied_with, message)

    tools_report = "; ".join(tool_failures) or f"No system clipboard tool was found ({INSTALL_HINT})"
    if osc52_sent:
        return CopyResult(
            True,
            "osc52",
            f"Sent {amount} to the terminal clipboard (OSC 52). {tools_report}; "
            "if your terminal ignores OSC 52 nothing was copied.",
        )
    reasons = [
        "; ".join(tool_failures) or f"no system clipboard tool was found ({INSTALL_HINT})",
        osc52_failure or "the terminal clipboard (OSC 52) is not available here",
    ]
    return CopyResult(False, "none", f"Could not copy: {'; '.join(reasons)}.")


IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""Image formats the models take, best first."""
IMAGE_SUFFIXES = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
PASTE_IMAGE_HINT = (
    "no clipboard tool that can hand over an image was found: install wl-clipboard (Wayland) "
    "or xclip (X11), or pngpaste on macOS; or save the image and type @path/to/image.png"
)


@dataclass(slots=True)
class ClipboardImage:
    """An image read from the clipboard, or why there is none (``data`` None)."""

    data: bytes | None
    mime_type: str = ""
    reason: str = ""


def _read(argv: Sequence[str], env: Mapping[str, str] | None) -> bytes | None:
    try:
        completed = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TOOL_TIMEOUT,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    return completed.stdout if completed.returncode == 0 and completed.stdout else None


def _best_type(listed: bytes | None) -> str | None:
    offered = {line.strip().lower() for line in (listed or b"").decode("utf-8", "replace").splitlines()}
    return next((kind for kind in IMAGE_TYPES if kind in offered), None)


def read_clipboard_image(env: Mapping[str, str] | None = None) -> ClipboardImage:
    """The clipboard's image through the system tool for this desktop (wl-paste, xclip, pngpaste).

    The tools are asked which types the clipboard holds first, so text on the clipboard is never
    mistaken for an image; every failure comes back as a reason the user can act on.
    """
    env = os.environ if env is None else env
    path = env.get("PATH", "")
    tried = False
    if env.get("WAYLAND_DISPLAY") and (tool := shutil.which("wl-paste", path=path)):
        tried = True
        kind = _best_type(_read([tool, "--list-types"], env))
        data = _read([tool, "--type", kind, "--no-newline"], env) if kind else None
        if data:
            return ClipboardImage(data, kind or "")
    if env.get("DISPLAY") and (tool := shutil.which("xclip", path=path)):
        tried = True
        kind = _best_type(_read([tool, "-selection", "clipboard", "-t", "TARGETS", "-o"], env))
        data = _read([tool, "-selection", "clipboard", "-t", kind, "-o"], env) if kind else None
        if data:
            return ClipboardImage(data, kind or "")
    if sys.platform == "darwin" and (tool := shutil.which("pngpaste", path=path)):
        tried = True
        data = _read([tool, "-"], env)
        if data:
            return ClipboardImage(data, "image/png")
    if tried:
        return ClipboardImage(None, reason="the clipboard holds no image")
    return ClipboardImage(None, reason=PASTE_IMAGE_HINT)


def save_clipboard_image(image: ClipboardImage, folder: Path | None = None) -> Path:
    """Write the image to a temporary file the prompt can point at (as pi does)."""
    assert image.data is not None
    import uuid

    suffix = IMAGE_SUFFIXES.get(image.mime_type, "png")
    target = (folder or Path(tempfile.gettempdir())) / f"pi-tui-clipboard-{uuid.uuid4().hex[:12]}.{suffix}"
    target.write_bytes(image.data)
    return target
