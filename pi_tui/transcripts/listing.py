"""This folder's sessions of other agents, as rows of the session picker (``/resume``, ``-r``).

Each transcript becomes a :class:`SessionInfo` whose ``agent`` says whose it is; the title is
the first prompt, read from the head of the file (never the whole file: listing two thousand
transcripts must cost about what listing our own does). A transcript written to in the last
minute is ``live``: opening it follows it.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.config.paths import cache_dir
from pi_tui.config.private_files import replace_private_file
from pi_tui.session.info import SessionInfo
from pi_tui.transcripts.command import folder_transcripts

LIVE_SECONDS = 60.0
HEAD_BYTES = 32_768
AGENTS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


def is_live(path: Path, now: float | None = None) -> bool:
    try:
        return (now if now is not None else time.time()) - path.stat().st_mtime < LIVE_SECONDS
    except OSError:
        return False


def first_prompt(path: Path) -> str:
    """The first thing the user asked, from the first lines (any of the three formats)."""
    with contextlib.suppress(OSError), path.open("rb") as stream:
        head = stream.read(HEAD_BYTES)
        for line in head.splitlines():
            with contextlib.suppress(ValueError):
                text = _prompt_of(jsonio.loads(line))
                if text:
                    return " ".join(text.split())[:200]
        with contextlib.suppress(ValueError):  # a legacy Gemini .json file is one object
            for message in jsonio.loads(head).get("messages", []):
                text = _prompt_of(message)
                if text:
                    return " ".join(text.split())[:200]
    return ""


def _prompt_of(record: object) -> str:
    if not isinstance(record, dict) or record.get("isSidechain") or record.get("isMeta"):
        return ""
    message = record.get("message") if isinstance(record.get("message"), dict) else record.get("payload")
    if record.get("type") == "user" and isinstance(record.get("content"), (str, list)):
        message = {"content": record["content"]}  # Gemini
    if record.get("type") == "user_message" or (
        isinstance(message, dict) and message.get("type") == "user_message"
    ):
        return str((message or {}).get("message") or record.get("message") or "")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return ""
    if record.get("type") not in ("user", "response_item", "message"):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") != "tool_result"
        )
    else:
        return ""
    return (
        ""
        if text.lstrip().startswith(
            ("<environment_context>", "<user_instructions>", "<command-", "# AGENTS.md")
        )
        else text
    )


INDEX_FILE = "transcripts-index.json"


def _load_index() -> dict[str, list[Any]]:
    with contextlib.suppress(OSError, ValueError):
        data = jsonio.loads((cache_dir() / INDEX_FILE).read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return data
    return {}


def _save_index(index: dict[str, list[Any]]) -> None:
    with contextlib.suppress(OSError):
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        replace_private_file(folder / INDEX_FILE, json.dumps(index))


def transcript_infos(cwd: str) -> list[SessionInfo]:
    """Every other agent's transcript of ``cwd``, newest first. First prompts are kept in a
    small index in the cache folder (by path, size and time), as the resume index keeps ours,
    so a second listing only looks at each file's size and time."""
    infos: list[SessionInfo] = []
    now = time.time()
    index = _load_index()
    changed = False
    for agent, name in AGENTS.items():
        for path in folder_transcripts(agent, cwd):
            try:
                info = path.stat()
            except OSError:
                continue
            modified = info.st_mtime
            live = now - modified < LIVE_SECONDS
            known = index.get(str(path))
            if known is not None and known[:2] == [info.st_size, modified]:
                prompt = str(known[2])
            else:
                prompt = first_prompt(path)
                index[str(path)] = [info.st_size, modified, prompt]
                changed = True
            moment = datetime.fromtimestamp(modified, UTC)
            infos.append(
                SessionInfo(
                    path=path,
                    id=f"{agent}:{path.stem}",
                    cwd=cwd,
                    name=f"[{name}{' · live' if live else ''}] {prompt or path.stem}",
                    parent_session=None,
                    created=moment,
                    modified=moment,
                    message_count=0,
                    first_message=prompt,
                    all_messages_text=prompt.lower(),
                    agent=agent,
                )
            )
    if changed:
        _save_index(index)
    return sorted(infos, key=lambda info: info.modified, reverse=True)
