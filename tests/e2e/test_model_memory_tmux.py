"""Choosing a model and a thinking level in the installed ``pi-tui``, through tmux, as pi 1.5.2.

Against the loopback model server with three models in models.json: ``alpha`` (no thinking),
``beta`` (thinks; its ``thinkingLevelMap`` drops ``minimal`` and names ``xhigh``, sent as
``ultra``) and ``gamma`` (thinks, no map: no ``xhigh`` / ``max``). What pi 1.5.2 does (its
dist, and the real pi driven the same way):

- Ctrl+S in the model picker writes ``defaultProvider`` / ``defaultModel``, and the next start
  comes up on that model; a scope from ``enabledModels`` gains it. Enter, Ctrl+P and Shift+Tab
  change this session only: nothing is written (Shift+Tab used to write defaultThinkingLevel).
- With a real model usable, the offline demo is in none of Ctrl+P's cycle, ``/model`` and
  ``/scoped-models`` (it used to be all three); ``--model offline/demo`` still starts on it.
- Shift+Tab, the ``/thinking`` picker and ``/thinking LEVEL`` offer only the model's levels: a
  level mapped to null is skipped, ``xhigh`` only where the map names it, only ``off`` on a
  model that does not think; the request carries the map's value.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tui_tmux import SCRIPT, editor_text
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

MODELS: list[dict[str, Any]] = [
    {"id": "alpha", "name": "Alpha"},
    {
        "id": "beta",
        "name": "Beta",
        "reasoning": True,
        "thinkingLevelMap": {"minimal": None, "xhigh": "ultra"},
    },
    {"id": "gamma", "name": "Gamma", "reasoning": True},
]


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as running:
        (agent_dir / "models.json").write_text(json.dumps(running.models_json(models=MODELS)))
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def footer(screen: str) -> str:
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def on_model(model: str, level: str | None = None) -> Any:
    """A wait condition: the footer names ``model`` (and ``level``) and the editor is empty."""

    def check(screen: str) -> bool:
        last = footer(screen)
        if f" {model}" not in last or editor_text(screen) != "":
            return False
        return level is None or last.rstrip().endswith(f"{model} • {level}")

    return check


def start(project: Path, agent_dir: Path, *args: str) -> TmuxPane:
    """The installed pi-tui in tmux with this agent folder and no provider key from outside."""
    env = {
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_TUI_CACHE_DIR": os.environ["PI_TUI_CACHE_DIR"],
        "PI_TUI_PI_AGENT_DIR": os.environ["PI_TUI_PI_AGENT_DIR"],
        "HOME": str(project.parent / "home"),
        **{key: "" for key in os.environ if key.endswith("_API_KEY")},
    }
    (project.parent / "home").mkdir(exist_ok=True)
    return TmuxPane.start([SCRIPT, *args], cwd=project, env=env)


def settings(agent_dir: Path) -> dict[str, Any]:
    path = agent_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def command(pane: TmuxPane, text: str) -> None:
    pane.type(text)
    pane.wait_for(lambda screen: editor_text(screen) == text, f"{text!r} in the editor")
    pane.press("Enter")


def quit_app(pane: TmuxPane) -> None:
    pane.press("C-d")
    assert pane.wait_gone(15), pane.last_screen


def test_ctrl_s_in_the_picker_is_remembered_and_switching_alone_is_not(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["test/alpha", "test/beta"]}))
    pane = start(project, agent_dir)
    try:
        pane.wait_for(on_model("alpha"), "pi-tui on alpha", timeout=20)
        pane.press("C-p")  # switching alone: this session only
        pane.wait_for(on_model("beta"), "Ctrl+P onto beta")
        pane.press("BTab")
        pane.wait_for(on_model("beta", "low"), "Shift+Tab: low (beta has no minimal)")
        assert settings(agent_dir) == {"enabledModels": ["test/alpha", "test/beta"]}
        pane.press("C-l")
        pane.wait_for(lambda screen: "Select a model" in screen, "the model picker")
        pane.type("gamma")
        pane.wait_for(lambda screen: "test/beta" not in screen and "test/gamma" in screen, "gamma alone")
        pane.press("C-s")
        pane.wait_for(lambda screen: "Default model: test/gamma" in screen, "saved as the default")
        pane.wait_for(on_model("gamma"), "on gamma")
        saved = settings(agent_dir)
        assert saved["defaultProvider"] == "test" and saved["defaultModel"] == "gamma"
        # The saved default joins the Ctrl+P scope, in settings too, as pi 1.5.2 does.
        assert saved["enabledModels"] == ["test/alpha", "test/beta", "test/gamma"]
        assert "defaultThinkingLevel" not in saved  # Shift+Tab saved nothing
        pane.press("C-p")
        pane.wait_for(on_model("alpha"), "Ctrl+P from gamma: alpha")
        assert settings(agent_dir) == saved  # Ctrl+P saved nothing
        quit_app(pane)
    finally:
        pane.kill()
    pane = start(project, agent_dir)
    try:
        pane.wait_for(on_model("gamma"), "the next start on the saved model", timeout=20)
    finally:
        pane.kill()


def test_the_demo_is_not_offered_beside_real_models(
    server: ModelServer, agent_dir: Path, project: Path
) -> None:
    pane = start(project, agent_dir)
    try:
        pane.wait_for(on_model("alpha"), "pi-tui on alpha", timeout=20)
        seen = []
        for expected in ("beta", "gamma", "alpha"):
            pane.press("C-p")
            screen = pane.wait_for(
                lambda s, m=expected: s if on_model(m)(s) else None, f"Ctrl+P onto {expected}"
            )
            seen.append(footer(screen))
        assert not any("demo" in line for line in seen), seen
        command(pane, "/model")
        listed = pane.wait_for(lambda s: s if "Select a model" in s and "test/gamma" in s else None, "/model")
        assert "offline/demo" not in listed
        pane.press("Escape")
        pane.wait_for(lambda s: "Select a model" not in s and on_model("alpha")(s), "the picker closed")
        command(pane, "/scoped-models")
        listed = pane.wait_for(
            lambda s: s if "Models for Ctrl+P" in s and "test/gamma" in s else None, "/scoped-models"
        )
        assert "offline/demo" not in listed
        pane.press("Escape")
        pane.wait_for(lambda s: "Models for Ctrl+P" not in s and on_model("alpha")(s), "the screen closed")
    finally:
        pane.kill()
    pane = start(project, agent_dir, "--model", "offline/demo")  # still reachable by name
    try:
        pane.wait_for(on_model("demo"), "pi-tui on the demo", timeout=20)
        pane.press("C-p")
        pane.wait_for(on_model("alpha"), "Ctrl+P from the demo onto a real model")
    finally:
        pane.kill()


def picker_rows(screen: str) -> str:
    """The thinking picker's box only: the chat behind it may name xhigh ("Thinking level: xhigh")."""
    lines = screen.splitlines()
    title = max(i for i, line in enumerate(lines) if re.search(r"│\s*Thinking level\s*│", line))
    top = max(i for i in range(title + 1) if "╭" in lines[i])
    bottom = next(i for i in range(title, len(lines)) if "╰" in lines[i])
    return "\n".join(lines[top : bottom + 1])


def test_only_the_levels_a_model_has_are_offered(server: ModelServer, agent_dir: Path, project: Path) -> None:
    # from off (a new session starts at pi's medium): the whole cycle of beta's levels follows
    pane = start(project, agent_dir, "--model", "test/beta", "--thinking", "off")
    try:
        pane.wait_for(on_model("beta"), "pi-tui on beta", timeout=20)
        for level in ("low", "medium", "high", "xhigh", "thinking off"):  # minimal: null in the map
            pane.press("BTab")
            pane.wait_for(on_model("beta", level), f"Shift+Tab: {level}")
        for _ in range(4):
            pane.press("BTab")
        pane.wait_for(on_model("beta", "xhigh"), "back at xhigh")
        command(pane, "say it")
        pane.wait_for(lambda s: "echo: say it" in s, "the answer")
        assert server.requests[-1].body["reasoning_effort"] == "ultra"  # the map's value is sent
        command(pane, "/model gamma")
        pane.wait_for(on_model("gamma", "high"), "on gamma, xhigh clamped to high")
        command(pane, "/thinking")
        picker = pane.wait_for(
            lambda s: s if "Thinking level" in s and "minimal" in s else None, "the picker"
        )
        rows = picker_rows(picker)
        assert rows and "xhigh" not in rows and " max " not in rows, picker
        pane.press("Escape")
        pane.wait_for(lambda s: "a moderate think" not in s and on_model("gamma")(s), "the picker closed")
        command(pane, "/thinking xhigh")  # gamma's map names no xhigh: refused, as pi refuses it
        pane.wait_for(lambda s: 'Unknown thinking level "xhigh"' in s, "xhigh refused")
        assert "xhigh" not in footer(pane.last_screen)
        for level in ("thinking off", "minimal", "low", "medium", "high"):
            pane.press("BTab")
            pane.wait_for(on_model("gamma", level), f"Shift+Tab on gamma: {level}")
        command(pane, "/model alpha")
        pane.wait_for(on_model("alpha"), "on alpha")
        pane.press("BTab")
        pane.wait_for(lambda s: "alpha does not support thinking" in s, "alpha has only off")
        assert "defaultThinkingLevel" not in settings(agent_dir)
    finally:
        pane.kill()
