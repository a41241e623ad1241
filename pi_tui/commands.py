"""Slash commands: one registry that both the TUI and ``--mode rpc`` consult.

The TUI needs it to run, complete and spell-check ``/commands``; rpc mode needs it to answer
``get_commands``. Keeping both on the same table means a command an extension or a prompt
template adds shows up everywhere at once, and a typo gets the same "did you mean" in both.

Built-in commands are handled by the interactive UI only, so (as in pi) they are never listed
to rpc clients: sending ``/settings`` through ``prompt`` would not run anything.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

COMMAND_SOURCES = ("builtin", "extension", "prompt", "skill")
"""Where a command comes from; everything but ``builtin`` is reported over rpc."""

_NAME = r"[A-Za-z][\w:-]*"
_NAME_RE = re.compile(_NAME)
_SLASH_RE = re.compile(rf"/({_NAME})(?:\s+(.*))?", re.DOTALL)

# Order in which rpc lists non-builtin commands: pi reports extension commands, then prompt
# templates, then skills.
_RPC_ORDER = {"extension": 0, "prompt": 1, "skill": 2}


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One ``/name`` the user can type; ``usage`` is the argument hint shown after the name."""

    name: str
    description: str
    usage: str = ""
    aliases: tuple[str, ...] = ()
    source: str = "builtin"
    path: str | None = None


BUILTIN_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "Start a new session"),
    SlashCommand("session", "Show the session file, id, message count, tokens and cost"),
    SlashCommand("compact", "Summarise older messages to free context", usage="[instructions]"),
    SlashCommand("model", "Pick a model, or switch to the one matching the query", usage="[query]"),
    SlashCommand("thinking", "Set the thinking level, or pick one", usage="[level]"),
    SlashCommand("copy", "Copy the last answer to the clipboard"),
    SlashCommand("rules", "List the TTSR and project rules in effect"),
    SlashCommand("hotkeys", "Show the keyboard shortcuts"),
    SlashCommand("settings", "Change the theme and other options"),
    SlashCommand("scoped-models", "Choose the models Ctrl+P cycles through (and their order)"),
    SlashCommand("quit", "Quit pi-tui", aliases=("exit",)),
    SlashCommand("tree", "Navigate the session tree and continue from any point"),
    SlashCommand("undo-restore", "Bring back the files the last /tree restore replaced (again: redo)"),
    SlashCommand("resume", "Pick a past session to continue (this folder or all)"),
    SlashCommand("branch", "Continue in a new session from an earlier prompt", aliases=("fork",)),
    SlashCommand("clone", "Continue in a new session holding the current path"),
    SlashCommand("label", "Label the last message (empty text removes it)", usage="[text]"),
    SlashCommand("name", "Name this session, or show its name", usage="[name]"),
    SlashCommand(
        "export",
        "Write the session as an HTML page (whole tree), or a .jsonl session file",
        usage="[file.html [--with-secrets] | file.jsonl [--tree]]",
    ),
    SlashCommand("secrets", "What is hidden from the model: the sources of secrets, never their values"),
    SlashCommand("share", "Export the session page and upload it as a secret GitHub gist (gh)"),
    SlashCommand(
        "bug",
        "Write a private bug report (versions, platform, settings; keys hidden) here; never uploads",
        usage="[--with-transcript] [description]",
    ),
    SlashCommand("import", "Import a session file (.jsonl) and continue in it", usage="<file.jsonl>"),
    SlashCommand("login", "Save an API key for a provider (auth.json)"),
    SlashCommand("logout", "Remove a saved API key"),
    SlashCommand("reload", "Reload settings, context files, rules, extensions, keybindings and themes"),
    SlashCommand("trust", "Show and save whether this project folder's .agent resources load"),
    SlashCommand("extensions", "List the loaded extensions: where from, commands, tools, events"),
    SlashCommand(
        "mcp",
        "MCP servers: state, tools, exposure; reconnect, sign in or out, enable or disable",
        usage="[reconnect|login|logout <server>]",
    ),
    SlashCommand("changelog", "Show what changed in each pi-tui version"),
)


def _bare(name: str) -> str:
    """A name as the registry keys it: without the leading slash, lower-case."""
    return name.strip().removeprefix("/").lower()


class CommandRegistry:
    """The known slash commands, looked up by name or alias, ignoring case and a leading ``/``.

    Names and aliases share one namespace: an alias can never shadow another command's name,
    otherwise what ``/x`` runs would depend on registration order.
    """

    def __init__(self, commands: Iterable[SlashCommand] = BUILTIN_COMMANDS) -> None:
        self._commands: dict[str, SlashCommand] = {}
        self._aliases: dict[str, str] = {}
        for command in commands:
            self.register(command)

    def register(self, command: SlashCommand) -> None:
        """Add ``command``; a malformed or already taken name or alias is a ``ValueError``."""
        if command.source not in COMMAND_SOURCES:
            raise ValueError(
                f'Command /{command.name} has unknown source "{command.source}" '
                f"(expected one of {', '.join(COMMAND_SOURCES)})"
            )
        wanted = [command.name, *command.aliases]
        seen: set[str] = set()
        for word in wanted:
            if not _NAME_RE.fullmatch(word):
                raise ValueError(
                    f'"{word}" is not a valid command name (a letter, then letters, digits, _, - or :)'
                )
            key = word.lower()
            if key in seen:
                raise ValueError(f"Command /{command.name} lists /{word} twice")
            seen.add(key)
            owner = self._owner(key)
            if owner is not None:
                raise ValueError(f"Command name /{word} is already taken by /{owner.name}")
        name = command.name.lower()
        self._commands[name] = command
        for alias in command.aliases:
            self._aliases[alias.lower()] = name

    def unregister(self, name: str) -> SlashCommand | None:
        """Remove the command called (or aliased) ``name``; returns it, or None if unknown."""
        command = self.get(name)
        if command is None:
            return None
        del self._commands[command.name.lower()]
        for alias in command.aliases:
            self._aliases.pop(alias.lower(), None)
        return command

    def _owner(self, key: str) -> SlashCommand | None:
        if key in self._commands:
            return self._commands[key]
        target = self._aliases.get(key)
        return self._commands.get(target) if target is not None else None

    def get(self, name: str) -> SlashCommand | None:
        """The command for ``name`` (with or without ``/``, any case, name or alias)."""
        return self._owner(_bare(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self._commands)

    def all(self) -> list[SlashCommand]:
        """Every command, sorted by name, so menus and help texts are stable."""
        return sorted(self._commands.values(), key=lambda command: command.name.lower())

    def complete(self, prefix: str) -> list[SlashCommand]:
        """Commands for the completion menu: names starting with ``prefix`` first, then aliases.

        Alias matches come second because the name is what the user will see inserted; an empty
        prefix (just ``/``) lists everything.
        """
        word = _bare(prefix)
        by_name = [command for command in self.all() if command.name.lower().startswith(word)]
        by_alias = [
            command
            for command in self.all()
            if command not in by_name and any(alias.lower().startswith(word) for alias in command.aliases)
        ]
        return by_name + by_alias

    def suggest(self, name: str) -> str | None:
        """The known name the user most likely meant by ``name``, for "did you mean /x?".

        An unambiguous start of a name wins (``/mod`` -> ``model``); otherwise the closest spelling
        of a name or alias, if it is close enough to be a plausible typo.
        """
        word = _bare(name)
        if not word:
            return None
        exact = self._owner(word)
        if exact is not None:
            return exact.name
        starts = self.complete(word)
        if starts:
            return starts[0].name
        candidates = [*self._commands, *self._aliases]
        close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
        if not close:
            return None
        match = close[0]
        # An alias is itself a valid spelling, and it is the one closest to what was typed.
        return self._commands[match].name if match in self._commands else match

    def rpc_commands(self) -> list[dict[str, Any]]:
        """Non-builtin commands in the shape of pi's rpc ``get_commands`` response."""
        listed = [command for command in self._commands.values() if command.source != "builtin"]
        listed.sort(key=lambda command: _RPC_ORDER.get(command.source, len(_RPC_ORDER)))
        result: list[dict[str, Any]] = []
        for command in listed:
            record: dict[str, Any] = {
                "name": command.name,
                "description": command.description,
                "source": command.source,
            }
            if command.path is not None:
                record["path"] = command.path
            result.append(record)
        return result


def parse_slash(text: str) -> tuple[str, str] | None:
    """Split ``/name args`` into ``(name, args)``, or None if the text is not a command.

    A message that merely starts with a path (``/usr/bin/env is broken``) must reach the model
    untouched, so the name has to be followed by whitespace or the end of the text.
    """
    match = _SLASH_RE.fullmatch(text.strip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()
