"""Path globs for TTSR rules: ``scope`` tool globs, ``globs`` gates, glob-looking conditions.

Rules come from Cursor, Copilot, Cline, omp and pi files, whose authors write globs the way
editors understand them, so the dialect is the common one rather than :mod:`fnmatch`'s:

- ``*`` matches within one path segment (never ``/``), ``?`` one character other than ``/``;
- ``**`` crosses segments; ``**/`` also matches no folder at all, so ``**/*.py`` matches ``a.py``;
- ``[abc]``, ``[a-z]``, ``[!abc]`` / ``[^abc]`` are character classes (never matching ``/``);
- ``{a,b}`` are alternatives, which may nest (``{src/{a,b},lib}/*.py``);
- a backslash in a glob escapes the next character (``\\*`` is a literal star);
- a glob matches when it matches the whole path or only its basename, so ``*.py`` matches
  ``src/pkg/mod.py`` the way Cursor's ``globs`` do;
- backslashes in the *path* count as ``/`` (Windows paths in tool arguments), a leading ``./``
  is ignored on both sides, and matching is case-sensitive.

Patterns are compiled once (cached): the manager checks the same few globs on every delta.
"""

from __future__ import annotations

from functools import lru_cache

import regex

__all__ = ["glob_matches", "glob_to_regex", "normalize_path"]


def normalize_path(path: str) -> str:
    """The form globs are matched against: ``/`` separators and no leading ``./``."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


@lru_cache(maxsize=4096)
def glob_to_regex(glob: str) -> regex.Pattern[str]:
    """Compile ``glob`` to a pattern that must match a whole (normalized) path.

    Use :func:`glob_matches` for the basename rule; this is the building block (and what the
    manager can pre-compile to fail early on nothing: every string is a valid glob, an
    unbalanced ``[`` or ``{`` simply stands for itself).
    """
    while glob.startswith("./"):
        glob = glob[2:]
    return regex.compile(_translate(glob, segment_start=True), regex.DOTALL)


def glob_matches(glob: str, path: str) -> bool:
    """True when ``glob`` matches ``path`` as a whole or its last segment."""
    pattern = glob_to_regex(glob)
    normalized = normalize_path(path)
    if pattern.fullmatch(normalized):
        return True
    basename = normalized.rstrip("/").rsplit("/", 1)[-1]
    return basename != normalized and pattern.fullmatch(basename) is not None


def _translate(glob: str, *, segment_start: bool) -> str:
    """Regex source for ``glob``; ``segment_start``: the text before it ends a segment."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "\\" and i + 1 < n:
            out.append(regex.escape(glob[i + 1]))
            i += 2
        elif char == "*":
            if glob.startswith("**", i):
                at_start = (i == 0 and segment_start) or (i > 0 and glob[i - 1] == "/")
                j = i
                while j < n and glob[j] == "*":
                    j += 1
                if at_start and j < n and glob[j] == "/":
                    out.append("(?:.*/)?")  # zero or more whole folders
                    i = j + 1
                else:
                    out.append(".*")
                    i = j
            else:
                out.append("[^/]*")
                i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "/" and glob[i + 1 :] == "**":
            out.append("(?:/.*)?")  # "src/**" also matches "src" itself
            i = n
        elif char == "[":
            end = _class_end(glob, i)
            if end < 0:
                out.append(regex.escape(char))
                i += 1
            else:
                out.append(_translate_class(glob[i + 1 : end]))
                i = end + 1
        elif char == "{":
            end = _brace_end(glob, i)
            if end < 0:
                out.append(regex.escape(char))
                i += 1
            else:
                starts_segment = (i == 0 and segment_start) or (i > 0 and glob[i - 1] == "/")
                alternatives = [
                    _translate(part, segment_start=starts_segment)
                    for part in _split_alternatives(glob[i + 1 : end])
                ]
                out.append("(?:" + "|".join(alternatives) + ")")
                i = end + 1
        else:
            out.append(regex.escape(char))
            i += 1
    return "".join(out)


def _class_end(glob: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``, or -1."""
    j = start + 1
    if j < len(glob) and glob[j] in "!^":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1  # a leading "]" is a member, as in shells
    while j < len(glob):
        if glob[j] == "\\":
            j += 2
            continue
        if glob[j] == "]":
            return j
        j += 1
    return -1


def _translate_class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    members: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            members.append(regex.escape(body[i + 1]))
            i += 2
        elif char == "-" and members and i + 1 < len(body):
            members.append("-")
            i += 1
        else:
            members.append(regex.escape(char))
            i += 1
    # A class never matches the separator, like "*" and "?".
    inner = "".join(members)
    return f"[^/{inner}]" if negate else f"(?!/)[{inner}]"


def _brace_end(glob: str, start: int) -> int:
    """Index of the ``}`` closing the group opened at ``start`` (nesting aware), or -1."""
    depth = 0
    j = start
    while j < len(glob):
        char = glob[j]
        if char == "\\":
            j += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


def _split_alternatives(body: str) -> list[str]:
    """Split a brace group's body on its own commas (not those of nested groups)."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            current.append(body[i : i + 2])
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return parts
