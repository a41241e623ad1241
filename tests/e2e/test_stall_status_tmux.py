"""The status line of the installed ``pi-tui`` (in tmux) while a reply waits: rate limits and stalls.

One session against the loopback server: a 429 shows "Retrying in N s - Esc to cancel" counting
down in whole seconds with rate-limit wording, and Escape cancels the wait (no second request);
then a reply that goes silent after its first words shows the reply's elapsed time and "no data
for N s - Esc to stop", and Escape stops it before the idle limit would. The limit is set to 6 s
in settings.json, so the notice comes at 3 s (half the limit) instead of 10 s.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tests.e2e.test_tui_tmux import chat_lines, editor_text, pytestmark, read_session, start_pi_tui
from tests.support.model_server import HttpError, ModelServer, RawStream

__all__ = ["pytestmark"]  # skip without tmux or the installed script, as the main TUI test does

RETRY_AFTER = 3


def completions_chunk(delta: dict[str, str]) -> bytes:
    data = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    return b"data: " + json.dumps({**data, "choices": [{"index": 0, "delta": delta}]}).encode() + b"\n\n"


def status_line(screen: str, needle: str) -> str:
    return next((line for line in chat_lines(screen) if needle in line), "")


def aborted_count(screen: str) -> int:
    return chat_lines(screen).count("Aborted")


def test_rate_limit_countdown_and_stall_notice_in_the_status_line_and_escape_stops_both(
    agent_dir: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = {"retry": {"idleTimeoutSeconds": 6, "firstByteTimeoutSeconds": 6}}
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    limited = HttpError(429, message="Too many requests", headers={"Retry-After": str(RETRY_AFTER)})
    body = completions_chunk({"role": "assistant", "content": "First words"}) + completions_chunk(
        {"content": "!"}
    )
    stalled = RawStream(body, event_delay=60)
    with ModelServer(limited, stalled) as server:
        pane = start_pi_tui(agent_dir, project, server)
        try:
            # 1. a 429: the countdown in whole seconds, rate-limit wording, Escape cancels
            pane.type("Hello")
            pane.wait_for(lambda s: editor_text(s) == "Hello", "the prompt in the editor")
            pane.press("Enter")
            first = pane.wait_for(lambda s: status_line(s, "Retrying in"), "the retry countdown")
            shown_at = time.monotonic()  # the 429 came a moment before
            assert re.search(rf"Retrying in {RETRY_AFTER} s - Esc to cancel", first), first
            assert "Rate limited by the provider (HTTP 429)" in first and "attempt 1/" in first, first
            later = pane.wait_for(
                lambda s: status_line(s, f"Retrying in {RETRY_AFTER - 1} s"), "the countdown moving on"
            )
            assert "Esc to cancel" in later
            pane.press("Escape")
            pane.wait_for(
                lambda s: aborted_count(s) == 1 and not status_line(s, "Retrying") and "Working" not in s,
                "the wait cancelled: 'Aborted' and an idle status line",
                timeout=2,
            )
            while time.monotonic() < shown_at + RETRY_AFTER + 0.3:  # time is tested: past the retry's time
                time.sleep(0.05)
            assert len(server.requests) == 1, "the request was retried after Escape"

            # 2. a reply that goes silent: elapsed time, then the stall notice; Escape stops it
            pane.type("Go on")
            pane.wait_for(lambda s: editor_text(s) == "Go on", "the second prompt in the editor")
            pane.press("Enter")
            working = pane.wait_for(
                lambda s: "First words" in " ".join(chat_lines(s)) and status_line(s, "Working..."),
                "the first words and the working line",
            )
            assert re.search(r"Working\.\.\. \d+s", working), working
            notice = pane.wait_for(lambda s: status_line(s, "no data for"), "the stall notice", timeout=6)
            assert re.search(r"Working\.\.\. [3-5]s · no data for 3 s - Esc to stop", notice), notice
            pane.press("Escape")
            screen = pane.wait_for(
                lambda s: aborted_count(s) == 2 and "Working" not in s and s,
                "the stalled reply stopped by Escape",
                timeout=2,
            )
            assert "No data from the server" not in screen, "the idle limit fired instead of Escape"
        finally:
            pane.kill()

    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    replies = [e["message"] for e in read_session(session) if e.get("message", {}).get("role") == "assistant"]
    assert [reply["stopReason"] for reply in replies] == ["aborted", "aborted"]
    assert replies[1]["content"] == [{"type": "text", "text": "First words"}]
