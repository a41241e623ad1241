"""``/bug [--with-transcript] [description]``: a private bug report, written, never sent.

pi 1.x's ``/bug`` gathers a report for its developers (version, platform, terminal, model and
provider without keys, extensions, settings, failed turns; the transcript only when asked) and
uploads it to pi's own service or writes it as a zip. pi-tui has no service to send it to, so it
always writes the zip, in the working folder, and says where: the user reads it and attaches it
to an issue themselves. Nothing leaves the machine.

Secrets are kept out twice: values under credential-looking keys (``apiKey``, ``token``,
``password``, ...) and passwords in URLs are replaced, and then every file's text goes through
the secrets pi-tui hides from the model and :func:`pi_tui.redact.redact_secrets` (secret
environment variables, saved keys, key-shaped strings). The report is recorded in the session as
pi records it (a ``pi.bug-report`` custom entry), so a later look at the session shows when and
where a report was made.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import sys
import uuid
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pi_tui.tui.slash_base import CommandSet

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

BUG_REPORT_ENTRY = "pi.bug-report"
"""The custom entry type pi 1.x records a report under (the same, so either reads the other's)."""
REDACTED = "<redacted>"
SCHEMA_VERSION = 1
_TRANSCRIPT_FLAGS = ("--with-transcript", "--transcript")
_SENSITIVE = re.compile(
    r"(?:^|[-_])(api[-_]?key|secret|token|password|passwd|credential|authorization|cookie)(?:$|[-_])",
    re.IGNORECASE,
)


def is_sensitive_key(key: str) -> bool:
    """A JSON key whose value may be a credential (``apiKey``, ``x-auth-token``, ``password``)."""
    return bool(_SENSITIVE.search(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)))


def redact_url(value: str) -> str:
    """``value`` without a user name, password or credential-looking query values, when it is
    a URL; any other text unchanged."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if not parts.scheme or not parts.netloc:
        return value
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parse_qsl(parts.query, keep_blank_values=True)
    cleaned = [(key, REDACTED if is_sensitive_key(key) else item) for key, item in query]
    if netloc == parts.netloc and cleaned == query:
        return value
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(cleaned), parts.fragment))


def redact_json(value: Any) -> Any:
    """A copy of ``value`` with credential-looking keys' values and URL passwords hidden."""
    if isinstance(value, dict):
        return {
            key: REDACTED if is_sensitive_key(str(key)) and child is not None else redact_json(child)
            for key, child in value.items()
        }
    if isinstance(value, list):
        return [redact_json(child) for child in value]
    if isinstance(value, str):
        return redact_url(value)
    return value


def bug_arguments(args: str) -> tuple[bool, str]:
    """``(with_transcript, description)`` from ``/bug``'s arguments."""
    words = args.split()
    with_transcript = any(word in _TRANSCRIPT_FLAGS for word in words)
    return with_transcript, " ".join(word for word in words if word not in _TRANSCRIPT_FLAGS)


def environment(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Where pi-tui runs: versions, platform and terminal; of ``PI_*`` variables the names only."""
    from pi_tui import __version__

    env = dict(os.environ) if environ is None else environ
    return {
        "version": __version__,
        "runtime": f"python/{platform.python_version()}",
        "platform": sys.platform,
        "arch": platform.machine(),
        "osRelease": platform.release(),
        "shell": Path(env["SHELL"]).name if env.get("SHELL") else None,
        "terminal": {
            "term": env.get("TERM") or None,
            "program": env.get("TERM_PROGRAM") or None,
            "programVersion": env.get("TERM_PROGRAM_VERSION") or None,
            "colorterm": env.get("COLORTERM") or None,
            "tmux": bool(env.get("TMUX")),
            "ssh": bool(env.get("SSH_CONNECTION") or env.get("SSH_CLIENT") or env.get("SSH_TTY")),
            "ci": bool(env.get("CI")),
        },
        "piEnvironmentVariables": sorted(name for name in env if name.startswith("PI_")),
    }


def describe_model(model: Any) -> dict[str, Any] | None:
    """The model as configured, without its key; of its headers the names only."""
    if model is None:
        return None
    return {
        "provider": model.provider,
        "id": model.id,
        "name": getattr(model, "name", None),
        "api": getattr(model, "api", None),
        "baseUrl": redact_url(str(getattr(model, "base_url", "") or "")) or None,
        "reasoning": getattr(model, "reasoning", None),
        "contextWindow": getattr(model, "context_window", None),
        "maxTokens": getattr(model, "max_tokens", None),
        "headerNames": sorted((getattr(model, "headers", None) or {}).keys()),
    }


def diagnostics(manager: Any) -> dict[str, Any]:
    """The failed or stopped replies of the session, without what was said in them."""
    failed: list[dict[str, Any]] = []
    count = 0
    entries = manager.get_entries()
    for entry in entries:
        message = getattr(entry, "message", None) if entry.type == "message" else None
        if message is None or getattr(message, "role", None) != "assistant":
            continue
        count += 1
        stop = getattr(message, "stop_reason", None)
        error = getattr(message, "error_message", None)
        if stop not in ("error", "aborted") and not error:
            continue
        item: dict[str, Any] = {
            "entryId": entry.id,
            "timestamp": entry.timestamp,
            "provider": getattr(message, "provider", None),
            "model": getattr(message, "model", None),
            "api": getattr(message, "api", None),
            "stopReason": stop,
        }
        if error:
            item["errorMessage"] = error
        failed.append(item)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "sessionId": manager.session_id,
        "entryCount": len(entries),
        "assistantMessageCount": count,
        "assistant": failed,
    }


def branch_jsonl(manager: Any) -> str:
    """The session header and the current branch's entries, one JSON line each."""
    lines = [json.dumps(manager.get_header().model_dump(by_alias=True, exclude_none=True))]
    for entry_id in manager.get_branch_ids():
        raw = manager.get_raw_entry(entry_id)
        if raw is not None:
            lines.append(json.dumps(raw, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def report(app: CommandHost, report_id: str, hint: str, with_transcript: bool) -> dict[str, Any]:
    """``report.json``: what the developers need to know about this run."""
    agent = app.agent
    manager = agent.manager
    bridge = app.extension_bridge
    runner = bridge.runner if bridge is not None else None
    extensions = [
        {"name": loaded.name, "origin": loaded.source.origin, "path": str(loaded.source.entry)}
        for loaded in (runner.extensions if runner is not None else [])
    ]
    problems = [str(problem) for problem in (runner.problems if runner is not None else [])]
    settings = agent.settings.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    session: dict[str, Any] = {
        "id": manager.session_id,
        "included": with_transcript,
        "summaryIncluded": False,
        "messageCount": sum(1 for entry in manager.get_entries() if entry.type == "message"),
    }
    if with_transcript:
        session["cwd"] = app.cwd
    return {
        "schemaVersion": SCHEMA_VERSION,
        "id": report_id,
        "createdAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "hint": hint or None,
        "environment": environment(),
        "session": session,
        "model": describe_model(agent.model),
        "thinkingLevel": agent.thinking_level,
        "extensions": extensions,
        "extensionErrors": problems,
        "settings": redact_json(settings),
    }


def hide_secrets(text: str) -> str:
    """``text`` with every secret pi-tui knows of hidden (a bug report is meant to be shared)."""
    from pi_tui.redact import redact_secrets
    from pi_tui.secrets.active import current

    obfuscator = current()
    if obfuscator is not None:
        text = obfuscator.hide_text(text)
    return redact_secrets(text)


def write_report(folder: Path, report_id: str, files: dict[str, str]) -> Path:
    """The zip ``pi-tui-bug-report-<id>.zip`` in ``folder``, each file's secrets hidden."""
    path = folder / f"pi-tui-bug-report-{report_id}.zip"
    with zipfile.ZipFile(path, "x", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, hide_secrets(text))
    return path


@COMMANDS.command("bug")
async def bug(app: CommandHost, args: str) -> None:
    with_transcript, hint = bug_arguments(args)
    manager = app.agent.manager
    report_id = uuid.uuid4().hex
    metadata = report(app, report_id, hint, with_transcript)
    files = {
        "report.json": json.dumps(metadata, indent=2, ensure_ascii=False) + "\n",
        "diagnostics.json": json.dumps(diagnostics(manager), indent=2, ensure_ascii=False) + "\n",
    }
    if with_transcript:
        files["session.jsonl"] = branch_jsonl(manager)
    try:
        path = await asyncio.to_thread(write_report, Path(app.cwd), report_id, files)
    except OSError as error:
        app.say(f"Cannot write the bug report: {error.strerror or error}", "error")
        return
    manager.append_custom_entry(
        BUG_REPORT_ENTRY,
        {
            "id": report_id,
            "createdAt": metadata["createdAt"],
            "hint": metadata["hint"],
            "sessionIncluded": with_transcript,
            "summaryIncluded": False,
            "delivery": "zip",
            "path": str(path),
        },
    )
    manager.sync()
    transcript = (
        "with this session's transcript (read it before you share it)"
        if with_transcript
        else "without the transcript (/bug --with-transcript adds it)"
    )
    app.say(
        f"Bug report written to: {path}\n"
        f"Report ID: {report_id}. It holds versions, platform, model and settings (keys hidden), "
        f"{transcript}. Nothing was uploaded: attach the file to your issue yourself."
    )
