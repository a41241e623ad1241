"""Log every Time Traveling Stream Rule hit: which rules, where they matched and the text they
cut, one JSON line each in ``<agent dir>/ttsr-hits.jsonl``, and a short notice in the chat.

    pi-tui -e examples/extensions/ttsr_log.py
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pi_tui.extensions import ExtensionAPI


def log_path() -> Path:
    folder = os.environ.get("PI_CODING_AGENT_DIR") or str(Path.home() / ".agent")
    return Path(folder) / "ttsr-hits.jsonl"


def activate(pi: ExtensionAPI) -> None:
    def hit(event: Any, ctx: Any) -> None:
        names = [rule.name for rule in event.rules]
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "cwd": str(ctx.cwd),
            "rules": names,
            "scope": event.scope,
            "cut": event.cut_text[-200:],
        }
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        ctx.ui.notify(f"rule hit: {', '.join(names)} in {event.scope}")

    pi.on("ttsr_triggered", hit)
