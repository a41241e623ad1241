"""The slash-command registry and parser shared by the TUI and rpc mode."""

from __future__ import annotations

import pytest

from pi_tui.commands import BUILTIN_COMMANDS, CommandRegistry, SlashCommand, parse_slash


def test_builtins_are_the_documented_set() -> None:
    names = {command.name for command in BUILTIN_COMMANDS}
    expected = ["new", "session", "compact", "model", "thinking", "copy", "rules", "hotkeys", "settings"]
    expected += ["quit", "tree", "undo-restore", "resume", "branch", "clone", "label", "name", "export"]
    expected += [
        "import",
        "login",
        "logout",
        "reload",
        "trust",
        "changelog",
        "scoped-models",
        "extensions",
        "share",
        "secrets",
        "bug",
        "mcp",
    ]
    assert names == set(expected)
    by_name = {command.name: command for command in BUILTIN_COMMANDS}
    assert by_name["compact"].usage == "[instructions]"
    assert by_name["model"].usage == "[query]"
    assert by_name["thinking"].usage == "[level]"
    assert by_name["export"].usage == "[file.html [--with-secrets] | file.jsonl [--tree]]"
    assert by_name["import"].usage == "<file.jsonl>"
    assert by_name["name"].usage == "[name]"  # pi 1.x: without a name, /name shows it
    assert by_name["bug"].usage == "[--with-transcript] [description]"
    assert by_name["mcp"].usage == "[reconnect|login|logout <server>]"
    assert by_name["quit"].aliases == ("exit",)
    assert all(command.source == "builtin" and command.description for command in BUILTIN_COMMANDS)


def test_get_resolves_aliases_slashes_and_case() -> None:
    registry = CommandRegistry()
    quit_command = registry.get("quit")
    assert quit_command is not None
    assert registry.get("/exit") is quit_command
    assert registry.get("EXIT") is quit_command
    assert registry.get(" /Model ") is registry.get("model")
    assert registry.get("nope") is None
    assert "/tree" in registry and "nope" not in registry


def test_all_is_sorted_by_name() -> None:
    names = [command.name for command in CommandRegistry().all()]
    assert names == sorted(names)
    assert len(names) == len(BUILTIN_COMMANDS)


def test_register_rejects_taken_names_and_aliases() -> None:
    registry = CommandRegistry()
    with pytest.raises(ValueError, match="/Model is already taken by /model"):
        registry.register(SlashCommand("Model", "again", source="extension"))
    with pytest.raises(ValueError, match="/exit is already taken by /quit"):
        registry.register(SlashCommand("exit", "shadow the alias", source="extension"))
    with pytest.raises(ValueError, match="/new is already taken by /new"):
        registry.register(SlashCommand("fresh", "x", aliases=("new",), source="extension"))
    with pytest.raises(ValueError, match="not a valid command name"):
        registry.register(SlashCommand("9lives", "x", source="extension"))
    with pytest.raises(ValueError, match="unknown source"):
        registry.register(SlashCommand("odd", "x", source="plugin"))
    # A failed registration leaves nothing behind.
    assert registry.get("fresh") is None and registry.get("odd") is None


def test_register_and_unregister() -> None:
    registry = CommandRegistry([])
    command = SlashCommand("deploy", "Ship it", aliases=("ship",), source="extension")
    registry.register(command)
    assert registry.get("/ship") is command
    assert registry.unregister("ship") is command
    assert registry.get("deploy") is None and registry.get("ship") is None
    assert registry.unregister("deploy") is None
    # The alias is free again.
    registry.register(SlashCommand("ship", "Ship differently", source="prompt"))
    assert registry.get("ship") is not None


def test_complete_puts_name_matches_before_alias_matches() -> None:
    registry = CommandRegistry()
    registry.register(SlashCommand("extract", "Pull out a function", source="extension"))
    completed = [command.name for command in registry.complete("/ex")]
    assert completed == ["export", "extensions", "extract", "quit"]
    assert [command.name for command in registry.complete("t")] == ["thinking", "tree", "trust"]
    names = [command.name for command in registry.complete("/S")]
    assert names == ["scoped-models", "secrets", "session", "settings", "share"]
    assert len(registry.complete("/")) == len(BUILTIN_COMMANDS) + 1
    assert registry.complete("zzz") == []


def test_suggest_handles_typos_prefixes_and_nonsense() -> None:
    registry = CommandRegistry()
    assert registry.suggest("/modle") == "model"
    assert registry.suggest("sesion") == "session"
    assert registry.suggest("/comp") == "compact"
    assert registry.suggest("exti") == "exit"  # closest to the alias, which is a valid spelling
    assert registry.suggest("TREE") == "tree"
    assert registry.suggest("xyzzy") is None
    assert registry.suggest("/") is None


def test_rpc_commands_leave_out_builtins_and_use_pi_shape() -> None:
    registry = CommandRegistry()
    assert registry.rpc_commands() == []
    registry.register(SlashCommand("fix-tests", "Fix failing tests", source="prompt", path="/p/fix-tests.md"))
    registry.register(SlashCommand("session-name", "Set or clear session name", source="extension"))
    registry.register(SlashCommand("skill:search", "Web search", source="skill", path="/s/SKILL.md"))
    assert registry.rpc_commands() == [
        {"name": "session-name", "description": "Set or clear session name", "source": "extension"},
        {
            "name": "fix-tests",
            "description": "Fix failing tests",
            "source": "prompt",
            "path": "/p/fix-tests.md",
        },
        {"name": "skill:search", "description": "Web search", "source": "skill", "path": "/s/SKILL.md"},
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/model foo bar", ("model", "foo bar")),
        ("  /compact   keep the API notes  ", ("compact", "keep the API notes")),
        ("/new", ("new", "")),
        ("/quit\n", ("quit", "")),
        ("/compact focus on\nthe tests", ("compact", "focus on\nthe tests")),
        ("/skill:brave-search rust async", ("skill:brave-search", "rust async")),
        ("/Model x", ("Model", "x")),
    ],
)
def test_parse_slash_splits_name_and_arguments(text: str, expected: tuple[str, str]) -> None:
    assert parse_slash(text) == expected


@pytest.mark.parametrize(
    "text",
    ["hello /model", "/usr/bin/env is broken", "/tmp/x", "/", "/ model", "/9x", "//model", "", "model"],
)
def test_parse_slash_rejects_paths_and_plain_text(text: str) -> None:
    assert parse_slash(text) is None
