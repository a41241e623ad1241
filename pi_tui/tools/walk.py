"""Walking a source tree the way ripgrep does, for ``find`` and for ``grep`` without ``rg``.

Skips version-control folders and ``node_modules``, and follows ``.gitignore`` files as git
does: each file is read by pathspec's gitignore rules (wildmatch, ``!`` negation, ``/``
anchoring, ``**``, escapes; braces are literal), nested files layered deepest first.
Entries come out sorted by name, depth first, which is also the order of ``rg --sort path``,
so both grep backends list results the same way.
Hidden files are included (like ``rg --hidden``): ``.github``, ``.env.example`` are often
exactly what the model is looking for.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules"})


# --- globs ----------------------------------------------------------------------------------


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob: ``*`` and ``?`` stay within one path part, ``**`` crosses folders,
    ``[abc]``/``[!abc]`` are sets and ``{a,b}`` are alternatives."""
    return re.compile(f"(?s:{_translate(pattern)})\\Z")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                starts_part = i == 0 or pattern[i - 1] == "/"
                if starts_part and j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append(".*" if starts_part and j == n else "[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        elif c == "{":
            end, parts = _brace(pattern, i)
            if end == -1:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(_translate(part) for part in parts) + ")")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _brace(pattern: str, start: int) -> tuple[int, list[str]]:
    """Index of the ``}`` closing the brace at ``start`` and the top-level alternatives."""
    depth = 0
    parts: list[str] = []
    begin = start + 1
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[begin:index])
                return index, parts
        elif char == "," and depth == 1:
            parts.append(pattern[begin:index])
            begin = index + 1
    return -1, []


class PathGlob:
    """A user glob: without ``/`` it matches the name at any depth, with ``/`` the whole
    path relative to the search folder (ripgrep's ``--glob`` rule)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        cleaned = pattern.removeprefix("./")
        self.by_name = "/" not in cleaned
        self.regex = glob_to_regex(cleaned.lstrip("/") if not self.by_name else cleaned)

    def matches(self, rel_path: str) -> bool:
        target = rel_path.rsplit("/", 1)[-1] if self.by_name else rel_path
        return self.regex.match(target) is not None


# --- .gitignore -----------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _Layer:
    """One .gitignore file: its patterns as (regex, ignores) pairs, read by pathspec."""

    base: str
    """Folder of the .gitignore relative to the walk root ("" for the root and above it)."""
    prefix: str
    """Path of the walk root inside the .gitignore's folder, for files above the root ("" else)."""
    patterns: tuple[tuple[re.Pattern[str], bool], ...]


def _layer(text: str, base: str, prefix: str = "") -> _Layer | None:
    from pathspec import GitIgnoreSpec, RegexPattern  # imported when a .gitignore is met

    patterns = tuple(
        (pattern.regex, bool(pattern.include))
        for pattern in GitIgnoreSpec.from_lines(text.splitlines()).patterns
        if isinstance(pattern, RegexPattern) and pattern.include is not None and pattern.regex is not None
    )
    return _Layer(base, prefix, patterns) if patterns else None


def _verdict(layer: _Layer, local: str) -> bool | None:
    """The last pattern matching ``local`` itself decides (None: no pattern does).

    pathspec's regexes also match everything below a matching folder (``build`` matches
    ``build/x.py``); git asks about each path itself and simply never enters an ignored
    folder, so a match that ends before ``local`` does is not counted: otherwise ``!build``
    in a deeper .gitignore would re-include every ``*.log`` under it.
    """
    verdict: bool | None = None
    for regex, ignores in layer.patterns:
        match = regex.match(local)
        if match is not None and match.end() == len(local):
            verdict = ignores
    return verdict


def _ignored(layers: list[_Layer], rel_path: str, is_dir: bool) -> bool:
    """Whether ``rel_path`` is ignored: the deepest .gitignore with a matching pattern decides,
    and within it the last matching pattern (git's precedence)."""
    for layer in reversed(layers):
        if layer.base:
            if not rel_path.startswith(layer.base + "/"):
                continue
            local = rel_path[len(layer.base) + 1 :]
        else:
            local = layer.prefix + rel_path
        verdict = _verdict(layer, local + "/" if is_dir else local)
        if verdict is not None:
            return verdict
    return False


def _outer_layers(root: Path) -> list[_Layer]:
    """.gitignore files above ``root``, up to its repository's top, each matched against the
    path as seen from its own folder (so ``/build`` in the repository's top still means the
    top's ``build``). Outside a repository the parents' ignore files do not apply at all (git
    would not use them)."""
    if (root / ".git").exists():
        return []
    layers: list[_Layer] = []
    for parent in root.parents:
        try:
            text = (parent / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        layer = _layer(text, "", root.relative_to(parent).as_posix() + "/") if text else None
        if layer is not None:
            layers.insert(0, layer)
        if (parent / ".git").exists():
            return layers
    return []


# --- the walk -------------------------------------------------------------------------------


def walk(
    root: Path, stop: threading.Event | None = None, wanted: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, bool]]:
    """``(relative posix path, is_dir)`` for every entry under ``root`` that is not skipped.

    ``stop`` lets a cancelled caller end a walk that runs in a worker thread. A file for which
    ``wanted`` says yes is yielded even if .gitignore'd (folders still are not entered): that is
    how ripgrep treats ``--glob``, and grep's two backends must agree.
    """
    yield from _walk_dir(root, "", _outer_layers(root), stop, wanted)


def _walk_dir(
    folder: Path,
    rel: str,
    layers: list[_Layer],
    stop: threading.Event | None,
    wanted: Callable[[str], bool] | None,
) -> Iterator[tuple[str, bool]]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    layer = _layer(text, rel) if text else None
    if layer is not None:
        layers = [*layers, layer]
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if stop is not None and stop.is_set():
            return
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir and entry.name in SKIP_DIRS:
            continue
        path = f"{rel}/{entry.name}" if rel else entry.name
        forced = not is_dir and wanted is not None and wanted(path)
        if layers and not forced and _ignored(layers, path, is_dir):
            continue
        yield path, is_dir
        if is_dir:
            yield from _walk_dir(Path(entry.path), path, layers, stop, wanted)
