"""Editor completion: ``/commands`` at the start of the prompt and ``@file`` paths anywhere.

Pure functions of the text before the cursor, so the editor widget only shows the candidates
and splices the chosen one in. ``@`` paths complete folder by folder like a shell; when nothing
in the folder starts with what was typed, the project's (.gitignore-aware) files whose path
contains it are offered instead, so ``@appts`` finds ``src/app.ts``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.commands import CommandRegistry

MAX_CANDIDATES = 30
FUZZY_SCAN_LIMIT = 20_000
"""Files looked at for a substring match; a huge tree is not walked to the end per keystroke."""


@dataclass(frozen=True, slots=True)
class Candidate:
    value: str
    """Replaces the typed word."""
    display: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Completion:
    start: int
    """Column in the line where the word being completed starts (the cursor is its end)."""
    candidates: tuple[Candidate, ...]


def complete_command(text_before_cursor: str, registry: CommandRegistry) -> Completion | None:
    """``/mo`` -> ``/model``; only while the first word of the prompt is being typed."""
    if not text_before_cursor.startswith("/") or any(ch.isspace() for ch in text_before_cursor):
        return None
    matches = registry.complete(text_before_cursor)
    if not matches:
        return None
    candidates = tuple(
        Candidate(f"/{command.name} ", f"/{command.name} {command.usage}".rstrip(), command.description)
        for command in matches
    )
    return Completion(0, candidates)


ArgumentCompleter = Callable[[str, str], Sequence[Any] | None]
"""``(command name, what was typed after it) -> suggestions`` (an extension's completer)."""


def complete_arguments(text_before_cursor: str, completer: ArgumentCompleter) -> Completion | None:
    """``/deploy st`` -> ``staging`` when the command's owner suggests it. A suggestion is a
    string, or ``{"value", "label"?, "description"?}`` as pi's extensions give them; it replaces
    everything typed after the command name."""
    if not text_before_cursor.startswith("/") or " " not in text_before_cursor:
        return None
    name, _, typed = text_before_cursor[1:].partition(" ")
    suggestions = completer(name, typed)
    candidates: list[Candidate] = []
    for item in suggestions or ():
        if isinstance(item, dict) and isinstance(item.get("value"), str):
            value = item["value"]
            candidates.append(
                Candidate(value, str(item.get("label") or value), str(item.get("description") or ""))
            )
        elif isinstance(item, str):
            candidates.append(Candidate(item, item, ""))
    return Completion(len(name) + 2, tuple(candidates)) if candidates else None


def at_word(line_before_cursor: str) -> tuple[int, str] | None:
    """The ``@word`` the cursor is at the end of: its start column and the path typed so far."""
    start = len(line_before_cursor)
    while start > 0 and not line_before_cursor[start - 1].isspace():
        start -= 1
    word = line_before_cursor[start:]
    if not word.startswith("@"):
        return None
    return start, word[1:]


def complete_path(line_before_cursor: str, cwd: Path) -> Completion | None:
    found = at_word(line_before_cursor)
    if found is None:
        return None
    start, typed = found
    candidates = _folder_matches(typed, cwd) or _fuzzy_matches(typed, cwd)
    return Completion(start, tuple(candidates)) if candidates else None


def _folder_matches(typed: str, cwd: Path) -> list[Candidate]:
    folder_part, _, name_part = typed.rpartition("/")
    folder = (cwd / os.path.expanduser(folder_part)) if folder_part or typed.startswith("/") else cwd
    if typed.startswith("/"):
        folder = Path(folder_part or "/")
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: (not entry.is_dir(), entry.name.lower()))
    except OSError:
        return []
    prefix = f"{folder_part}/" if folder_part or typed.startswith("/") else ""
    out = []
    for entry in entries:
        if not entry.name.startswith(name_part) or (
            entry.name.startswith(".") and not name_part.startswith(".")
        ):
            continue
        suffix = "/" if entry.is_dir() else ""
        out.append(Candidate(f"@{prefix}{entry.name}{suffix}", f"{prefix}{entry.name}{suffix}"))
        if len(out) >= MAX_CANDIDATES:
            break
    return out


def _fuzzy_matches(typed: str, cwd: Path) -> list[Candidate]:
    if not typed or "/" in typed:
        return []
    from pi_tui.tools.walk import walk

    needle = typed.lower()
    out = []
    for path, is_dir in itertools.islice(walk(cwd), FUZZY_SCAN_LIMIT):
        if not is_dir and _subsequence(needle, path.lower()):
            out.append(Candidate(f"@{path}", path))
    out.sort(key=lambda candidate: (needle not in candidate.display.lower(), len(candidate.display)))
    return out[:MAX_CANDIDATES]


def _subsequence(needle: str, haystack: str) -> bool:
    """Every character of ``needle`` appears in ``haystack`` in order (``appts`` in ``app.ts``)."""
    position = 0
    for char in needle:
        position = haystack.find(char, position)
        if position < 0:
            return False
        position += 1
    return True
