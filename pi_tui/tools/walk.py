"""Walking a source tree the way ripgrep does, for ``find`` and for ``grep`` without ``rg``.

Skips version-control folders and ``node_modules``, and follows ``.gitignore`` files closely
enough for everyday trees (patterns, ``!`` negation, trailing ``/`` for folders, leading ``/``
and inner ``/`` for anchoring, ``**``). Entries come out sorted by name, depth first, which is
also the order of ``rg --sort path``, so both grep backends list results the same way.
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


@dataclass(slots=True)
class _Rule:
    base: str
    """Folder of the .gitignore, relative to the walk root ("" for the root and above it)."""
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool


def _parse_gitignore(text: str, base: str) -> list[_Rule]:
    rules = []
    for raw_line in text.splitlines():
        line = raw_line.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\"):  # a backslash escapes a leading "!" or "#"
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(_Rule(base, glob_to_regex(line), negate, dir_only, anchored))
    return rules


def _ignored(rules: list[_Rule], rel_path: str, is_dir: bool) -> bool:
    """Whether the last rule that matches ``rel_path`` ignores it (git's precedence)."""
    verdict = False
    name = rel_path.rsplit("/", 1)[-1]
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.base:
            if not rel_path.startswith(rule.base + "/"):
                continue
            local = rel_path[len(rule.base) + 1 :]
        else:
            local = rel_path
        if rule.regex.match(local if rule.anchored else name):
            verdict = not rule.negate
    return verdict


def _outer_rules(root: Path) -> list[_Rule]:
    """Name rules (no ``/``) from .gitignore files above ``root``, up to its repository's top.

    Anchored rules of a parent folder describe paths outside or across ``root`` and are left
    out: close enough for a search tool, and never hides a file that was not meant to be.
    Outside a repository the parents' ignore files do not apply at all (git would not use them).
    """
    if (root / ".git").exists():
        return []
    rules: list[_Rule] = []
    for parent in root.parents:
        try:
            text = (parent / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        rules[:0] = [rule for rule in _parse_gitignore(text, "") if not rule.anchored]
        if (parent / ".git").exists():
            return rules
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
    rules = _outer_rules(root)
    yield from _walk_dir(root, "", rules, stop, wanted)


def _walk_dir(
    folder: Path,
    rel: str,
    rules: list[_Rule],
    stop: threading.Event | None,
    wanted: Callable[[str], bool] | None,
) -> Iterator[tuple[str, bool]]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if text:
        rules = rules + _parse_gitignore(text, rel)
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
        if rules and not forced and _ignored(rules, path, is_dir):
            continue
        yield path, is_dir
        if is_dir:
            yield from _walk_dir(Path(entry.path), path, rules, stop, wanted)
