"""From command-line options to a ready AgentSession: settings, session file, model, tools, prompt.

Every user mistake here (unknown model, bad models.json, unreadable session, unknown tool) is a
:class:`StartupError` with one clear line; the CLI prints it and exits 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.agent.session import AgentSession
from pi_tui.agent.system_prompt import build_system_prompt
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.models import ENV_VARS, ModelRegistry
from pi_tui.ai.scoped_models import resolve_scope
from pi_tui.ai.thinking import clamp_level
from pi_tui.ai.types import Model, StreamOptions
from pi_tui.config.paths import session_dir_for_cwd
from pi_tui.config.settings import Settings, SettingsError, load_settings
from pi_tui.session import SessionError, SessionManager
from pi_tui.session.entries import THINKING_LEVELS
from pi_tui.session.listing import list_all_sessions, list_sessions
from pi_tui.start_options import StartOptions

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
    model, thinking, notice = choose_model(options, registry, settings, manager)
    thinking = clamp_level(model, thinking)  # what runs on this model (--thinking max: maybe high)
    trust_lines = [*trust.problems, trust.skip_line(), *settings.notes]
    for line in (*registry.problems, *trust_lines, continuing_notice(options, manager)):
        if line:
            notice = f"{notice}\n{line}" if notice else line
    try:
        registry.request_options(model, cli_key=options.api_key)  # fail now, not mid-run
    except ConfigError as error:
        manager.close()
        raise StartupError(
            f"{error}. (With no provider chosen and no key anywhere, pi-tui uses the offline demo "
            "model instead.)"
        ) from None
    for problem in install_secrets(settings, options, registry):
        print(f"pi-tui: warning: {problem}", file=sys.stderr)
    tools = choose_tools(options, frozenset(extensions.runner.tools))
    expander = load_prompt_resources(options, trust.trusted)
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
            _file_or_text(options.append_system_prompt),
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
    agent.loadout_pool = loadout_pool(options, tools)
    agent.expander = expander
    if expander.problems:
        lines = "\n".join(expander.problems)
        notice = f"{notice}\n{lines}" if notice else lines
    extensions.runner.bind(agent)
    if options.no_tools:
        extensions.runner.set_active_tools([])  # --no-tools: extensions' tools too
    elif options.tools is not None:
        extensions.runner.set_active_tools(options.tools)  # the allow-list covers theirs too
    patterns = options.models if options.models is not None else settings.enabled_models
    scope = resolve_scope(registry, patterns or [])
    if scope.unmatched:
        unmatched = ", ".join(scope.unmatched)
        warning = f"No usable model matches {unmatched} (of --models / enabledModels); Ctrl+P skips it."
        notice = f"{notice}\n{warning}" if notice else warning
    return Started(
        agent, registry, settings, notice, rebuild_prompt, options, scope.models, extensions, trust
    )


def load_prompt_resources(options: StartOptions, project_trusted: bool) -> Any:
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
        if options.fork:
            manager = SessionManager.fork_from(find_session(options.fork, options), options.cwd, folder)
        elif options.session:
            manager = SessionManager.open(find_session(options.session, options), folder)
        elif options.continue_recent:
            manager = SessionManager.continue_recent(options.cwd, folder)
        else:
            manager = SessionManager.create(options.cwd, folder)
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


def find_session(reference: str, options: StartOptions) -> Path:
    """A session file path, or the session of this folder (then any folder) whose id starts so."""
    path = Path(reference).expanduser()
    if path.suffix == ".jsonl" or os.sep in reference or path.exists():
        if not path.is_file():
            raise StartupError(f"Session file not found: {reference}")
        return path
    folder = session_dir_for_cwd(options.cwd, options.session_dir)
    # This project's sessions (pi's folder's too) first, then everyone's; in a --session-dir
    # folder: this project's, then the whole folder (as pi searches).
    wider = (lambda: list_sessions(folder)) if options.session_dir else list_all_sessions
    for listed in (lambda: list_sessions(folder, cwd=options.cwd), wider):
        candidates = listed()
        matches = [info.path for info in candidates if info.id.startswith(reference)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise StartupError(
                f'Session id prefix "{reference}" matches {len(matches)} sessions; give more of it'
            )
    raise StartupError(f'No session found for "{reference}" (give a file path or the start of a session id)')


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
            if match is not None and (
                match.model.provider not in ENV_VARS or registry.has_key(match.model.provider)
            ):
                thinking = options.thinking or context.thinking_level
                return match.model, thinking, None
            if match is not None:  # e.g. an imported Claude Code session on a machine without that key
                notice = (
                    f"This session used {match.model.provider}/{match.model.id}, which has no API key here; "
                    "it continues with the default model instead (/model changes it)."
                )
        choice = registry.default_model(settings, options.provider, options.model)
    except ConfigError as error:
        raise StartupError(str(error)) from None
    if choice.source == "offline":
        notice = (f"{notice}\n" if notice else "") + (
            "No model is configured and no API key was found, so pi-tui is using the offline demo "
            "model (offline/demo). Type /login to save an API key, or set ANTHROPIC_API_KEY, "
            "OPENAI_API_KEY or GEMINI_API_KEY, pass --api-key, or add a provider to models.json."
        )
    if choice.warning:
        notice = choice.warning if notice is None else f"{choice.warning}\n{notice}"
    default_level = settings.default_thinking_level or "off"
    thinking = (
        options.thinking or choice.thinking or (context.thinking_level if len(manager) else default_level)
    )
    if not choice.model.reasoning:
        thinking = "off" if options.thinking is None else thinking
    return choice.model, thinking, notice


def choose_tools(options: StartOptions, extension_tools: frozenset[str] = frozenset()) -> list:  # type: ignore[type-arg]
    """The built-in tools to start with. ``--tools`` may also name ``extension_tools`` (those
    are the extensions' to provide); any other unknown name is an error."""
    if options.no_tools or (options.no_builtin_tools and options.tools is None):
        return []
    from pi_tui.tools import default_tools, tools_by_name

    if options.tools is not None:
        try:
            return tools_by_name([name for name in options.tools if name not in extension_tools], options.cwd)
        except ValueError as error:
            raise StartupError(str(error)) from None
    return default_tools(options.cwd)


def loadout_pool(options: StartOptions, tools: list) -> list:  # type: ignore[type-arg]
    """Built-in tools that are off but that a pi 1.x branch may switch on (its system messages
    declare a loadout): all the others, unless ``--tools`` / ``--no-tools`` chose the set."""
    if options.no_tools or options.no_builtin_tools or options.tools is not None:
        return []
    from pi_tui.tools import ALL_TOOL_NAMES, tools_by_name

    have = {tool.name for tool in tools}
    return tools_by_name([name for name in ALL_TOOL_NAMES if name not in have], options.cwd)


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
