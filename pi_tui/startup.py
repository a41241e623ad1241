"""From command-line options to a ready AgentSession: settings, session file, model, tools, prompt.

Every user mistake here (unknown model, bad models.json, unreadable session, a session id
taken) is a :class:`StartupError` with one clear line; the CLI prints it and exits 2. A tool
name nothing provides is left out with a warning, as pi 1.x leaves it out (silently there).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.session import AgentSession
from pi_tui.agent.system_prompt import build_system_prompt
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.scoped_models import resolve_scope
from pi_tui.ai.thinking import clamp_level
from pi_tui.ai.types import Model, StreamOptions
from pi_tui.checkpoints.history import file_history_for
from pi_tui.config.paths import session_dir_for_cwd
from pi_tui.config.settings import Settings, SettingsError, load_settings
from pi_tui.mcp.attach import McpChoices, is_mcp_tool_name
from pi_tui.messages import THINKING_LEVELS
from pi_tui.session import SessionError, SessionInfo, SessionManager
from pi_tui.session.info import recency_key
from pi_tui.session.listing import list_all_sessions, list_sessions
from pi_tui.start_options import StartOptions
from pi_tui.tools.name_patterns import name_matcher

if TYPE_CHECKING:
    from pi_tui.tools.base import AgentTool

__all__ = ["StartOptions", "Started", "StartupError", "start"]


class StartupError(Exception):
    """A problem with what the user asked for; the message is shown as is."""


@dataclass(slots=True)
class Started:
    agent: AgentSession
    registry: ModelRegistry
    settings: Settings
    notice: str | None
    """Something the user should be told at startup (e.g. "using the offline demo model")."""
    rebuild_prompt: Callable[[Settings], tuple[str, Any]] | None = None
    """``/reload``: the system prompt (context files, rules) and TTSR coordinator made again,
    from the same options as at start and the given settings."""
    options: StartOptions | None = None
    scoped_models: list[Any] = field(default_factory=list)
    """The models Ctrl+P cycles (--models, else the enabledModels setting), in order."""
    extensions: Any = None
    """The :class:`~pi_tui.extensions.setup.ExtensionSetup` (the runner and what to say)."""
    trust: Any = None
    """This run's :class:`~pi_tui.config.project_trust.ProjectTrust` (what of the project
    folder loads; the interactive mode may grant it later)."""


def install_secrets(settings: Settings, options: StartOptions, registry: ModelRegistry) -> list[str]:
    """Gather this run's secrets and put them where requests and tool calls pass (again after
    /settings or /reload); returns the problems (a bad secrets.yml line, an unknown pattern)."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.secrets.active import install
    from pi_tui.secrets.sources import build_secrets

    setup = build_secrets(settings, options.cwd, agent_dir(), registry, options.api_key)
    install(setup)
    return setup.problems


def start(options: StartOptions, manager: SessionManager | None = None) -> Started:
    """Everything the options ask for; ``manager`` is a session already opened by the caller
    (the server opens files itself, to open one another process writes read-only)."""
    from pi_tui.ai.http import apply_http_proxy, prepare_tls
    from pi_tui.config.project_trust import decide_trust

    prepare_tls()  # in a thread, while the session is read
    trust = decide_trust(options.cwd, options.approve, interactive=options.interactive)
    mcp, mcp_lines = start_mcp_servers(options, trust.trusted)  # they connect while we go on
    try:
        settings = load_settings(options.cwd, project=trust.trusted)
    except SettingsError as error:
        raise StartupError(str(error)) from None
    apply_http_proxy(settings.http_proxy)  # user settings only; before any HTTP client
    try:
        registry = ModelRegistry()
    except ConfigError as error:
        raise StartupError(str(error)) from None
    extensions = _load_extensions(registry, options, trust)  # before the model: they may add providers
    manager = manager if manager is not None else open_session(options)
    if options.name is not None and options.name.strip():
        manager.append_session_info(options.name)  # -n/--name: the same entry /name writes
    model, thinking, notice = choose_model(options, registry, settings, manager)
    thinking = clamp_level(model, thinking)  # what runs on this model (--thinking max: maybe high)
    trust_lines = [*trust.problems, trust.skip_line(), *settings.notes]
    session_lines = (
        continuing_notice(options, manager),
        new_session_id_notice(options, manager),
        shared_id_notice(options),
    )
    for line in (*registry.problems, *trust_lines, *session_lines):
        if line:
            notice = f"{notice}\n{line}" if notice else line
    try:
        registry.request_options(model, cli_key=options.api_key)  # fail now, not mid-run
    except ConfigError as error:
        manager.close()
        line = str(error)
        if line.startswith("No API key"):  # not for an expired login, a missing endpoint, ...
            line += (
                ". (With no provider chosen and no key anywhere, the interactive mode uses the "
                "offline demo model instead.)"
            )
        raise StartupError(line) from None
    for problem in install_secrets(settings, options, registry):
        print(f"pi-tui: warning: {problem}", file=sys.stderr)
    selection = select_tools(options, settings, frozenset(extensions.runner.tools))
    tools = choose_tools(options, frozenset(extensions.runner.tools), selection)
    if selection.unknown:
        warning = unknown_tools_line(selection.unknown, frozenset(extensions.runner.tools))
        notice = f"{notice}\n{warning}" if notice else warning
    expander = load_prompt_resources(options, trust.trusted, skill_commands=settings.enable_skill_commands)
    holder: list[AgentSession] = []

    def rebuild_prompt(chosen: Settings) -> tuple[str, Any]:
        from pi_tui.agent.system_prompt import prompt_files
        from pi_tui.resources.skills import skills_prompt_section

        ttsr, rule_sections = load_rules(options.cwd, chosen)
        skills = (holder[0].expander if holder and holder[0].expander else expander).skills.skills
        rule_sections = [*rule_sections, skills_prompt_section(skills)]
        custom, append = prompt_files(  # trust.trusted now: the user may have granted it since
            Path(options.cwd),
            trust.trusted,
            _file_or_text(options.system_prompt),
            _appended_prompt(options.append_system_prompt),
        )
        prompt = build_system_prompt(
            Path(options.cwd),
            tools,
            custom=custom,
            append=append,
            extra_sections=rule_sections,
            with_context_files=not options.no_context_files,
        )
        return prompt, ttsr

    prompt, ttsr = rebuild_prompt(settings)
    retry = settings.retry

    def request_options(chosen: Model) -> StreamOptions:
        # The agent's *current* session: new/switch/fork replace it after startup.
        base = StreamOptions(
            max_retries=retry.max_retries if retry.enabled else 0,
            base_delay=retry.base_delay_ms / 1000,
            session_id=holder[0].manager.session_id if holder else manager.session_id,
            thinking_budgets=settings.thinking_budgets.model_dump(exclude_none=True),
        )
        return registry.request_options(chosen, base, cli_key=options.api_key)

    agent = AgentSession(
        manager,
        model,
        tools=tools,
        system_prompt=prompt,
        thinking_level=thinking,
        settings=settings,
        request_options=request_options,
        cwd=options.cwd,
        ttsr=ttsr,
    )
    holder.append(agent)
    on = not (options.no_checkpoints or options.no_session)
    agent.files.history = history = file_history_for(options.cwd, settings, enabled=on)
    if history is not None:
        history.warm_up(manager.session_id)
    agent.loadout_pool = loadout_pool(options, tools, selection)
    if mcp is not None:
        agent.mcp = mcp
        mcp.loaded_names = agent.mcp_loaded_names
    for line in mcp_lines:
        notice = f"{notice}\n{line}" if notice else line
    agent.expander = expander
    if expander.problems:
        lines = "\n".join(expander.problems)
        notice = f"{notice}\n{lines}" if notice else lines
    extensions.runner.mcp_choices = McpChoices(
        not options.no_mcp, options.tools, options.exclude_tools, options.no_tools
    )  # for a manager an extension's server needs later
    extensions.runner.bind(agent)
    if selection.allow_list:  # --tools' names cover theirs too; --no-tools alone is an empty list
        extensions.runner.set_active_tools(selection.names)
    elif options.exclude_tools:  # -xt: the extensions' tools too, after everything else
        excluded = name_matcher(options.exclude_tools)
        extensions.runner.set_active_tools([tool.name for tool in agent.tools if not excluded(tool.name)])
    patterns = options.models if options.models is not None else settings.enabled_models
    scope = resolve_scope(registry, patterns or [])
    if scope.unmatched:
        unmatched = ", ".join(scope.unmatched)
        warning = f"No usable model matches {unmatched} (of --models / enabledModels); Ctrl+P skips it."
        notice = f"{notice}\n{warning}" if notice else warning
    return Started(
        agent, registry, settings, notice, rebuild_prompt, options, scope.models, extensions, trust
    )


def start_mcp_servers(options: StartOptions, trusted: bool) -> tuple[Any, list[str]]:
    """The session's MCP manager, already connecting (None under ``--no-mcp`` or with no
    server configured), and the configuration problems to show once."""
    if options.no_mcp:
        return None, []
    from pi_tui.mcp.attach import start_mcp

    return start_mcp(
        options.cwd,
        trusted=trusted,
        tools=options.tools,
        exclude=options.exclude_tools,
        no_tools=options.no_tools,
    )


def load_prompt_resources(
    options: StartOptions, project_trusted: bool, *, skill_commands: bool = True
) -> Any:
    """The skills and prompt templates for ``options`` (a PromptExpander); the project's only
    when ``project_trusted``."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.resources.expander import PromptExpander
    from pi_tui.resources.skills import discover_skills
    from pi_tui.resources.templates import discover_templates

    folder = agent_dir()
    return PromptExpander(
        discover_skills(
            options.cwd,
            folder,
            options.skills,
            no_skills=options.no_skills,
            project_trusted=project_trusted,
        ),
        discover_templates(
            options.cwd,
            folder,
            options.prompt_templates,
            no_templates=options.no_prompt_templates,
            project_trusted=project_trusted,
        ),
        skill_commands=skill_commands,
    )


def _load_extensions(registry: ModelRegistry, options: StartOptions, trust: Any) -> Any:
    """The extensions allowed to run here (``trust``: this run's ProjectTrust), loaded; their
    flags read from the command line."""
    from pi_tui.extensions.setup import ExtensionSetupError, setup_extensions

    try:
        setup = setup_extensions(
            registry,
            options.cwd,
            options.extensions,
            no_extensions=options.no_extensions,
            trust=trust,
        )
    except ExtensionSetupError as error:
        raise StartupError(str(error)) from None
    leftover = setup.runner.take_flags(options.extension_flags or [])
    if leftover:
        raise StartupError(f"unrecognized arguments: {leftover[0]} (see pi-tui --help)")
    return setup


def discover_and_bucket(cwd: str, settings: Settings, report: Any = None) -> tuple[Any, list[Any]]:
    """All rules found for ``cwd``, registered in a fresh TTSR manager and bucketed.

    ``report`` (a DiscoveryReport) collects shadowed duplicates and unreadable files.
    """
    from pi_tui.ttsr.manager import TtsrManager
    from pi_tui.ttsr.rules import bucket_rules, discover_rules

    manager = TtsrManager(settings.ttsr, Path(cwd))
    rules = discover_rules(Path(cwd), settings.ttsr, report=report)
    return manager, bucket_rules(rules, manager, settings.ttsr)


def load_rules(cwd: str, settings: Settings) -> tuple[Any, list[str]]:
    """The TTSR coordinator (None when no rule watches the stream) and the rule sections for
    the system prompt (always-apply rules and the rulebook)."""
    from pi_tui.ttsr.coordinator import TtsrCoordinator
    from pi_tui.ttsr.rules import system_prompt_sections

    manager, bucketed = discover_and_bucket(cwd, settings)
    sections = system_prompt_sections(bucketed)
    if not any(item.bucket == "ttsr" for item in bucketed):
        return None, sections
    return TtsrCoordinator(manager, Path(cwd), context_mode=settings.ttsr.context_mode), sections


def open_session(options: StartOptions) -> SessionManager:
    folder = Path(options.session_dir) if options.session_dir else None
    try:
        if options.no_session:
            return SessionManager.in_memory(options.cwd)
        wanted = options.session_id
        existing = session_with_id(wanted, options) if wanted is not None else None
        if options.fork:
            if existing is not None:
                raise StartupError(f'This folder already has a session with the id "{wanted}": {existing}')
            source = find_session(options.fork, options)
            manager = SessionManager.fork_from(source, options.cwd, folder, session_id=wanted)
        elif options.session:
            manager = SessionManager.open(find_session(options.session, options), folder)
        elif options.continue_recent:
            manager = SessionManager.continue_recent(options.cwd, folder)
        elif existing is not None:
            manager = SessionManager.open(existing, folder)
        else:
            manager = SessionManager.create(options.cwd, folder, session_id=wanted)
        manager.check_writable()  # a new session's folder: said now, not at the first reply
        return manager
    except SessionError as error:
        raise StartupError(str(error)) from None


def continuing_notice(options: StartOptions, manager: SessionManager) -> str | None:
    """``-c``: which file is continued, so no one wonders which session it is.

    The interactive mode always says it; print, json and rpc modes only when the file is in
    pi's folder, the case a script's author may not expect (their stderr stays as quiet as pi's
    otherwise)."""
    path = manager.session_file
    if not options.continue_recent or path is None or not manager.is_persisted:
        return None
    from pi_tui.config.pi_folder import session_origin

    from_pi = session_origin(path)
    if not (options.interactive or from_pi):
        return None
    whose = " (pi's folder)" if from_pi else ""
    return f"Continuing {path}{whose}"


SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
"""What ``--session-id`` accepts (pi's rule): letters, digits, ``.``, ``_`` and ``-``, starting
and ending with a letter or digit, so the id is safe in the session's file name."""


def session_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a ``--session-id``, or None."""
    if SESSION_ID_PATTERN.fullmatch(value):
        return None
    return (
        f"--session-id {value!r}: an id holds only letters, digits, '.', '_' and '-', and starts "
        "and ends with a letter or digit"
    )


def session_with_id(session_id: str, options: StartOptions) -> Path | None:
    """The file of this folder's session whose id is exactly ``session_id`` (``--session-id``
    reopens it), or None; the newest (as ``-c`` ranks) when an imported copy shares the id."""
    folder = session_dir_for_cwd(options.cwd, options.session_dir)
    paths = [info.path for info in list_sessions(folder, cwd=options.cwd) if info.id == session_id]
    return max(paths, key=recency_key, default=None)


def new_session_id_notice(options: StartOptions, manager: SessionManager) -> str | None:
    """``--session-id`` made a new session: said, so a typo in the id is noticed (as pi warns)."""
    if options.session_id is None or options.fork or len(manager):
        return None
    return f'No session of this folder has the id "{options.session_id}"; a new one is created with it.'


def find_session(reference: str, options: StartOptions) -> Path:
    """A session file path, or the session of this folder (then any folder) whose id starts so."""
    return resolve_session(reference, options)[0]


def shared_id_notice(options: StartOptions) -> str | None:
    """``--session ID`` / ``--fork ID`` opened one of several files sharing that id (an
    ``--export x.jsonl`` keeps the id, and ``/import`` of it makes a twin, as in pi): which one."""
    reference = options.session or options.fork
    if not reference:
        return None
    try:
        return resolve_session(reference, options)[1]
    except StartupError:
        return None


def resolve_session(reference: str, options: StartOptions) -> tuple[Path, str | None]:
    """:func:`find_session`'s file, and a line naming it when several files share its id.

    Like pi: this project's sessions first (an exact id before a prefix), then everyone's. pi
    takes whichever file of a shared id the folder listing gives first; here it is this
    project's newest (by the order ``-c`` and ``--list-sessions`` use), and it is said.
    """
    path = Path(reference).expanduser()
    if path.suffix == ".jsonl" or os.sep in reference or path.exists():
        if not path.is_file():
            raise StartupError(f"Session file not found: {reference}")
        return path, None
    folder = session_dir_for_cwd(options.cwd, options.session_dir)
    # This project's sessions (pi's folder's too) first, then everyone's; in a --session-dir
    # folder: this project's, then the whole folder (as pi searches).
    wider: Callable[[], list[SessionInfo]] = (
        (lambda: list_sessions(folder)) if options.session_dir else list_all_sessions
    )
    searches: tuple[Callable[[], list[SessionInfo]], ...] = (
        lambda: list_sessions(folder, cwd=options.cwd),
        wider,
    )
    for listed in searches:
        candidates = listed()
        matches = [info for info in candidates if info.id == reference] or [
            info for info in candidates if info.id.startswith(reference)
        ]
        ids = {info.id for info in matches}
        if len(ids) > 1:
            raise StartupError(
                f'Session id prefix "{reference}" matches {len(ids)} sessions; give more of it'
            )
        if matches:
            chosen = max((info.path for info in matches), key=recency_key)
            if len(matches) == 1:
                return chosen, None
            return chosen, (
                f'{len(matches)} session files have the id "{matches[0].id}"; opened the newest, '
                f"{chosen} (give a file path to open another)"
            )
    raise StartupError(f'No session found for "{reference}" (give a file path or the start of a session id)')


DEFAULT_THINKING_LEVEL = "medium"
"""The level a new session starts at when neither the command line, ``modelThinkingLevels`` nor
``defaultThinkingLevel`` names one: pi's default (0.73 and 1.5 alike); a model without
reasoning is clamped to "off" below, as pi clamps it."""

NO_MODEL_LINE = (
    "No API key found and no model configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or another "
    "provider's key, pass --api-key, run `pi-tui auth login`, or add a provider to models.json "
    "(--model offline/demo runs the offline demo)"
)
"""Print, json and rpc modes with nothing to talk to (pi exits 1 with "No API key found"; a
mistake the user fixes is exit 2 here). The offline demo answers such a script only by name."""


def choose_model(
    options: StartOptions, registry: ModelRegistry, settings: Settings, manager: SessionManager
) -> tuple[Model, str, str | None]:
    """The model and thinking level to start with, and a notice for the user if any."""
    if options.thinking is not None and options.thinking not in THINKING_LEVELS:
        raise StartupError(
            f'Unknown thinking level "{options.thinking}"; use one of {", ".join(THINKING_LEVELS)}'
        )
    context = manager.build_session_settings()
    notice = None
    try:
        if options.model is None and options.provider is None and context.model is not None:
            # Resuming: keep the session's model when we know it.
            match = registry.find(f"{context.model.provider}/{context.model.model_id}")
            if match is not None and match.model.provider == "offline" and not options.demo_fallback:
                match = None  # a script continuing a demo session names the demo, or gets a real model
            if match is not None and (
                not registry.needs_key(match.model.provider) or registry.has_key(match.model.provider)
            ):
                thinking = options.thinking or session_thinking(manager, context.thinking_level, settings)
                return match.model, thinking, None
            if match is not None:  # e.g. an imported Claude Code session on a machine without that key
                notice = (
                    f"This session used {match.model.provider}/{match.model.id}, which has no API key here; "
                    "it continues with the default model instead (/model changes it)."
                )
        choice = registry.default_model(settings, options.provider, options.model)
    except ConfigError as error:
        raise StartupError(str(error)) from None
    unreadable = registry.auth.problem  # a broken auth.json: its keys and logins are not "none"
    if choice.source == "offline" and not options.demo_fallback:
        if unreadable:
            raise StartupError(f"Cannot read the saved credentials: {unreadable}")
        raise StartupError(NO_MODEL_LINE)
    if choice.source == "offline":
        notice = (f"{notice}\n" if notice else "") + (
            "No model is configured and no API key was found, so pi-tui is using the offline demo "
            "model (offline/demo). Type /login to sign in to a subscription (Claude Pro/Max, "
            "ChatGPT, GitHub Copilot...) or save an API key, or set ANTHROPIC_API_KEY, "
            "OPENAI_API_KEY or GEMINI_API_KEY, pass --api-key, or add a provider to models.json."
        )
    if unreadable:
        notice = (f"{notice}\n" if notice else "") + (
            f"Saved credentials were not read: {unreadable}. Fix or remove the file: until then its "
            "keys and logins are not used."
        )
    if choice.warning:
        notice = choice.warning if notice is None else f"{choice.warning}\n{notice}"
    per_model = settings.model_thinking_levels.get(f"{choice.model.provider}/{choice.model.id}")
    default_level = per_model or settings.default_thinking_level or DEFAULT_THINKING_LEVEL
    thinking = (
        options.thinking
        or choice.thinking
        or (session_thinking(manager, context.thinking_level, settings) if len(manager) else default_level)
    )
    if not choice.model.reasoning:
        thinking = "off" if options.thinking is None else thinking
    return choice.model, thinking, notice


def session_thinking(manager: SessionManager, level: str, settings: Settings) -> str:
    """The level a resumed session continues at: the last one it recorded, else (a file that
    never recorded one, e.g. written by another program) ``defaultThinkingLevel`` or pi's
    default, as pi 1.5.2 does. Raw entries are scanned (every branch), not the typed branch:
    a long session opens without typing each entry."""
    if any(raw.get("type") == "thinking_level_change" for raw in manager.iter_raw_entries()):
        return level
    return settings.default_thinking_level or DEFAULT_THINKING_LEVEL


@dataclass(slots=True)
class ToolSelection:
    """The tools to start with, by name, as pi 1.x chooses them (see :func:`select_tools`)."""

    names: list[str]
    """Built-in and extension tool names, in order, with ``--exclude-tools`` applied."""
    allow_list: bool
    """``--tools`` gave plain names or patterns: extension tools not named are off too."""
    unknown: list[str] = field(default_factory=list)
    """Names no tool has (``--tools``, ``defaultTools``): left out with a warning."""
    excluded: list[str] = field(default_factory=list)
    """``--exclude-tools`` entries (names or patterns)."""


def is_tool_modifier(entry: str) -> bool:
    """``+name`` or ``-name``: changes the default selection instead of replacing it."""
    return entry[:1] in ("+", "-")


def tool_list_problem(entries: list[str]) -> str | None:
    """Why a ``--tools`` list cannot be used (pi's two rules), or None: plain names and
    ``+``/``-`` entries do not mix, and ``+``/``-`` take exact names, not patterns."""
    modifiers = [entry for entry in entries if is_tool_modifier(entry)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "--tools: plain tool names cannot be mixed with +name or -name entries"
    pattern = next((entry for entry in modifiers if "*" in entry), None)
    if pattern is not None:
        return f"--tools: +name and -name take exact tool names, not patterns: {pattern}"
    return None


def apply_tool_modifiers(base: list[str], entries: list[str]) -> list[str]:
    """``base`` with each ``+name`` added (at the end, once) and each ``-name`` removed, in order;
    plain entries are skipped."""
    tools = list(base)
    for entry in entries:
        name = entry[1:]
        if not is_tool_modifier(entry) or not name:
            continue
        if entry.startswith("+") and name not in tools:
            tools.append(name)
        elif entry.startswith("-") and name in tools:
            tools.remove(name)
    return tools


def resolve_default_tools(entries: list[str] | None) -> list[str]:
    """The ``defaultTools`` setting as a list of names: absent is read, bash, edit, write; plain
    names replace that, then ``+``/``-`` entries apply in order; ``[]`` is no built-in tool."""
    from pi_tui.tools import DEFAULT_TOOL_NAMES

    if entries is None:
        return list(DEFAULT_TOOL_NAMES)
    plain = [entry for entry in entries if not is_tool_modifier(entry)]
    base = plain if plain or not entries else list(DEFAULT_TOOL_NAMES)
    return apply_tool_modifiers(base, entries)


def select_tools(
    options: StartOptions, settings: Settings, extension_tools: frozenset[str] = frozenset()
) -> ToolSelection:
    """pi 1.x's order: the default selection (``defaultTools``, else read/bash/edit/write; none
    with ``--no-builtin-tools`` or ``--no-tools``); ``--tools`` with plain names or ``*`` patterns
    replaces it, with only ``+name``/``-name`` entries changes it (under ``--no-tools`` either is
    the whole list, extensions' tools included); ``--exclude-tools`` comes last. Names no tool
    has are left out and reported (pi drops them silently; a typo deserves a word)."""
    from pi_tui.tools import ALL_TOOL_NAMES

    known = [*ALL_TOOL_NAMES, *sorted(name for name in extension_tools if name not in ALL_TOOL_NAMES)]
    excluded = list(options.exclude_tools or [])
    entries = options.tools
    if options.no_tools and not entries:
        return ToolSelection([], True, excluded=excluded)
    off = options.no_tools or options.no_builtin_tools
    defaults = [] if off else resolve_default_tools(settings.default_tools)
    modifiers = bool(entries) and all(map(is_tool_modifier, entries or []))
    # pi 1.x: under --no-tools, what --tools names (plain or +name) is every tool there is
    allow_list = entries is not None and (not modifiers or options.no_tools)
    chosen: list[str] = []
    if entries is None or modifiers:
        chosen = apply_tool_modifiers(defaults, entries or [])
    else:
        for entry in entries:
            if "*" in entry:
                matches = name_matcher([entry])
                chosen.extend(name for name in known if matches(name) and name not in chosen)
            elif entry not in chosen:
                chosen.append(entry)
    unknown = [name for name in chosen if name not in known and not is_mcp_tool_name(name)]
    drop = name_matcher(excluded)
    names = [name for name in chosen if name in known and not drop(name)]
    return ToolSelection(names, allow_list, unknown, excluded)


def unknown_tools_line(unknown: list[str], extension_tools: frozenset[str] = frozenset()) -> str:
    """The warning for tool names nothing provides."""
    from pi_tui.tools import ALL_TOOL_NAMES

    known = ", ".join([*ALL_TOOL_NAMES, *sorted(extension_tools - set(ALL_TOOL_NAMES))])
    plural = "s" if len(unknown) > 1 else ""
    return f"Unknown tool{plural} left out: {', '.join(unknown)} (known tools: {known})"


def choose_tools(
    options: StartOptions,
    extension_tools: frozenset[str] = frozenset(),
    selection: ToolSelection | None = None,
) -> list[AgentTool]:
    """The built-in tools to start with (``selection`` is :func:`select_tools`'s answer; made
    from the options and default settings when not given). Extension tools it names are the
    extensions' to provide."""
    from pi_tui.config.settings import Settings
    from pi_tui.tools import ALL_TOOL_NAMES, tools_by_name

    if selection is None:
        selection = select_tools(options, Settings(), extension_tools)
    return tools_by_name([name for name in selection.names if name in ALL_TOOL_NAMES], options.cwd)


def loadout_pool(
    options: StartOptions,
    tools: list[AgentTool],
    selection: ToolSelection | None = None,
) -> list[AgentTool]:
    """Built-in tools that are off but that a pi 1.x branch may switch on (its system messages
    declare a loadout): all the others, unless ``--tools`` / ``--no-tools`` chose the set; never
    one ``--exclude-tools`` switched off."""
    if options.no_tools or options.no_builtin_tools or (selection is not None and selection.allow_list):
        return []
    if selection is None and options.tools is not None:
        return []
    from pi_tui.tools import ALL_TOOL_NAMES, tools_by_name

    have = {tool.name for tool in tools}
    excluded = name_matcher(list(options.exclude_tools or []))
    names = [name for name in ALL_TOOL_NAMES if name not in have and not excluded(name)]
    return tools_by_name(names, options.cwd)


def _appended_prompt(values: str | list[str] | None) -> str | None:
    """``--append-system-prompt`` values (repeatable, as in pi 1.x), each text or a file's
    path, joined by blank lines."""
    if values is None or isinstance(values, str):
        return _file_or_text(values)
    parts = [_file_or_text(value) or "" for value in values]
    return "\n\n".join(parts) if parts else None


def _file_or_text(value: str | None) -> str | None:
    """``--system-prompt`` takes text, or the path of a file holding it (as pi does)."""
    if value is None:
        return None
    path = Path(value).expanduser()
    try:
        if len(value) < 4096 and path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value
