"""Where extensions are found, in which order, which need trust; the trust file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pi_tui.config.extension_sources import discover_extensions
from pi_tui.extensions.trust import TrustError, TrustStore


def write(path: Path, text: str = "def activate(pi):\n    pass\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_sources_come_in_order_and_a_name_loads_once(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    write(agent / "extensions" / "b.py")
    write(agent / "extensions" / "a.py")
    write(agent / "extensions" / "pkg" / "__init__.py")
    write(agent / "extensions" / "_helper.py")  # imported by others, not an extension
    write(agent / "extensions" / "notes.txt")
    (agent / "extensions" / "empty-folder").mkdir()
    write(agent / "lib" / "listed.py")
    write(agent / "settings.json", json.dumps({"extensions": ["lib/listed.py"]}))
    write(project / ".agent" / "extensions" / "a.py")  # same name as the user's: the first wins
    write(project / ".agent" / "extensions" / "proj.py")
    write(project / "tools" / "fromsettings.py")
    write(project / ".agent" / "settings.json", json.dumps({"extensions": ["../tools/fromsettings.py"]}))
    cli = write(tmp_path / "mine.py")

    found = discover_extensions(project, agent, [str(cli)])
    assert [(s.name, s.origin, s.needs_trust) for s in found.sources] == [
        ("mine", "cli", False),
        ("listed", "settings", False),
        ("a", "user", False),
        ("b", "user", False),
        ("pkg", "user", False),
        ("fromsettings", "project-settings", True),
        ("proj", "project", True),
    ]
    assert found.problems == []
    assert found.sources[4].entry == agent / "extensions" / "pkg" / "__init__.py"
    assert {s.project for s in found.untrusted()} == {project.resolve()}


def test_no_extensions_keeps_only_dash_e_and_bad_paths_are_named(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    write(agent / "extensions" / "a.py")
    write(agent / "settings.json", json.dumps({"extensions": ["missing.py", 3]}))
    project.mkdir()
    cli = write(tmp_path / "mine.py")
    assert [s.name for s in discover_extensions(project, agent, [str(cli)], no_extensions=True).sources] == [
        "mine"
    ]
    found = discover_extensions(project, agent, ["nope.py", str(tmp_path)])
    assert found.problems[0] == f"-e: {project / 'nope.py'} does not exist"
    assert found.problems[1] == f"-e: {tmp_path} is a folder without __init__.py, not an extension"
    assert "missing.py does not exist" in found.problems[2]
    assert "3 is not a path" in found.problems[3]


def test_trust_decisions_are_kept_private_and_a_broken_file_trusts_nothing(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "agent")
    project = tmp_path / "project"
    project.mkdir()
    assert store.decision(project) is None
    store.decide(project, "trusted")
    assert store.is_trusted(project) and store.is_trusted(tmp_path / "project" / ".." / "project")
    mode = stat.S_IMODE(store.path.stat().st_mode)
    assert mode == 0o600
    store.decide(tmp_path, "never")
    text = store.path.read_text()
    assert json.loads(text) == {str(project.resolve()): True, str(tmp_path.resolve()): False}
    assert text.endswith("}\n") and text.index(str(tmp_path.resolve())) < text.index(str(project.resolve()))
    assert not store.path.with_name("trust.json.lock").exists()  # pi's lock folder, released
    store.decide(project, None)
    assert store.decision(project) == "never"  # its own entry gone: the parent's applies again
    store.path.write_text("{not json")
    assert store.decision(tmp_path) is None and "not valid JSON" in (store.problem or "")
    with pytest.raises(TrustError, match="not valid JSON"):
        store.decide(project, "trusted")
    assert store.path.read_text() == "{not json"  # the user's file is never overwritten


def test_the_nearest_saved_folder_decides_and_null_is_passed_over(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "agent")
    work = (tmp_path / "work").resolve()
    deep = work / "repo" / "sub" / "deeper"
    deep.mkdir(parents=True)
    store.path.parent.mkdir(exist_ok=True)
    store.path.write_text(
        json.dumps(
            {
                str(work): True,
                str(work / "repo"): False,
                str(work / "repo" / "sub"): None,  # what pi leaves when it moves a decision up
            }
        )
    )
    assert store.decision(work / "other") == "trusted"
    entry = store.entry(deep)
    assert entry is not None and entry.decision == "never" and entry.folder == str(work / "repo")
    assert store.decision(tmp_path) is None  # above every entry
    store.decide(deep, "trusted")
    assert store.is_trusted(deep) and not store.is_trusted(work / "repo" / "sub")
    assert json.loads(store.path.read_text())[str(work / "repo" / "sub")] is None  # kept as pi keeps it


def test_our_first_format_is_read_and_rewritten_in_pis_on_the_next_change(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "agent")
    old, never, new = (tmp_path / name for name in ("old", "never", "new"))
    store.path.parent.mkdir(exist_ok=True)
    store.path.write_text(
        json.dumps(
            {
                "folders": {
                    str(old.resolve()): "trusted",
                    str(never.resolve()): "never",
                    "/odd": "maybe",
                }
            }
        )
    )
    assert store.is_trusted(old / "child") and store.decision(never) == "never"
    store.decide(new, "trusted")
    assert json.loads(store.path.read_text()) == {
        str(never.resolve()): False,
        str(new.resolve()): True,
        str(old.resolve()): True,
    }
