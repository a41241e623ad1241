"""Assembling the single HTML file: template, stylesheet, scripts and the session as data.

Session content never becomes markup. It travels in ``<script type="application/json">``
blocks, which the browser does not run, with every ``<`` written as the JSON escape ``\\u003c``
(valid inside JSON strings, the only place a ``<`` can occur in JSON), so no sequence in a
message can close the block or open a comment. The page's code then puts text into the
document only as text nodes. On top of that the page forbids everything it does not need
(Content-Security-Policy): scripts only with this export's nonce, no network at all, images
only from ``data:`` URIs.
"""

from __future__ import annotations

import html
import secrets
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from typing import Any

import orjson

from pi_tui.html_export.context import packed_chunks

SCRIPTS = (
    "dom.js",
    "tree_layout.js",
    "tree_row.js",
    "markdown.js",
    "highlight.js",
    "transcript.js",
    "render.js",
    "vlist.js",
    "context.js",
    "app.js",
)
"""The page's modules, in dependency order; concatenated into one inline script."""


@cache
def _asset(name: str) -> str:
    return resources.files("pi_tui.html_export").joinpath("assets", name).read_text(encoding="utf-8")


def script_source() -> str:
    """Every module of the export page in one script."""
    return bundle(((name, _asset(name)) for name in SCRIPTS), "PiExport")


def bundle(modules: Iterable[tuple[str, str]], namespace: str) -> str:
    """``(name, source)`` modules as one script, each in its own function scope, sharing one
    object (``P`` inside a module) named ``namespace`` (the live page of pi-tui serve bundles
    the export's modules with its own the same way)."""
    parts = [f'"use strict";\nconst {namespace} = {{}};\n']
    for name, source in modules:
        parts.append(f"// ---- {name}\n(function (P) {{\n{source}\n}})({namespace});\n")
    return "".join(parts)


def json_block(value: Any) -> bytes:
    """JSON that is safe inside a ``<script type="application/json">`` element."""
    return escape_for_script(orjson.dumps(value))


def escape_for_script(data: bytes) -> bytes:
    """``<`` as ``\\u003c``: nothing in the data can end the element or start a comment."""
    return data.replace(b"<", b"\\u003c")


def page_chunks(
    *,
    title: str,
    tree: dict[str, Any],
    entries: bytes,
    summary: dict[str, Any],
    palettes: list[dict[str, Any]],
    context: dict[str, Any] | None = None,
    jsonl: Iterable[bytes] = (),
) -> Iterator[bytes]:
    """The page, in pieces (the entries alone may be a hundred megabytes: never copied whole).
    ``context`` is the header's system prompt and tools; ``jsonl`` the session file's bytes
    for the page's download, sent gzipped and base64-encoded (:mod:`pi_tui.html_export.context`)."""
    nonce = secrets.token_urlsafe(18)
    policy = (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "img-src data:; font-src data:; base-uri 'none'; form-action 'none'"
    )
    head, _, tail = _asset("page.html").partition("{{DATA}}")
    head = (
        head.replace("{{TITLE}}", html.escape(title))
        .replace("{{POLICY}}", policy)
        .replace("{{NONCE}}", nonce)
        .replace("{{STYLE}}", _asset("page.css"))
    )
    yield head.encode("utf-8")
    yield b'<script type="application/json" id="pi-summary">'
    yield json_block(summary)
    yield b'</script>\n<script type="application/json" id="pi-themes">'
    yield json_block(palettes)
    yield b'</script>\n<script type="application/json" id="pi-tree">'
    yield json_block(tree)
    yield b'</script>\n<script type="application/x-ndjson" id="pi-entries">'
    yield escape_for_script(entries)
    yield b"</script>\n"
    if context is not None:
        yield b'<script type="application/json" id="pi-context">'
        yield json_block(context)
        yield b"</script>\n"
    script, _, end = (
        tail.replace("{{NONCE}}", nonce).replace("{{SCRIPT}}", script_source()).partition("</body>")
    )
    yield script.encode("utf-8")
    # After the page's script: the parser reaches it once the page has drawn (read on a click).
    yield b'<script type="text/plain" id="pi-jsonl">'
    yield from packed_chunks(jsonl)
    yield b"</script>\n"
    yield f"</body>{end}".encode()
