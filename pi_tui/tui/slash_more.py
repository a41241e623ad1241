"""``/import``, ``/reload``, ``/trust`` and ``/changelog``: pi's commands for bringing a session
in, reading the user's files again without a restart, deciding about the project folder, and
saying what changed in this version.

- ``/import FILE.jsonl`` asks first, copies the file into this folder's session directory (under
  its own name) and continues in the copy, as pi does; the original is left untouched.
- ``/reload`` re-reads settings, models.json and auth.json, context files (AGENTS.md/CLAUDE.md
  in the system prompt), rules, keybindings and the theme, and says what it reloaded; each
  problem is one line and leaves the previous value in force. The project's part of it
  (:func:`reload_resources`) is also what loads a project folder once the user trusts it.
- ``/trust`` shows what this folder hands us and what is saved for it, and saves a new decision
  (trusting loads the project's resources at once; pi_tui/config/project_trust.py).
- ``/changelog`` shows the packaged ``CHANGELOG.md`` as markdown, its newest version last (next
  to the editor), like pi's "What's New".
"""

from __future__ import annotations

import asyncio
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.tui.slash_base import CommandSet

if TYPE_CHECKING:
    from pi_tui.config.trust_store import Decision
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

_VERSION_HEADING = re.compile(r"##\s+\[?(\d+)\.(\d+)\.(\d+)\]?")


# --- /import ----------------------------------------------------------------------------------------


def command_path(args: str) -> str | None:
    """The path argument as pi reads it: a quoted path (spaces allowed) or the first word."""
    args = args.strip()
    if not args:
        return None
    if args[0] in "\"'":
        end = args.find(args[0], 1)
        return args[1:end] if end > 0 else None
    return args.split()[0]


@COMMANDS.command("import")
async def import_session(app: CommandHost, args: str) -> None:
    from pi_tui.agent.session_ops import SessionOpError
    from pi_tui.config.paths import session_dir_for_cwd
    from pi_tui.session import SessionError, SessionManager
    from pi_tui.tui.navigation import session_ops
    from pi_tui.tui.screens.prompts import ConfirmPrompt

    given = command_path(args)
    if given is None:
        app.say("Usage: /import <path.jsonl>", "error")
        return
    if app.busy:
        app.say("Wait for the agent to finish (or press Esc) before importing a session.", "warning")
        return
    source = (Path(app.cwd) / Path(given).expanduser()).resolve()
    if not source.is_file():
        why = "File not found" if not source.exists() else "Not a file"
        app.say(f"Failed to import session: {why}: {source}", "error")
        return
    try:  # a file that is not a session is said now, before anything is copied or asked
        probe = await asyncio.to_thread(SessionManager.open, source, read_only=True)
    except (SessionError, OSError) as error:
        app.say(f"Failed to import session: {error}", "error")
        return
    probe.close()
    if not await app.push_screen_wait(ConfirmPrompt(f"Replace current session with {given}?")):
        app.say("Import cancelled")
        return
    current = app.agent.manager
    folder = current.session_dir or session_dir_for_cwd(app.cwd)
    try:  # comparing and copying a big session takes a while: done in a thread
        moved = await session_ops(app).import_session(source, folder)
    except SessionOpError as error:
        app.say(f"Failed to import session: {error}", "error")
        return
    if moved.cancelled:
        return
    name = moved.session_file.name if moved.session_file is not None else source.name
    where = "" if name == source.name else f" (saved as {name})"
    app.say(f"Session imported from: {given}{where}")


# --- /reload ----------------------------------------------------------------------------------------


@COMMANDS.command("reload")
async def reload_everything(app: CommandHost, args: str) -> None:
    if app.busy:
        app.say("Wait for the current response to finish before reloading.", "warning")
        return
    trust = app.started.trust if app.started is not None else None
    if trust is not None:
        trust.refresh()  # a folder that held nothing at start is judged now
    done, problems = await reload_resources(app)
    app.say(reload_summary("Reloaded", done))
    for problem in problems:
        app.say(problem.splitlines()[0], "warning")


def reload_summary(head: str, done: list[str]) -> str:
    """What was reloaded, plainly: the files on one line ("Reloaded settings, models.json and
    keybindings."), then one line for each thing that has something to say ("  Theme: dark").
    The old single sentence nested brackets three deep."""
    plain = [item for item in done if ": " not in item]
    listed = ", ".join(plain[:-1]) + f" and {plain[-1]}" if len(plain) > 1 else "".join(plain)
    lines = [f"{head} {listed}." if listed else f"{head}:"]
    for item in done:
        if ": " in item:
            what, detail = item.split(": ", 1)
            lines.append(f"  {what[:1].upper()}{what[1:]}: {detail}")
    return "\n".join(lines)


async def reload_resources(app: CommandHost, *, whole: bool = True) -> tuple[list[str], list[str]]:
    """Read again what the user's and the project's files say; returns what was reloaded (a
    name, or ``name: detail``, for :func:`reload_summary`) and the problems (one line each; each
    leaves the previous value in force).

    ``/reload`` reads everything (``whole``). Once the user trusts the project folder, the
    trust question reads only what the project can hand us: settings, skills and templates,
    the system prompt (SYSTEM.md, context files, rules), secrets and the theme (its
    extensions are loaded by the question itself).
    """
    from pi_tui.ai.errors import ConfigError
    from pi_tui.config.settings import SettingsError, load_settings
    from pi_tui.tui.loaded import loaded_summary

    started = app.started
    assert started is not None  # commands run once the agent has started
    problems: list[str] = []
    done: list[str] = []
    trusted = started.trust.trusted if started.trust is not None else None
    skip = started.trust.skip_line() if started.trust is not None else None
    if skip:
        problems.append(skip)

    try:
        settings = await asyncio.to_thread(load_settings, app.cwd, project=trusted)
    except SettingsError as error:
        problems.append(f"settings: {error} (the previous settings stay)")
        settings = started.settings
    else:
        started.settings = settings
        app.agent.settings = settings
        app.show_thinking = not settings.hide_thinking_block
        done.append("settings")
        problems += settings.notes

    if started.options is not None:  # mcp.json files: a newly trusted project's servers start
        from pi_tui.mcp.attach import reload_mcp

        choices = getattr(started.extensions.runner, "mcp_choices", None) if started.extensions else None
        problems += await asyncio.to_thread(
            reload_mcp, app.agent, started.options.cwd, trusted=bool(trusted), choices=choices
        )
        if app.agent.mcp is not None:
            done.append("mcp.json")
    if whole:
        try:
            await asyncio.to_thread(started.registry.reload)
            done.append("models.json")
            problems.extend(started.registry.problems)  # what of pi's models.json is left out
        except ConfigError as error:
            problems.append(f"models.json: {error} (the previous models stay)")
        started.registry.auth.reload()
        if started.registry.auth.problem:
            problems.append(f"auth.json: {started.registry.auth.problem} (no saved key is used)")
        else:
            done.append("auth.json")

    resources_done = ""
    if started.options is not None:
        from pi_tui.resources.expander import register_commands
        from pi_tui.startup import load_prompt_resources

        expander = await asyncio.to_thread(
            load_prompt_resources,
            started.options,
            bool(trusted),
            skill_commands=app.agent.settings.enable_skill_commands,
        )
        for command in [c for c in app.commands.all() if c.source in ("prompt", "skill")]:
            app.commands.unregister(command.name)
        app.agent.expander = expander
        problems += register_commands(app.commands, expander) + expander.problems
        counts = f"{len(expander.skills.skills)} skills, {len(expander.templates.templates)} templates"
        resources_done = f"skills and prompt templates: {counts}"

    if started.rebuild_prompt is not None:
        try:
            prompt, ttsr = await asyncio.to_thread(started.rebuild_prompt, settings)
        except (OSError, ValueError) as error:
            problems.append(f"context files and rules: {error} (the previous system prompt stays)")
        else:
            app.agent.system_prompt = prompt
            app.agent.set_ttsr(ttsr)
            loaded = loaded_summary(started, app.cwd)
            app.set_loaded(loaded)
            found = [item.split(" (")[0] for item in loaded]  # without the header's hint
            done.append(f"context files and rules: {', '.join(found) if found else 'none found'}")

    if resources_done:
        done.append(resources_done)
    bridge = app.extension_bridge
    if whole and bridge is not None and bridge.runner.sources:
        await bridge.runner.reload()  # failures are said by the runner, one line each
        done.append(f"extensions: {len(bridge.runner.extensions)} of {len(bridge.runner.sources)} loaded")

    if started.options is not None:
        from pi_tui.secrets.active import current_setup
        from pi_tui.startup import install_secrets

        problems += [
            f"secrets: {line}" for line in install_secrets(settings, started.options, started.registry)
        ]
        setup = current_setup()
        count = len(setup.obfuscator.plain) + len(setup.obfuscator.patterns) if setup else 0
        done.append(f"secrets: {count} values and patterns")
    if whole:
        problems += [f"keybindings: {line}" for line in app.reload_keybindings()]
        done.append("keybindings")
    theme = settings.theme or app.pi_theme_name
    problems += [f"theme: {line}" for line in app.switch_theme(theme)]
    done.append(f"theme: {theme}")

    app.refresh_footer()
    return done, problems


# --- /trust ----------------------------------------------------------------------------------------

TRUST_COMMAND_CHOICES = [
    ("trusted", "Trust this folder (saved; its resources load now)"),
    ("never", "Never trust this folder (saved; takes effect at the next start)"),
    ("forget", "Forget this folder's decision (ask again next time)"),
]
TRUST_DECISIONS: dict[str, Decision | None] = {"trusted": "trusted", "never": "never", "forget": None}
"""What each /trust choice saves (None: the folder's own entry is forgotten)."""


@COMMANDS.command("trust")
async def trust_command(app: CommandHost, args: str) -> None:
    """pi's ``/trust``: what this folder hands us, what is saved for it, and a new decision for
    future runs; trusting loads the project's resources at once."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.project_trust import protected_resources
    from pi_tui.config.trust_store import TrustError, TrustStore
    from pi_tui.tui.screens.prompts import ChoiceMenu

    started = app.started
    trust = started.trust if started is not None else None
    if trust is None:
        app.say("The session has not started yet.", "warning")
        return
    if app.busy:
        app.say("Wait for the current response to finish before changing trust.", "warning")
        return
    trust.refresh()
    store = TrustStore(agent_dir())
    entry = store.entry(trust.cwd)
    if entry is None:
        saved = "nothing saved"
    else:
        through = "" if Path(entry.folder) == trust.cwd else f" (through {entry.folder})"
        saved = f"saved: {'trusted' if entry.decision == 'trusted' else 'never'}{through}"
    found = ", ".join(protected_resources(trust.cwd, paths=True)) or "nothing that needs trust"
    now = "loaded" if trust.trusted else "not loaded"
    menu = ChoiceMenu(
        "Project trust for this folder",
        TRUST_COMMAND_CHOICES,
        message=f"{trust.cwd}\n{found}; {now} in this run; {saved} in {store.path}.",
    )
    answer = await app.push_screen_wait(menu)
    if answer is None:
        return
    try:
        store.decide(trust.cwd, TRUST_DECISIONS[answer])
    except TrustError as error:
        app.say(str(error), "error")
        return
    if answer == "forget":
        app.say(f"Forgot the decision for {trust.cwd}; pi-tui decides again at the next start.")
    elif answer == "never":
        later = " (what is loaded stays until pi-tui restarts)" if trust.trusted else ""
        app.say(f"{trust.cwd} will not be trusted{later}.")
    elif trust.trusted:
        app.say(f"{trust.cwd} is trusted, and its resources are loaded.")
    else:
        trust.grant()
        done, problems = await load_trusted_project(app)
        app.say(reload_summary(f"Trusted {trust.cwd}; loaded", done))
        for problem in problems:
            app.say(problem.splitlines()[0], "warning")


async def load_trusted_project(app: CommandHost) -> tuple[list[str], list[str]]:
    """The folder was just trusted mid-session: its extensions join the runner (all of them are
    restarted, as /reload does) and its settings, skills, prompts and system prompt load."""
    from pi_tui.config.extension_sources import discover_extensions
    from pi_tui.config.paths import agent_dir

    options = app.started.options if app.started is not None else None
    bridge = app.extension_bridge
    extensions: list[str] = []
    if bridge is not None and options is not None:
        found = discover_extensions(
            options.cwd, agent_dir(), options.extensions, no_extensions=options.no_extensions
        ).untrusted()
        fresh = [source for source in found if source not in bridge.runner.sources]
        if fresh:
            bridge.runner.sources.extend(fresh)
            await bridge.runner.reload()
            extensions = [f"extensions: {', '.join(source.name for source in fresh)}"]
    done, problems = await reload_resources(app, whole=False)
    return extensions + done, problems


# --- /extensions ------------------------------------------------------------------------------------

ORIGINS = {
    "cli": "-e",
    "settings": "settings.json",
    "user": "agent dir",
    "project-settings": "project settings",
    "project": "project",
}


@COMMANDS.command("extensions")
async def list_extensions(app: CommandHost, args: str) -> None:
    """Every extension: where it came from, what it registered, what it listens to."""
    bridge = app.extension_bridge
    runner = bridge.runner if bridge is not None else None
    if runner is None or (not runner.extensions and not runner.problems):
        app.say(
            "No extensions loaded. Put a .py file with activate(pi) in "
            f"{app.agent_dir / 'extensions'} (or .agent/extensions here), or pass -e FILE."
        )
        return
    lines: list[str] = []
    for loaded in runner.extensions:
        origin = ORIGINS.get(loaded.source.origin, loaded.source.origin)
        lines.append(f"{loaded.name} ({origin}: {loaded.source.entry})")
        parts = [
            ("commands", [f"/{name}" for name in loaded.commands]),
            ("tools", loaded.tools),
            ("events", loaded.events),
            ("keys", loaded.shortcuts),
            ("renderers", loaded.renderers),
        ]
        shown = [f"{what}: {', '.join(items)}" for what, items in parts if items]
        lines.append("  " + (" · ".join(shown) if shown else "registers nothing"))
    if runner.problems:
        lines.append("")
        lines.append("Not loaded:")
        lines += [f"  {problem}" for problem in runner.problems]
    app.say("\n".join(lines), title=f"Extensions ({len(runner.extensions)} loaded)", fold=True)


# --- /changelog -------------------------------------------------------------------------------------


def changelog_text() -> str | None:
    """The packaged CHANGELOG.md (installed with pi-tui), or None when it cannot be read."""
    try:
        return resources.files("pi_tui").joinpath("CHANGELOG.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def changelog_entries(text: str) -> list[str]:
    """The ``## [x.y.z]`` sections of a changelog, in file order (newest first), each with its
    heading; anything before the first version heading (the title) is left out, as pi does."""
    entries: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            if current:
                entries.append("\n".join(current).strip())
            current = [line] if _VERSION_HEADING.match(line) else None
        elif current is not None:
            current.append(line)
    if current:
        entries.append("\n".join(current).strip())
    return entries


@COMMANDS.command("changelog")
async def changelog(app: CommandHost, args: str) -> None:
    text = changelog_text()
    entries = changelog_entries(text) if text is not None else []
    body = "\n\n".join(reversed(entries)) if entries else "No changelog entries found."
    app.say(body, title="What's New", markdown=True)
