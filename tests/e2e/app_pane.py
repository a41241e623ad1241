"""The installed ``pi-tui`` in a private tmux pane, the way the e2e tests start it.

Each test gets its own agent, cache and pi folders (under ``tmp_path``), so nothing of the
machine's setup and nothing of another test leaks in; :func:`start_pi_tui` returns once the chat
shows an empty editor and the footer names the model (unless told not to wait).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.e2e.test_tui_tmux import SCRIPT, editor_text
from tests.support.tmux import TmuxPane


def start_pi_tui(
    args: Sequence[str],
    *,
    project: Path,
    agent_dir: Path,
    tmp_path: Path,
    width: int = 80,
    height: int = 24,
    footer: str | None = "demo",
) -> TmuxPane:
    """``pi-tui ARGS`` in ``project``; waits for an empty editor and ``footer`` in the last row
    (``None``: returns at once, for keys that must arrive before the first frame)."""
    project.mkdir(parents=True, exist_ok=True)
    pane = TmuxPane.start(
        [SCRIPT, *args],
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "PI_TUI_PI_AGENT_DIR": str(tmp_path / "pi-agent"),
        },
        width=width,
        height=height,
    )
    if footer is None:
        return pane
    try:
        pane.wait_for(
            lambda s: editor_text(s) == "" and footer in s.splitlines()[-1],
            "the chat with an empty editor",
            15,
        )
    except BaseException:
        pane.kill()
        raise
    return pane
