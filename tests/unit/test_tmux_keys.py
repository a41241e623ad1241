"""The tmux extended-keys hint: only inside tmux, only when tmux would swallow Shift+Enter."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from pi_tui.tui.tmux_keys import tmux_keys_hint
from tests.support.requires import requires


def test_no_hint_outside_tmux_or_when_tmux_cannot_be_asked() -> None:
    assert tmux_keys_hint({}, lambda name: "off") is None
    assert tmux_keys_hint({"TMUX": "/tmp/x,1,0"}, lambda name: None) is None


def test_hint_names_the_fix_and_the_keys_that_work_meanwhile() -> None:
    off = tmux_keys_hint({"TMUX": "/tmp/x,1,0"}, {"extended-keys": "off"}.get)
    assert off is not None and "set -g extended-keys on" in off and "Alt+Enter" in off
    xterm = tmux_keys_hint({"TMUX": "t"}, {"extended-keys": "on", "extended-keys-format": "xterm"}.get)
    assert xterm is not None and "csi-u" in xterm
    assert tmux_keys_hint({"TMUX": "t"}, {"extended-keys": "on", "extended-keys-format": "csi-u"}.get) is None
    assert tmux_keys_hint({"TMUX": "t"}, {"extended-keys": "always"}.get) is None


@requires("tmux")
def test_a_real_tmux_server_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    socket = f"pi-tui-keys-{uuid.uuid4().hex[:8]}"
    base = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", "k", "sleep 30"], check=True)
    try:
        path = subprocess.run(
            [*base, "display", "-p", "-t", "k", "#{socket_path}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        monkeypatch.setenv("TMUX", f"{path},1,0")
        assert "extended-keys off" in (tmux_keys_hint() or "")
        subprocess.run([*base, "set", "-g", "extended-keys", "on"], check=True)
        assert tmux_keys_hint() is None or "csi-u" in (tmux_keys_hint() or "")
    finally:
        subprocess.run([*base, "kill-server"], check=False)
