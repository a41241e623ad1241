"""The built-in slash commands of the interactive mode.

Each command is a coroutine ``(app, args)`` in this module's :data:`COMMANDS`, gathered with
the other command modules' by :mod:`pi_tui.tui.slash_registry`; the registry in
``pi_tui.commands`` names and describes them (completion, /hotkeys, the command palette and
rpc's ``get_commands`` read it). Commands talk to the user through ``app.say`` and never raise
for a user mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.ai.thinking import supported_levels
from pi_tui.tui.slash_base import CommandSet, needs_idle, started_parts

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""


@COMMANDS.command("quit")
async def quit_app(app: CommandHost, args: str) -> None:
    await app.shutdown()


@COMMANDS.command("new")
async def new_session(app: CommandHost, args: str) -> None:
    if not needs_idle(app, "starting a new session"):
        return
    from pi_tui.tui.navigation import session_ops

    if not (await session_ops(app).new_session()).cancelled:
        app.say("Started a new session.")


@COMMANDS.command("session")
async def session_info(app: CommandHost, args: str) -> None:
    from collections import Counter

    from pi_tui.tui.text_layout import label_value_rows, message_width
    from pi_tui.view.stats import UsageTotals, add_raw_usage, format_tokens

    manager = app.agent.manager
    raws = list(manager.iter_raw_entries())  # the file's dicts: no typed view of every entry
    totals = add_raw_usage(UsageTotals(), raws)
    roles = Counter(
        raw["message"].get("role")
        for raw in raws
        if raw.get("type") == "message" and isinstance(raw.get("message"), dict)
    )
    users, replies, results = roles["user"], roles["assistant"], roles["toolResult"]
    rows = [
        ("File:", str(manager.session_file or "(not saved: --no-session)")),
        ("ID:", manager.session_id),
    ]
    name = manager.get_session_name()
    if name:
        rows.append(("Name:", name))
    rows += [
        ("Entries:", f"{len(manager):,} ({users} prompts, {replies} replies, {results} tool results)"),
        ("Tokens:", f"{format_tokens(totals.input)} in, {format_tokens(totals.output)} out, "
         f"{format_tokens(totals.cache_read)} cache read, {format_tokens(totals.cache_write)} cache write"),
        ("Cost:", f"${totals.cost:.4f}"),
        ("Model:", f"{app.agent.model.provider}/{app.agent.model.id} (thinking {app.agent.thinking_level})"),
    ]  # fmt: skip
    # A long path or line continues under its value (a hanging indent), not at the left margin.
    app.say("\n".join(label_value_rows(rows, message_width(app), indent="")), title="Session", fold=True)


@COMMANDS.command("compact")
async def compact(app: CommandHost, args: str) -> None:
    if not needs_idle(app, "compacting"):
        return
    from pi_tui.agent.history import CompactionFailed

    async def work() -> None:
        try:
            result = await app.agent.compact(args or None)
        except CompactionFailed:
            return  # the compaction_end event already said why
        if result is None:
            app.say(_why_nothing_to_compact(app.agent))

    app.start_work(work())


def _why_nothing_to_compact(agent: Any) -> str:
    """Why /compact did nothing, with the numbers that decided it (pi only says "too small")."""
    branch = agent.manager.get_branch()
    if not any(entry.type == "message" for entry in branch):
        return "Nothing to compact (no messages yet)."
    if branch[-1].type == "compaction":
        return "Already compacted: nothing was said since the last compaction."
    keep = agent.compaction_settings().keep_recent_tokens
    tokens = agent.context_tokens()
    return (
        f"Nothing to compact: the conversation takes about {tokens:,} tokens, all within the newest "
        f"{keep:,} that compaction keeps (compaction.keepRecentTokens; lower it in /settings to "
        "compact sooner)."
    )


@COMMANDS.command("model")
async def model(app: CommandHost, args: str) -> None:
    from pi_tui.ai.scoped_models import available_models
    from pi_tui.ai.types import Model
    from pi_tui.tui.keybindings import display_key
    from pi_tui.tui.screens.model_picker import ModelPicker
    from pi_tui.tui.settings_control import save_default_model

    registry = started_parts(app).registry
    if args:
        match = registry.find(args)
        if match is None:
            app.say(f'No model matches "{args}". Ctrl+L lists them all.', "error")
            return
        _switch_model(app, match.model)
        if match.thinking:
            app.agent.set_thinking_level(match.thinking)
            app.refresh_footer()
        return
    models = available_models(registry)  # the offline demo only while no real model has a key
    if app.agent.model not in models:
        models.insert(0, app.agent.model)

    def chosen(picked: tuple[Model, bool] | None) -> None:
        if picked is None:
            return
        model, save = picked
        _switch_model(app, model)
        if save:  # pi 1.x: Ctrl+S makes it the default for new sessions (and the next start)
            save_default_model(app, model)

    save_keys = app.keys.bindings.get("models_save", ())
    save_key = display_key(save_keys[0]) if save_keys else "(unbound)"
    app.push_screen(ModelPicker(models, app.agent.model, save_key=save_key), chosen)


def _switch_model(app: CommandHost, picked: Any) -> None:
    if (picked.provider, picked.id) == (app.agent.model.provider, app.agent.model.id):
        return
    app.agent.set_model(picked)
    app.say(f"Model: {picked.provider}/{picked.id}")
    app.refresh_footer()


@COMMANDS.command("thinking")
async def thinking(app: CommandHost, args: str) -> None:
    agent = app.agent
    if not args:  # pi 1.x: the selector (Enter for this session, Ctrl+S saves it)
        await app.pick_thinking_level()
        return
    levels = supported_levels(agent.model)  # pi 1.x: only what this model has, for this session
    level = args.strip().lower()
    if level not in levels:
        app.say(f'Unknown thinking level "{args}" for {agent.model.id}; it has {", ".join(levels)}.', "error")
        return
    agent.set_thinking_level(level)
    app.say(f"Thinking level: {level}")
    app.refresh_footer()


def cycle_thinking(app: CommandHost) -> None:
    """Shift+Tab: the next thinking level the model supports."""
    agent = app.agent
    if not agent.model.reasoning:
        app.show_hint(f"{agent.model.id} does not support thinking")
        return
    levels = list(supported_levels(agent.model))  # xhigh / max only where the model has them
    current = agent.thinking_level
    level = levels[(levels.index(current) + 1) % len(levels)] if current in levels else levels[0]
    agent.set_thinking_level(level)  # this session only: pi 1.x saves a default with Ctrl+S
    app.refresh_footer()
    app.show_hint(f"Thinking level: {level}", 3)


@COMMANDS.command("copy")
async def copy(app: CommandHost, args: str) -> None:
    from pi_tui.tui.clipboard import copy_text

    text = app.last_answer_text()
    if text is None:
        app.say("There is no answer to copy yet.", "warning")
        return
    result = copy_text(text, app.copy_to_clipboard)
    app.say(result.message, "info" if result.ok else "error")


@COMMANDS.command("rules")
async def rules(app: CommandHost, args: str) -> None:
    from pi_tui.startup import discover_and_bucket
    from pi_tui.ttsr.rules import DiscoveryReport, format_rule_list

    report = DiscoveryReport()
    _manager, bucketed = discover_and_bucket(app.cwd, started_parts(app).settings, report)
    app.say(format_rule_list(bucketed, Path(app.cwd), report), title="Rules")


@COMMANDS.command("hotkeys")
async def hotkeys(app: CommandHost, args: str) -> None:
    from pi_tui.tui.keybindings import hotkeys_text
    from pi_tui.tui.text_layout import message_width

    app.say(hotkeys_text(app.keys.bindings, message_width(app)), title="Keys")


@COMMANDS.command("settings")
async def settings(app: CommandHost, args: str) -> None:
    from pi_tui.tui.screens.settings import SettingsScreen
    from pi_tui.tui.settings_rows import build_rows

    app.push_screen(SettingsScreen(build_rows(app.settings_view()), select=args or None))


@COMMANDS.command("scoped-models")
async def scoped_models(app: CommandHost, args: str) -> None:
    """pi's /scoped-models: turn models on or off for Ctrl+P, order them, save as enabledModels."""
    from pi_tui.ai.scoped_models import available_models
    from pi_tui.tui.screens.scoped_models import ScopedModelsScreen

    started = app.started
    assert started is not None
    registry = started.registry
    models = [f"{m.provider}/{m.id}" for m in available_models(registry)]
    enabled = [item.key for item in started.scoped_models]
    choice = await app.push_screen_wait(ScopedModelsScreen(models, enabled))
    if choice is None:
        return
    saved = app.set_scoped_models(choice.keys, save=choice.save)
    count = len(choice.keys)
    what = f"{count} model{'s' if count != 1 else ''}" if count else "every model with a key"
    app.say(f"Ctrl+P cycles {what}" + (" (saved as enabledModels)." if saved else " in this session."))


@COMMANDS.command("tree")
async def tree(app: CommandHost, args: str) -> None:
    from pi_tui.tui.navigation import open_tree

    await open_tree(app)


@COMMANDS.command("undo-restore")
async def undo_restore(app: CommandHost, args: str) -> None:
    """Bring back the project's files as they were before the last restore of a /tree move."""
    from pi_tui.tui.file_moves import undo_restore_command

    if needs_idle(app, "restoring files"):
        await undo_restore_command(app, args)


@COMMANDS.command("resume")
async def resume(app: CommandHost, args: str) -> None:
    """Pick a past session and continue in it (also what ``pi-tui -r`` opens at start)."""
    if not needs_idle(app, "switching sessions"):
        return

    from pi_tui.config.paths import session_dir_for_cwd
    from pi_tui.tui.screens.resume import ResumePicker

    current = app.agent.manager
    folder = current.session_dir or session_dir_for_cwd(app.cwd)
    picker = ResumePicker(folder, current=current, cwd=app.cwd)
    chosen = await app.push_screen_wait(picker)
    if chosen is None:
        return
    if picker.chosen is not None and picker.chosen.agent:  # another agent's transcript
        from pi_tui.tui.follow import open_transcript

        if needs_idle(app, "switching sessions"):
            await open_transcript(app, chosen)
        return
    own = app.agent.manager.session_file
    if own is not None and own.resolve() == chosen.resolve():
        app.say("Already in this session.")
        return
    if not needs_idle(app, "switching sessions"):
        return
    from pi_tui.agent.session_ops import SessionOpError
    from pi_tui.tui.navigation import session_ops

    try:  # the file is opened off the UI thread: it may be big, or need migrating
        await session_ops(app).switch_session(chosen)
    except SessionOpError as error:
        app.say(str(error), "error")


@COMMANDS.command("branch")
async def branch(app: CommandHost, args: str) -> None:
    if not needs_idle(app, "branching"):
        return
    from pi_tui.tui.navigation import branch_command

    await branch_command(app, args)


@COMMANDS.command("clone")
async def clone(app: CommandHost, args: str) -> None:
    if not needs_idle(app, "cloning"):
        return
    from pi_tui.tui.navigation import clone_command

    await clone_command(app, args)


@COMMANDS.command("label")
async def label(app: CommandHost, args: str) -> None:
    from pi_tui.tui.navigation import label_command

    await label_command(app, args)


@COMMANDS.command("name")
async def name(app: CommandHost, args: str) -> None:
    manager = app.agent.manager
    if not args:
        current = manager.get_session_name()
        app.say(
            f"Session name: {current}" if current else "This session has no name; set one with /name <name>."
        )
        return
    manager.append_session_info(args)
    manager.sync()
    app.refresh_footer()
    app.say(f"Session named “{args}”.")
