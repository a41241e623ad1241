"""``secrets.yml``: the user's own secrets, from ``<agent dir>/secrets.yml`` and
``<cwd>/.agent/secrets.yml`` (a project entry replaces a global one with the same content).

The file is a YAML list of entries, as oh-my-pi reads it::

    - type: plain            # or regex
      content: "hunter2-but-longer"
      mode: obfuscate        # or replace (one way: never restored)
      replacement: "[db password]"   # replace mode only; without it a stand-in of the same length
      flags: i               # regex flags: i, m, s, x

Only that shape is read (a list of flat mappings of scalars), by a small parser here rather
than a YAML library; anything else is a one-line problem naming the file and line, and the rest
of the file still counts.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import regex

Mode = Literal["obfuscate", "replace"]
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}
PROBE_BUDGET = 0.1
"""Seconds a secrets.yml regex may take over all its probes at load (a sound one takes
microseconds: each probe is a few thousand characters)."""
_PROBE_LENGTH = 4000
_KEYS = frozenset({"type", "content", "mode", "replacement", "flags"})


@dataclass(frozen=True, slots=True)
class SecretEntry:
    kind: Literal["plain", "regex"]
    content: str
    mode: Mode = "obfuscate"
    replacement: str | None = None
    flags: int = 0
    source: str = ""
    """Where it came from, for ``/secrets`` (a file and line, ``env NAME``, ``models.json``...)."""


@dataclass(slots=True)
class EntriesLoad:
    entries: list[SecretEntry]
    problems: list[str]


def _scalar(text: str) -> str:
    """A YAML scalar: double-quoted (with escapes), single-quoted, or plain up to a comment."""
    text = text.strip()
    if text.startswith('"'):
        end = 1
        out = []
        while end < len(text) and text[end] != '"':
            if text[end] == "\\" and end + 1 < len(text):
                end += 1
                out.append(
                    {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}.get(text[end], "\\" + text[end])
                )
            else:
                out.append(text[end])
            end += 1
        if end >= len(text):
            raise ValueError("a double-quoted value is not closed")
        return "".join(out)
    if text.startswith("'"):
        match = re.match(r"'((?:[^']|'')*)'", text)
        if match is None:
            raise ValueError("a single-quoted value is not closed")
        return match.group(1).replace("''", "'")
    return re.split(r"\s+#", text, maxsplit=1)[0].strip()


def parse_secrets_yml(text: str, where: str) -> EntriesLoad:
    """The entries of one file and one line per problem (``where:line: what``)."""
    raw: list[tuple[int, dict[str, str]]] = []
    problems: list[str] = []
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            current = {}
            raw.append((number, current))
            stripped = stripped[1:].strip()
            if not stripped:
                continue
        elif current is None or not line[:1].isspace():
            problems.append(f"{where}:{number}: expected a list entry starting with '- '")
            current = None
            continue
        key, colon, value = stripped.partition(":")
        if not colon or not key.strip():
            problems.append(f"{where}:{number}: expected 'key: value'")
            continue
        try:
            current[key.strip()] = _scalar(value)
        except ValueError as error:
            problems.append(f"{where}:{number}: {error}")
    entries = []
    for number, fields in raw:
        entry, problem = _entry(fields, f"{where}:{number}")
        if problem:
            problems.append(problem)
        elif entry is not None:
            entries.append(entry)
    return EntriesLoad(entries, problems)


def _entry(fields: dict[str, str], where: str) -> tuple[SecretEntry | None, str | None]:
    unknown = sorted(set(fields) - _KEYS)
    if unknown:
        return None, f"{where}: unknown key {unknown[0]!r} (type, content, mode, replacement, flags)"
    kind = fields.get("type", "plain")
    if kind not in ("plain", "regex"):
        return None, f"{where}: type must be plain or regex, not {kind!r}"
    content = fields.get("content", "")
    if not content:
        return None, f"{where}: content is missing or empty"
    mode = fields.get("mode", "obfuscate")
    if mode not in ("obfuscate", "replace"):
        return None, f"{where}: mode must be obfuscate or replace, not {mode!r}"
    flags = 0
    for letter in fields.get("flags", ""):
        if letter not in _FLAGS:
            return None, f"{where}: unknown flag {letter!r} (i, m, s, x)"
        flags |= _FLAGS[letter]
    if kind == "regex":
        try:
            compiled = compile_user_regex(content, flags)
        except regex.error as error:
            return None, f"{where}: bad regex {content!r}: {error}"
        if compiled.match(""):
            return None, f"{where}: the regex {content!r} matches empty text"
        if too_slow(compiled):
            return None, (
                f"{where}: the regex {content!r} backtracks without end (over {PROBE_BUDGET:g} s "
                f"on a {_PROBE_LENGTH:,}-character probe); left out"
            )
    elif flags:
        return None, f"{where}: flags are for regex entries"
    return SecretEntry(kind, content, mode, fields.get("replacement"), flags, where), None  # type: ignore[arg-type]


def compile_user_regex(source: str, flags: int = 0) -> Any:
    """A secrets.yml regex on the ``regex`` engine (``re``'s syntax), whose searches take a
    ``timeout``: a user's pattern can be catastrophic, and ``re`` cannot be stopped."""
    return regex.compile(source, flags)


def _probes(source: str) -> list[str]:
    """Texts that make a backtracking pattern show itself: a long run of each character the
    pattern names (and of a few common ones), and of the pattern's letters in order, each
    followed by a character that fits nowhere."""
    literal = [char for char in dict.fromkeys(re.sub(r"\\.", "", source)) if char.isprintable()]
    chars = dict.fromkeys([*literal, "a", "A", "0", " ", "_", "-", ".", "\t", "\n"])
    runs = [char * _PROBE_LENGTH for char in chars]
    word = "".join(char for char in re.sub(r"\\.", "", source) if char.isalnum())
    if len(word) > 1:
        runs.append((word * (_PROBE_LENGTH // len(word) + 1))[:_PROBE_LENGTH])
    return [run + end for run in runs for end in ("\0", "!")]


_verdicts: dict[tuple[str, int], bool] = {}
"""Patterns already probed in this process (secrets are gathered again when a file changes)."""


def too_slow(compiled: Any) -> bool:
    """Whether ``compiled`` runs over :data:`PROBE_BUDGET` on the probes of :func:`_probes`."""
    key = (compiled.pattern, compiled.flags)
    if key not in _verdicts:
        _verdicts[key] = _probe(compiled)
    return _verdicts[key]


def _probe(compiled: Any) -> bool:
    deadline = time.perf_counter() + PROBE_BUDGET
    for probe in _probes(compiled.pattern):
        left = deadline - time.perf_counter()
        if left <= 0:
            return True
        try:
            for _ in compiled.finditer(probe, timeout=left):
                pass
        except TimeoutError:
            return True
    return False


def load_secret_files(paths: list[Path]) -> EntriesLoad:
    """Entries of each existing file in order; a later file's entry replaces an earlier one with
    the same type and content (project over global)."""
    merged: dict[tuple[str, str], SecretEntry] = {}
    problems: list[str] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{path}: cannot read: {error}")
            continue
        load = parse_secrets_yml(text, str(path))
        problems.extend(load.problems)
        for entry in load.entries:
            merged[(entry.kind, entry.content)] = entry
    return EntriesLoad(list(merged.values()), problems)
