"""The live web page served at ``/``: one HTML document with its stylesheet and script inline.

No build step and no CDN: the page is the export page's modules (rendering entries, laying out
the tree, markdown, highlighting, all of them DOM-only) plus ``web/app.js``, joined here. The
Content-Security-Policy allows scripts and styles only with this response's nonce, requests
only to this server, images only from ``data:`` URIs, and no page may frame it
(``frame-ancestors 'none'``: another port of this host is another origin but the same site).
"""

from __future__ import annotations

import re
import secrets
from functools import cache
from importlib import resources

from pi_tui.html_export.page import SCRIPTS, bundle, json_block
from pi_tui.html_export.page import _asset as export_asset

PAGE_SCRIPTS = tuple(name for name in SCRIPTS if name != "app.js")
"""The export page's shared modules; its own app.js (a static page) is replaced by ours."""


@cache
def _web_asset(name: str) -> str:
    return resources.files("pi_tui.server").joinpath("web", name).read_text(encoding="utf-8")


@cache
def _script() -> str:
    shared = [(name, export_asset(name)) for name in PAGE_SCRIPTS]
    return bundle([*shared, ("app.js", _web_asset("app.js"))], "PiServe")


def _palettes() -> bytes:
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.settings import SettingsError, load_settings
    from pi_tui.html_export.page_theme import page_palettes

    try:
        theme = load_settings().theme
    except (SettingsError, OSError):
        theme = None
    return json_block(page_palettes(theme, agent_dir()))


def render_page(token: str) -> tuple[str, str]:
    """The page and its Content-Security-Policy (also sent as a header). The page carries the
    token its script sends with every request when the request showed it (``?token=``), else
    ``""`` and the script takes the one its tab kept."""
    nonce = secrets.token_urlsafe(18)
    policy = (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "connect-src 'self'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    parts = {
        "STYLE": export_asset("page.css") + "\n" + _web_asset("app.css"),
        "THEMES": _palettes().decode("utf-8"),
        "SERVE": json_block({"token": token}).decode("utf-8"),
        "SCRIPT": _script(),
        "NONCE": nonce,
    }
    # One pass, so nothing a part holds (a theme's name) is taken for another placeholder.
    page = re.sub(r"\{\{([A-Z]+)\}\}", lambda match: parts[match.group(1)], _web_asset("index.html"))
    return page, policy
