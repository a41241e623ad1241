"""A session as one self-contained HTML page: the whole tree, every branch, readable offline.

``--export SESSION [OUT.html]``, ``/export [FILE.html]`` and ``/share`` write it. The page needs
nothing but itself (its styles, script and data are inline; it makes no network request) and
stays fast on sessions of 50,000 entries and more: the tree and the conversation draw only the
rows on screen. docs/export.md describes the markup scripts may rely on.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.html_export.context import PromptContext, agent_context, context_block, jsonl_pieces
from pi_tui.html_export.page import page_chunks
from pi_tui.html_export.page_theme import page_palettes
from pi_tui.html_export.payload import session_payload

if TYPE_CHECKING:
    from pi_tui.secrets.obfuscator import Obfuscator
    from pi_tui.session.manager import SessionManager

__all__ = ["PromptContext", "agent_context", "default_html_name", "export_html", "is_html_name"]


def is_html_name(path: Path | str) -> bool:
    return Path(path).suffix.lower() in (".html", ".htm")


def default_html_name(manager: SessionManager) -> str:
    """``pi-tui-session-<session file name>.html`` in the working folder (pi's pattern)."""
    path = manager.session_file
    stem = path.stem if path is not None else manager.session_id
    return f"pi-tui-session-{stem}.html"


def export_html(
    manager: SessionManager,
    output: Path,
    *,
    theme: str | None = None,
    agent_dir: str | Path | None = None,
    hide: Obfuscator | None = None,
    context: PromptContext | None = None,
) -> Path:
    """Write the page for ``manager``'s session to ``output`` (atomically; folders made as needed)
    and return its full path. ``theme`` names the pi theme whose colours the page starts with;
    ``hide``'s secrets appear as placeholders; ``context`` is the live agent's system prompt and
    tools (``/export``: see :mod:`pi_tui.html_export.context`)."""
    path = output.expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = session_payload(manager, hide)
    name = payload.summary.get("name") or payload.summary.get("file") or "session"
    chunks = page_chunks(
        title=f"{name} - pi-tui",
        tree=payload.tree,
        entries=payload.entries,
        summary=payload.summary,
        palettes=page_palettes(theme, agent_dir),
        context=context_block(context, manager.iter_raw_entries(), hide),
        jsonl=jsonl_pieces(manager, hide),
    )
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path
