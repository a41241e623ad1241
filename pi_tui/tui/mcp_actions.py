"""What ``/mcp`` does to a server: reconnect, enable or disable, change exposure, sign in or out.

Shared by the ``/mcp`` screen's actions and the ``/mcp reconnect|login|logout <server>``
commands, so a change made either way is saved and applied the same way: first to the file that
defines the server (:func:`~pi_tui.mcp.config_edit.set_server_fields`; an extension's server has
no file and changes for this session only), then to the running manager, so the model's tool set
follows at once. Each action answers with an :class:`Outcome` (one line and its level) instead of
raising: a broken mcp.json, a failed sign-in or a server that stays down is the user's to read,
never a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.mcp.manager import McpManager
    from pi_tui.mcp.model import ServerConfig

EXPOSURE_CHOICES = ("direct", "deferred", "hidden")


@dataclass(frozen=True, slots=True)
class Outcome:
    text: str
    level: str = "info"
    """``info``, ``warning`` or ``error``, as ``CommandHost.say`` takes them."""


def find(manager: McpManager, name: str) -> ServerStatus | None:
    return next((status for status in manager.statuses() if status.name == name), None)


def saved_where(config: ServerConfig) -> str:
    """Where an enable/disable/exposure change of ``config`` goes, for the action's label."""
    if config.override_source is not None and config.override_source.path is not None:
        return "saved to the project override"
    if config.source.path is None:
        return "for this session"
    return f"saved to the {config.source.scope} mcp.json"


def file_of(config: ServerConfig) -> str:
    """The file a change of ``config`` is written to (an extension's server: none)."""
    if config.override_source is not None and config.override_source.path is not None:
        return str(config.override_source.path)
    return str(config.source.path) if config.source.path is not None else config.source.label()


def can_change_in_project(config: ServerConfig, *, trusted: bool) -> bool:
    """ "Enable/Disable in this project" is offered for a user-level server without an override,
    in a trusted project (an untrusted project's files are never read, so never written)."""
    return trusted and config.source.scope in ("user", "pi-user") and config.override_source is None


def _save(config: ServerConfig, changes: dict[str, object], *, in_project: bool, cwd: Path) -> Path | None:
    """Write ``changes`` to the server's file; None for an extension's server (no file)."""
    from pi_tui.mcp.config_edit import set_server_fields
    from pi_tui.mcp.model import ConfigSource

    if config.source.path is None and config.override_source is None:
        return None
    path = set_server_fields(config, dict(changes), in_project=in_project, cwd=cwd)
    if in_project and config.override_source is None:
        config.override_source = ConfigSource("project", path)  # later changes go there too
    return path


async def set_enabled(
    manager: McpManager, name: str, enabled: bool, *, cwd: Path, in_project: bool = False
) -> Outcome:
    from pi_tui.mcp.config import McpConfigError

    status = find(manager, name)
    if status is None:
        return Outcome(f'No MCP server named "{name}".', "error")
    word = "Enabled" if enabled else "Disabled"
    try:
        path = _save(status.config, {"enabled": enabled}, in_project=in_project, cwd=cwd)
    except (McpConfigError, OSError, ValueError) as error:
        return Outcome(f'Could not save MCP server "{name}": {error}', "error")
    after = await manager.set_enabled(name, enabled)
    where = f" (saved to {path})" if path is not None else " for this session"
    state = f"; it is {after.state}" if enabled else ""
    level = "warning" if after.state in ("failed", "needs-sign-in") else "info"
    return Outcome(f'{word} MCP server "{name}"{where}{state}.', level)


def set_exposure(manager: McpManager, name: str, exposure: str, *, cwd: Path) -> Outcome:
    from pi_tui.mcp.config import McpConfigError

    status = find(manager, name)
    if status is None:
        return Outcome(f'No MCP server named "{name}".', "error")
    if exposure not in EXPOSURE_CHOICES:
        return Outcome(f"Exposure must be one of {', '.join(EXPOSURE_CHOICES)}.", "error")
    try:
        path = _save(status.config, {"exposure": exposure}, in_project=False, cwd=cwd)
    except (McpConfigError, OSError, ValueError) as error:
        return Outcome(f'Could not save MCP server "{name}": {error}', "error")
    manager.set_exposure(name, exposure)
    where = f" (saved to {path})" if path is not None else " for this session"
    return Outcome(f'MCP server "{name}" now has exposure {exposure}{where}.')


async def reconnect(manager: McpManager, name: str) -> Outcome:
    status = find(manager, name)
    if status is None:
        return Outcome(f'No MCP server named "{name}".', "error")
    if not status.config.enabled:
        return Outcome(f'MCP server "{name}" is disabled: enable it first (/mcp).', "warning")
    after = await manager.reconnect(name)
    if after.state == "connected":
        count = len(after.tools)
        return Outcome(f'Reconnected to MCP server "{name}" ({count} tool{"s" if count != 1 else ""}).')
    detail = f": {after.error}" if after.error else ""
    return Outcome(f'MCP server "{name}" is {after.state}{detail}', "error")


def uses_oauth(config: ServerConfig) -> bool:
    """An HTTP server without an Authorization header (OAuth may apply to it)."""
    from pi_tui.mcp.oauth import needs_oauth

    return needs_oauth(config)


def signed_in(manager: McpManager, config: ServerConfig) -> bool:
    """Whether mcp-auth.json holds credentials for the server (a broken file: not signed in)."""
    from pi_tui.mcp.oauth_store import OAuthError, OAuthStore, store_key

    if not uses_oauth(config) or not config.url:
        return False
    try:
        return OAuthStore(manager.auth_store).entry(store_key(config.name, config.url)) is not None
    except OAuthError:
        return False


async def sign_in(
    manager: McpManager,
    name: str,
    *,
    open_url: Callable[[str], None],
    pasted_redirect: Callable[[], Awaitable[str]] | None,
) -> Outcome:
    """The browser sign-in, then a reconnect so the session uses the new tokens at once."""
    from pi_tui.mcp.config import McpConfigError, resolved
    from pi_tui.mcp.oauth import sign_in as oauth_sign_in
    from pi_tui.mcp.oauth_store import OAuthError

    status = find(manager, name)
    if status is None:
        return Outcome(f'No MCP server named "{name}".', "error")
    if not uses_oauth(status.config):
        return Outcome(
            f'MCP server "{name}" does not use OAuth: only HTTP servers without an Authorization header do.',
            "error",
        )
    try:
        values = resolved(status.config, manager.session_cwd)
        await oauth_sign_in(
            status.config,
            values.oauth,
            store_path=manager.auth_store,
            open_url=open_url,
            pasted_redirect=pasted_redirect,
        )
    except (OAuthError, McpConfigError) as error:
        text = str(error)
        return Outcome(text, "info" if "cancel" in text.lower() else "error")
    after = await manager.reconnect(name) if status.config.enabled else status
    count = len(after.tools)
    state = f"{count} tool{'s' if count != 1 else ''}" if after.state == "connected" else after.state
    return Outcome(f'Signed in to MCP server "{name}" ({state}).')


async def sign_out(manager: McpManager, name: str) -> Outcome:
    from pi_tui.mcp.oauth import sign_out as oauth_sign_out
    from pi_tui.mcp.oauth_store import OAuthError

    status = find(manager, name)
    if status is None:
        return Outcome(f'No MCP server named "{name}".', "error")
    if not uses_oauth(status.config):
        return Outcome(f'MCP server "{name}" does not use OAuth: there is nothing to sign out of.', "error")
    try:
        removed = oauth_sign_out(status.config, store_path=manager.auth_store)
    except OAuthError as error:
        return Outcome(str(error), "error")
    if not removed:
        return Outcome(f'MCP server "{name}" has no stored credentials.')
    if status.config.enabled:
        await manager.reconnect(name)  # the running connection drops the old token
    return Outcome(f'Signed out of MCP server "{name}": its credentials are deleted.')


def open_in_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser when there is one; False when not tried.

    Never a console browser (lynx, w3m, what ``webbrowser`` falls back to without a display):
    it would take over the terminal the app is drawn in. The URL is on screen either way.
    """
    if sys.platform == "darwin":
        opener = shutil.which("open")
    elif os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        opener = shutil.which("xdg-open")
    else:
        opener = None
    if opener is None:
        return False
    try:
        subprocess.Popen(
            [opener, url],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
