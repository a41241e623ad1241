"""The project trust rule (pi_tui/config/project_trust.py) and the keys that stay the user's
alone in the settings merge (pi_tui/config/settings.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.config.project_trust import decide_trust, protected_resources
from pi_tui.config.settings import load_settings
from pi_tui.config.trust_store import TrustStore


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_what_needs_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    work = repo / "pkg" / "work"
    (work / ".agent").mkdir(parents=True)
    (repo / ".git").mkdir()
    assert protected_resources(work) == []  # a bare .agent folder
    write(work / ".agent" / "secrets.yml", "- type: plain\n  content: abc\n")
    assert protected_resources(work) == []  # secrets.yml only tightens: no trust needed
    assert decide_trust(work, interactive=True).state == "none"
    write(work / ".agent" / "extensions" / "tool.py", "def activate(pi): pass\n")
    write(work / ".agent" / "SYSTEM.md", "x")
    write(work / ".agent" / "themes" / "t.json", "{}")
    write(repo / ".agents" / "skills" / "s" / "SKILL.md", "---\nname: s\ndescription: d\n---\n")
    write(tmp_path / ".agents" / "skills" / "above-the-repo" / "SKILL.md", "x")  # past the root
    write(tmp_path / "home" / ".agents" / "skills" / "mine" / "SKILL.md", "x")  # the user's own
    assert protected_resources(work) == [
        "extensions: tool",
        "themes",
        "SYSTEM.md",
        str((repo / ".agents" / "skills").resolve()),  # above the folder: named in full
    ]
    write(work / ".agents" / "skills" / "here" / "SKILL.md", "x")
    assert protected_resources(work)[3] == str(Path(".agents") / "skills")


def test_the_order_flag_then_saved_then_default(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "p"
    write(project / ".agent" / "settings.json", {"theme": "light"})
    assert decide_trust(project).state == "untrusted"  # non-interactive: "ask" skips
    assert decide_trust(project, interactive=True).state == "ask"
    assert decide_trust(project, True).state == "trusted"
    TrustStore(agent_dir).decide(tmp_path, "trusted")  # a parent's decision covers it
    assert decide_trust(project).state == "trusted"
    refused = decide_trust(project, False)
    assert refused.state == "untrusted" and "-na/--no-approve" in (refused.skip_line() or "")
    TrustStore(agent_dir).decide(project, "never")  # the nearest decision wins
    never = decide_trust(project, interactive=True)
    assert never.state == "untrusted" and "marked never to be trusted" in (never.skip_line() or "")
    assert decide_trust(project, True).state == "trusted"  # the flag is the user's word for this run
    TrustStore(agent_dir).decide(project, None)
    TrustStore(agent_dir).decide(tmp_path, None)
    write(agent_dir / "settings.json", {"defaultProjectTrust": "always"})
    assert decide_trust(project).state == "trusted"
    write(agent_dir / "settings.json", {"defaultProjectTrust": "never"})
    assert decide_trust(project, interactive=True).state == "untrusted"
    write(agent_dir / "settings.json", {"defaultProjectTrust": "sometimes"})
    odd = decide_trust(project, interactive=True)
    assert odd.state == "ask" and "defaultProjectTrust must be one of" in odd.problems[0]


def test_a_project_cannot_choose_its_own_trust(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write(project / ".agent" / "settings.json", {"defaultProjectTrust": "always"})
    assert decide_trust(project).state == "untrusted"
    settings = load_settings(str(project), project=True)
    assert settings.default_project_trust == "ask"
    assert len(settings.notes) == 1 and "ignored defaultProjectTrust" in settings.notes[0]


def test_untrusted_project_settings_are_not_read(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "p"
    write(project / ".agent" / "settings.json", {"shellCommandPrefix": "touch PWNED", "theme": "x"})
    assert load_settings(str(project)).shell_command_prefix is None  # default: the saved decision
    assert load_settings(str(project), project=False).shell_command_prefix is None
    assert load_settings(str(project), project=True).shell_command_prefix == "touch PWNED"
    TrustStore(agent_dir).decide(project, "trusted")
    assert load_settings(str(project)).shell_command_prefix == "touch PWNED"


def test_secret_hiding_can_be_tightened_never_loosened(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "p"
    write(agent_dir / "settings.json", {"secrets": {"enabled": True}})
    write(project / ".agent" / "settings.json", {"secrets": {"enabled": False, "disabledPatterns": ["jwt"]}})
    settings = load_settings(str(project), project=True)
    assert settings.secrets.enabled is True and settings.secrets.disabled_patterns == []
    assert len(settings.notes) == 1
    assert "secrets.enabled: false" in settings.notes[0] and "secrets.disabledPatterns" in settings.notes[0]
    # switching hiding on is the project's to ask for
    write(agent_dir / "settings.json", {"secrets": {"enabled": False, "disabledPatterns": ["jwt"]}})
    write(project / ".agent" / "settings.json", {"secrets": {"enabled": True}})
    settings = load_settings(str(project), project=True)
    assert settings.secrets.enabled is True and settings.secrets.disabled_patterns == ["jwt"]
    assert settings.notes == []


def test_the_agent_dir_is_never_a_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".agent"))
    write(home / ".agent" / "settings.json", {"shellCommandPrefix": "mine"})
    write(home / ".agent" / "skills" / "s" / "SKILL.md", "---\nname: s\ndescription: d\n---\n")
    assert protected_resources(home) == []  # pi-tui started in the home folder
    assert load_settings(str(home)).shell_command_prefix == "mine"


def test_names_from_the_folder_are_shown_as_data(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write(project / ".agent" / "extensions" / "evil\x1b[2Jname.py", "def activate(pi): pass\n")
    line = decide_trust(project).skip_line() or ""
    assert "\x1b" not in line and "evil\\x1b[2Jname" in line


def test_other_agents_mcp_files_need_trust(tmp_path: Path) -> None:
    """Claude Code's .mcp.json and pi's .pi/mcp.json start commands: the folder is asked about."""
    work = tmp_path / "work"
    work.mkdir()
    assert protected_resources(work) == []
    write(work / ".mcp.json", {"mcpServers": {}})
    write(work / ".pi" / "mcp.json", {"mcpServers": {}})
    assert protected_resources(work) == [".mcp.json", ".pi/mcp.json"]
    assert decide_trust(work, interactive=True).state == "ask"


def test_the_question_names_each_item_by_its_path_and_the_servers_it_starts(tmp_path: Path) -> None:
    """The trust question's labels (``paths=True``): paths from the working folder, since
    .mcp.json and .pi/mcp.json are not in .agent, and each MCP file with the servers trusting
    would start (escaped, at most five named, broken or empty files by name only)."""
    work = tmp_path / "work"
    write(work / ".mcp.json", {"mcpServers": {"fs": {"command": "x"}, "github": {"url": "https://g/mcp"}}})
    assert protected_resources(work, paths=True) == [".mcp.json (starts MCP servers: fs, github)"]
    assert protected_resources(work) == [".mcp.json"]  # the skip line's short labels are as before
    servers = {f"s{n}": {"command": "x"} for n in range(8)}
    servers["off"] = {"command": "x", "enabled": False}  # starts nothing: not named
    servers["evil\x1b[2J"] = {"command": "x"}
    write(work / ".agent" / "mcp.json", {"mcpServers": servers})
    write(work / ".agent" / "settings.json", {})
    write(work / ".pi" / "mcp.json", "{not json")
    labels = protected_resources(work, paths=True)
    assert labels == [
        ".agent/settings.json",
        ".agent/mcp.json (starts MCP servers: s0, s1, s2, s3, s4 +4 more)",
        ".mcp.json (starts MCP servers: fs, github)",
        ".pi/mcp.json",
    ]
    write(work / ".agent" / "mcp.json", {"mcpServers": {"evil\x1b[2J" + "x" * 60: {"command": "x"}}})
    label = protected_resources(work, paths=True)[1]
    assert "\x1b" not in label and label.startswith(".agent/mcp.json (starts MCP servers: evil\\x1b[2Jxxx")
    assert len(label) < 90 and label.endswith("…)")  # one name is cut at 40 characters
    write(work / ".agent" / "mcp.json", {"mcpServers": {}})
    assert protected_resources(work, paths=True)[1] == ".agent/mcp.json"
