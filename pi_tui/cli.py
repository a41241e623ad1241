"""The ``pi-tui`` command line (pi-compatible flags) and its modes.

Imports of the heavy parts happen inside the functions that need them, so ``--version``,
``--help`` and ``-p`` start fast. User mistakes exit with one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from pi_tui.session.manager import SessionManager
    from pi_tui.start_options import StartOptions

from pi_tui import __version__
from pi_tui.argparsing import add_approval_flags

DESCRIPTION = """\
pi-tui: a terminal coding agent that keeps every conversation as a tree on disk.

Sessions live in $PI_CODING_AGENT_DIR/sessions (default ~/.agent/sessions), one folder per
working directory, in the same JSONL format as pi. Attach files to a prompt with @path."""

EXAMPLES = """\
examples:
  pi-tui -p "fix the failing test"          run once, print the answer
  pi-tui -c -p "and now the docs"           continue the latest session of this folder
  pi-tui --mode json -p "list the files"    one JSON event per line
  pi-tui --model anthropic/claude-sonnet-4-5:high -p "review src/"
  pi-tui --list-models gpt

commands:
  pi-tui import [PATH | --from claude|codex|gemini] [--all]
                                            another agent's transcript as a session here
  pi-tui serve [--host H] [--port N] [--token T]
                                            the sessions over HTTP + SSE, and a web page
  pi-tui acp [--model M] [-a]               an Agent Client Protocol agent on stdin/stdout, for
                                            editors (Zed, JetBrains, Neovim, Emacs, Toad)
  pi-tui auth login|logout|check|print-api-key [PROVIDER]
                                            save, remove, check or print a provider's API key
  pi-tui config [-l]                        where each configuration file is, and whether it exists
  pi-tui mcp add|remove <server> ...        add or remove an MCP server in mcp.json
  pi-tui mcp list [--json]                  connect every MCP server once: state, tools, errors
  pi-tui mcp login|logout <server>          sign in to an MCP server over OAuth, or sign out"""


class _MainParser(argparse.ArgumentParser):
    """The main command's parser: a bad value (``--tui-mode bogus``, ``--mode x``) is one line
    and exit 2 like every other user error, not argparse's usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"pi-tui: {message} (see pi-tui --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _MainParser(
        prog="pi-tui",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("messages", nargs="*", metavar="message", help="prompt(s); @path attaches a file")
    model = parser.add_argument_group("model")
    model.add_argument("--provider", metavar="NAME", help="provider from the catalogue or models.json")
    model.add_argument("--model", metavar="PATTERN", help='model id, or provider/id, optional ":<thinking>"')
    model.add_argument("--api-key", metavar="KEY", help="overrides the provider's key")
    model.add_argument(
        "--thinking",
        metavar="LEVEL",
        help="off|minimal|low|medium|high|xhigh|max (clamped to what the model can do)",
    )
    model.add_argument(
        "--models",
        metavar="a,b:high",
        help="the models Ctrl+P cycles: ids, provider/id, globs (anthropic/*, *sonnet*), optional :level",
    )
    model.add_argument(
        "--list-models", nargs="?", const="", metavar="SEARCH", help="list known models and exit"
    )
    modes = parser.add_argument_group("modes")
    modes.add_argument(
        "-p", "--print", action="store_true", help="run the message(s), print the answer, exit"
    )
    modes.add_argument(
        "--mode", choices=("text", "json", "rpc"), default="text", help="print-mode output, or RPC over stdio"
    )
    sessions = parser.add_argument_group("sessions")
    sessions.add_argument(
        "-c",
        "--continue",
        dest="continue_recent",
        action="store_true",
        help="continue the most recent session for this folder",
    )
    sessions.add_argument("-r", "--resume", action="store_true", help="open the session picker")
    sessions.add_argument("--session", metavar="PATH|ID", help="open that session file (or id prefix)")
    sessions.add_argument(
        "--session-id",
        metavar="ID",
        help="open this folder's session with that id, or create it with that id "
        "(letters, digits, . _ -); with --fork: the new session's id",
    )
    sessions.add_argument(
        "--fork", metavar="PATH|ID", help="copy that session into a new one and continue there"
    )
    sessions.add_argument("-n", "--name", metavar="NAME", help="the session's display name (as /name)")
    sessions.add_argument("--session-dir", metavar="DIR", help="where sessions live")
    sessions.add_argument("--no-session", action="store_true", help="keep nothing on disk")
    sessions.add_argument("--list-sessions", action="store_true", help="list this folder's sessions and exit")
    sessions.add_argument(
        "--export",
        nargs="+",
        metavar=("SESSION", "OUT"),
        help="write the session as one self-contained HTML page (the whole tree) and exit; "
        "an OUT ending in .jsonl gets the current branch as a session file instead",
    )
    sessions.add_argument(
        "--with-secrets",
        action="store_true",
        help="with --export: keep secret values in the page (they are placeholders by default)",
    )
    agent = parser.add_argument_group("agent")
    agent.add_argument(
        "-t",
        "--tools",
        metavar="a,b",
        help="tool allow-list: names or * patterns (read,bash,edit,write,grep,find,ls); "
        "or only +name/-name entries to change the default read,bash,edit,write",
    )
    agent.add_argument(
        "-xt",
        "--exclude-tools",
        metavar="a,b",
        help="switch these tools (names or * patterns) off, after every other tool choice",
    )
    agent.add_argument(
        "--list-rules", action="store_true", help="show every rule found, its bucket and source"
    )
    agent.add_argument(
        "-nt",
        "--no-tools",
        action="store_true",
        help="no tools, built-in or extensions', except those --tools names",
    )
    agent.add_argument(
        "-nbt",
        "--no-builtin-tools",
        action="store_true",
        help="no built-in tools unless --tools names them; extensions' tools stay on",
    )
    agent.add_argument(
        "-nc",
        "--no-context-files",
        action="store_true",
        help="leave AGENTS.md and CLAUDE.md out of the prompt",
    )
    look = parser.add_argument_group("look and start-up")
    look.add_argument(
        "--theme",
        action="append",
        metavar="NAME|PATH",
        help="a theme by name, or a theme file (used) or folder (offered in /settings); repeatable",
    )
    look.add_argument("--no-themes", action="store_true", help="ignore the themes in <agent dir>/themes")
    look.add_argument(
        "--use-theme",
        metavar="NAME[/NAME]",
        help="the theme for this run (dark/light: one for each terminal background); the setting is kept",
    )
    look.add_argument(
        "--tui-mode",
        choices=("regular", "fullscreen"),
        help="fullscreen (the default) or regular terminal mode (else the tuiMode setting)",
    )
    look.add_argument("--verbose", action="store_true", help="full start-up header (overrides quietStartup)")
    look.add_argument(
        "--offline",
        action="store_true",
        help="no network at start-up (pi-tui makes none anyway; sets PI_OFFLINE=1 for tools)",
    )
    extend = parser.add_argument_group("extensions")
    extend.add_argument(
        "-e",
        "--extension",
        action="append",
        dest="extensions",
        metavar="PATH",
        help="load this extension (a .py file or a package folder); repeatable",
    )
    extend.add_argument(
        "-ne", "--no-extensions", action="store_true", help="load no discovered extension (-e still loads)"
    )
    add_approval_flags(extend, whose="this project folder", aliases=("--trust",))
    extend.add_argument(
        "--no-mcp",
        action="store_true",
        help="connect no MCP server this run (no MCP tools, mcp.json is not read)",
    )
    extend.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="do not record the project's files per turn (/tree cannot bring files back)",
    )
    extend.add_argument(
        "--skill",
        action="append",
        dest="skills",
        metavar="PATH",
        help="load a skill (file or folder); repeatable",
    )
    extend.add_argument(
        "-ns", "--no-skills", action="store_true", help="discover no skills (--skill still loads)"
    )
    extend.add_argument(
        "--prompt-template",
        action="append",
        dest="prompt_templates",
        metavar="PATH",
        help="load prompt templates (a .md file or a folder of them); repeatable",
    )
    extend.add_argument(
        "-np", "--no-prompt-templates", action="store_true", help="discover no prompt templates"
    )
    agent.add_argument("--system-prompt", metavar="TEXT|FILE", help="replace the system prompt")
    agent.add_argument(
        "--append-system-prompt",
        action="append",
        metavar="TEXT|FILE",
        help="add to the system prompt; repeatable",
    )
    parser.add_argument("-v", "--version", action="version", version=f"pi-tui {__version__}")
    return parser


def fail(message: str, code: int = 2) -> int:
    print(f"pi-tui: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the pi-tui program itself (not code calling main): see process_tree
        from pi_tui.tools.process_tree import become_subreaper

        become_subreaper()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (`pi-tui --list-models | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as error:  # a bug: one line for the user, the details in a crash log
        return fail(f"internal error: {type(error).__name__}: {error} (details: {_crash_log()})", 70)


def _flag_words_problem(words: list[str]) -> str | None:
    """A leftover word that cannot be an extension's flag (``-x``, a stray value)."""
    for word in words:
        if not word.startswith("--") or word == "--":
            return unrecognized(word)
    return None


def unrecognized(word: str) -> str:
    return f"unrecognized arguments: {word} (see pi-tui --help)"


def _unclaimed_flags_problem(options: StartOptions) -> str | None:
    """Unknown flags when no extension could claim them: said at once (an interactive start
    would otherwise paint its first screen before the extensions load and say it)."""
    if not options.extension_flags:
        return None
    from pi_tui.config.extension_sources import discover_extensions
    from pi_tui.config.paths import agent_dir

    found = discover_extensions(
        options.cwd, agent_dir(), options.extensions, no_extensions=options.no_extensions
    )
    return None if found.sources else unrecognized(options.extension_flags[0])


def _user_input_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the command line that the user can fix (exit 2), if anything.

    A ``--session-dir`` whose parent is missing is almost always a typo, not a tree to create.
    Bytes of a message that are not UTF-8 are no failure: they are sent as U+FFFD (one rule for
    bytes everywhere, as pi reads its argv), but the user is told which byte, once.
    """
    from pathlib import Path

    from pi_tui.text_safety import show_name

    for message in args.messages or ():
        for position, character in enumerate(message):
            if "\udc80" <= character <= "\udcff":  # how Python hands over a byte that is not UTF-8
                byte = ord(character) - 0xDC00
                print(
                    f"pi-tui: the message is not valid UTF-8 (byte 0x{byte:02x} at character "
                    f"{position + 1}); such bytes are sent as \ufffd",
                    file=sys.stderr,
                )
                break
    if args.session_dir:
        folder = Path(args.session_dir).expanduser()
        if not folder.exists() and not folder.parent.is_dir():
            parent = show_name(folder.parent)
            return f"--session-dir {show_name(folder)}: its parent folder {parent} does not exist"
    return None


def _split_list(value: str | None) -> list[str] | None:
    """A comma-separated flag value as its non-empty entries (None when the flag is absent)."""
    if not value:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def _session_flags_problem(args: argparse.Namespace) -> str | None:
    """pi 1.x's rules for the session flags that cannot go together, a bad ``--session-id``,
    an empty ``--name`` and a ``--tools`` list mixing plain names with ``+``/``-`` entries."""
    from pi_tui.startup import session_id_problem, tool_list_problem

    others = (("--session", args.session), ("--continue", args.continue_recent), ("--resume", args.resume))
    if args.session_id is not None:
        problem = session_id_problem(args.session_id)
        if problem is not None:
            return problem
        clash = next((flag for flag, given in others if given), None)
        if clash is not None:
            return f"--session-id cannot be combined with {clash}"
    if args.fork is not None:
        clash = next((flag for flag, given in (*others, ("--no-session", args.no_session)) if given), None)
        if clash is not None:
            return f"--fork cannot be combined with {clash}"
    if args.name is not None and not args.name.strip():
        return "-n/--name needs a name"
    return tool_list_problem(_split_list(args.tools) or [])


def _export(values: list[str], cwd: str, session_dir: str | None, with_secrets: bool = False) -> int:
    """``--export SESSION [OUT]``: an HTML page of the whole tree, or with ``OUT.jsonl`` the
    current branch as a straight session file."""
    from pathlib import Path

    from pi_tui.session import SessionManager
    from pi_tui.session.errors import SessionError
    from pi_tui.session.export import export_jsonl
    from pi_tui.start_options import StartOptions
    from pi_tui.startup import StartupError, find_session

    if len(values) > 2:
        return fail("--export takes a session and at most one output file")
    output = Path(values[1]) if len(values) == 2 else None
    if output is not None and output.suffix.lower() not in (".jsonl", ".html", ".htm"):
        return fail(f"--export writes .html or .jsonl files; {output} is neither")
    try:
        source = find_session(values[0], StartOptions(cwd=cwd, session_dir=session_dir))
        manager = SessionManager.open(source, read_only=True)
        if output is not None and output.suffix.lower() == ".jsonl":
            written = export_jsonl(manager, Path(cwd) / output)
        else:
            written = _export_html(manager, output, cwd, with_secrets)
    except (StartupError, SessionError) as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"Cannot write {output or 'the page'}: {error.strerror or error}")
    print(_shown(f"Session exported to: {written}"))
    return 0


def _export_html(manager: SessionManager, output: Path | None, cwd: str, with_secrets: bool) -> Path:
    """The page in the user's theme (settings ``theme``), named after the session by default,
    with every secret pi-tui would hide from a model hidden (unless ``--with-secrets``)."""
    from pathlib import Path

    from pi_tui.ai.errors import ConfigError
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.settings import load_settings
    from pi_tui.html_export import default_html_name, export_html
    from pi_tui.secrets.session_secrets import session_secrets

    settings = load_settings(cwd)
    hide = None
    if not with_secrets:
        try:
            registry: ModelRegistry | None = ModelRegistry()
        except ConfigError:
            registry = None  # a broken models.json only means fewer known keys
        hide = session_secrets(manager, cwd, agent_dir(), registry).obfuscator  # the session's folder
    target = output if output is not None else Path(default_html_name(manager))
    return export_html(manager, Path(cwd) / target, theme=settings.theme, agent_dir=agent_dir(), hide=hide)


def _shown(text: str) -> str:
    """Listing text as printed: on a terminal its control characters are made visible (names and
    titles come from files); a pipe gets the exact text."""
    if not sys.stdout.isatty():
        return text
    from pi_tui.text_safety import for_terminal

    return for_terminal(text)


def _crash_log() -> str:
    """Write the current traceback to the crash log; returns its path."""
    import traceback

    from pi_tui.logfiles import append_log

    return append_log("crash.log", traceback.format_exc())


def _main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["serve"]:  # pi-tui serve [--host H] [--port N] [--token T]
        from pi_tui.server.command import run_serve

        return run_serve(words[1:], fail)
    if words[:1] == ["acp"]:  # pi-tui acp [flags]: an Agent Client Protocol agent for editors
        from pi_tui.acp.command import run_acp

        return run_acp(words[1:], fail)
    if words[:1] == ["import"]:  # pi-tui import [PATH | --from AGENT] [--all]
        from pi_tui.transcripts.command import run_import

        return run_import(words[1:], fail)
    if words[:1] == ["auth"]:  # pi-tui auth login|logout|check|print-api-key ...
        from pi_tui.auth_command import run_auth

        return run_auth(words[1:], fail)
    if words[:1] == ["config"]:  # pi-tui config [-l]
        from pi_tui.config_command import run_config

        return run_config(words[1:], fail)
    if words[:1] == ["mcp"]:  # pi-tui mcp add|remove|... (pi 1.x's MCP shell commands)
        from pi_tui.mcp.command import run_mcp

        return run_mcp(words[1:], fail)
    parser = build_parser()
    # Words and flags in any order, as pi. Flags nobody here knows may belong to an extension
    # (``pi.register_flag``): they are kept and checked once the extensions are loaded.
    args, unknown = parser.parse_known_intermixed_args(argv)
    args.extension_flags = unknown
    flags_problem = _flag_words_problem(unknown)
    if flags_problem is not None:
        return fail(flags_problem)
    cwd = os.getcwd()
    from pi_tui.config.session_dir import chosen_session_dir

    # --session-dir, else $PI_CODING_AGENT_SESSION_DIR, else the sessionDir setting (as pi).
    sessions_folder = chosen_session_dir(cwd, args.session_dir)
    runs_agent = (
        args.list_models is None and not args.list_sessions and not args.list_rules and not args.export
    )
    if unknown and not runs_agent:
        return fail(unrecognized(unknown[0]))
    if args.list_models is not None:
        return _list_models(args.list_models)
    if args.list_sessions:
        return _list_sessions(cwd, sessions_folder)
    if args.list_rules:
        return _list_rules(cwd)
    if args.export:
        return _export(args.export, cwd, sessions_folder, args.with_secrets)
    session_problem = _session_flags_problem(args)
    if session_problem is not None:
        return fail(session_problem)
    if args.resume and (args.print or args.mode != "text"):
        return fail("-r opens the session picker, which needs the interactive mode (drop -p / --mode)")
    if args.mode == "rpc":
        return _run(args, cwd, sessions_folder, rpc=True)
    from pi_tui.modes.piped_input import piped_stdin, streams_are_terminals

    piped = piped_stdin()  # `git diff | pi-tui "review this"`: before the first message, as pi
    if not args.print and args.mode == "text" and streams_are_terminals():
        return _run(args, cwd, sessions_folder, rpc=False, interactive=True)
    return _run(args, cwd, sessions_folder, rpc=False, piped=piped)  # also for redirected streams


def _run(
    args: argparse.Namespace,
    cwd: str,
    sessions_folder: str | None,
    *,
    rpc: bool,
    interactive: bool = False,
    piped: str | None = None,
) -> int:
    from pathlib import Path

    from pi_tui.start_options import StartOptions

    options = StartOptions(
        cwd=cwd,
        provider=args.provider,
        model=args.model,
        api_key=args.api_key,
        thinking=args.thinking,
        continue_recent=args.continue_recent,
        session=args.session,
        fork=args.fork,
        session_dir=sessions_folder,
        no_session=args.no_session,
        tools=_split_list(args.tools),
        no_tools=args.no_tools,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        models=[part.strip() for part in args.models.split(",") if part.strip()] if args.models else None,
        no_builtin_tools=args.no_builtin_tools,
        no_context_files=args.no_context_files,
        theme_paths=args.theme,
        no_themes=args.no_themes,
        verbose=args.verbose,
        offline=args.offline,
        extensions=args.extensions,
        no_extensions=args.no_extensions,
        approve=args.approve,
        extension_flags=args.extension_flags,
        interactive=interactive,
        demo_fallback=interactive,  # print, json, rpc: the offline demo only by name
        skills=args.skills,
        no_skills=args.no_skills,
        prompt_templates=args.prompt_templates,
        no_prompt_templates=args.no_prompt_templates,
        name=args.name,
        session_id=args.session_id,
        exclude_tools=_split_list(args.exclude_tools),
        use_theme=args.use_theme,
        tui_mode=args.tui_mode,
        no_mcp=args.no_mcp,
        no_checkpoints=args.no_checkpoints,
    )
    if args.offline:
        os.environ["PI_OFFLINE"] = "1"
    problem = _user_input_problem(args) or _unclaimed_flags_problem(options)
    if problem is not None:
        return fail(problem)
    if not rpc and not interactive and not args.messages and piped is None:
        return fail('no message given: pi-tui -p "what to do" (or pipe the text in)')
    prompts = []
    if args.messages and not rpc:
        from pi_tui.modes.attachments import AttachmentError, build_prompts

        try:
            prompts = build_prompts(args.messages, Path(cwd))
        except AttachmentError as error:
            return fail(str(error))
    if piped is not None:  # after the @path words are read: piped text is never a file list
        from pi_tui.modes.attachments import Prompt
        from pi_tui.modes.piped_input import with_piped_text
        from pi_tui.text_safety import clean_text

        text = clean_text(piped)
        if prompts:
            prompts[0] = Prompt(with_piped_text(text, prompts[0].text), prompts[0].images)
        else:
            prompts = [Prompt(text)]
    if interactive:
        # The app paints its first frame, then starts the agent (settings, session, model) in the
        # background; a startup error ends the app with the same one line as here.
        from pi_tui.tui.run import run_interactive

        return run_interactive(options, cwd, prompts, resume_picker=args.resume)
    from pi_tui.startup import StartupError, start

    try:
        started = start(options)
    except StartupError as error:
        return fail(str(error))
    if started.notice and not rpc:
        from pi_tui.modes.print_mode import say_start_notice

        say_start_notice(started.notice)
    if rpc:
        from pi_tui.modes.rpc_mode import run_rpc

        return asyncio.run(run_rpc(started))
    from pi_tui.modes.print_mode import run_print

    return asyncio.run(
        run_print(started.agent, prompts, json_mode=args.mode == "json", extensions=started.extensions)
    )


def _list_models(search: str) -> int:
    from pi_tui.ai.errors import ConfigError
    from pi_tui.ai.model_list import NO_MODELS, format_model_list, listed_models
    from pi_tui.ai.models import ModelRegistry

    try:
        registry = ModelRegistry()
        if not listed_models(registry, None):
            print(NO_MODELS)
            return 0
        models = listed_models(registry, search or None)
    except ConfigError as error:
        return fail(str(error))
    if not models:
        print(f'No models matching "{search}"')
        return 0
    print(_shown(format_model_list(models)))
    return 0


def _list_rules(cwd: str) -> int:
    from pathlib import Path

    from pi_tui.config.settings import SettingsError, load_settings
    from pi_tui.startup import discover_and_bucket
    from pi_tui.ttsr.rules import DiscoveryReport, format_rule_list

    try:
        settings = load_settings(cwd)
    except SettingsError as error:
        return fail(str(error))
    report = DiscoveryReport()
    _manager, bucketed = discover_and_bucket(cwd, settings, report)
    print(_shown(format_rule_list(bucketed, Path(cwd), report)))
    return 0


def _list_sessions(cwd: str, session_dir: str | None) -> int:
    from pi_tui.session import SessionError, SessionManager

    try:
        sessions = SessionManager.list(cwd, session_dir)
    except SessionError as error:
        return fail(str(error), 1)
    if not sessions:
        print("No sessions for this folder yet.")
        return 0
    from datetime import UTC, datetime

    from pi_tui.session.info import recency_key

    # The first row is the session -c continues: both rank files by when they were last written.
    sessions.sort(key=lambda info: recency_key(info.path), reverse=True)
    # ``--session PREFIX`` searches this folder's sessions first and stops at the first match there,
    # so a prefix unique in this list is one it accepts. UUIDv7 ids made in the same moment share
    # long beginnings: each id gets the shortest prefix (8 characters at least) no other id starts with.
    ids = sorted({info.id for info in sessions})  # an imported twin shares its id: one prefix
    shared: dict[str, int] = {}
    for before, after in ((ids[index - 1], ids[index]) for index in range(1, len(ids))):
        pairs = zip(before, after, strict=False)
        common = next((at for at, (one, other) in enumerate(pairs) if one != other), len(before))
        shared[before] = max(shared.get(before, 0), common)
        shared[after] = max(shared.get(after, 0), common)
    prefixes = {key: key[: max(8, shared.get(key, 0) + 1)] for key in ids}
    width = max(len(prefix) for prefix in prefixes.values())
    from pi_tui.config.pi_folder import pi_session_prefixes, session_origin

    pi_prefixes = pi_session_prefixes()
    for info in sessions:
        title = info.name or info.first_message.replace("\n", " ")[:60] or "(no messages)"
        written = datetime.fromtimestamp(recency_key(info.path)[0], UTC)
        stamp = written.astimezone().strftime("%Y-%m-%d %H:%M")
        origin = "pi" if session_origin(info.path, pi_prefixes) else "  "  # pi's folder, as /resume tags
        line = f"{stamp}  {prefixes[info.id]:<{width}}  {origin}  {info.message_count:>4} msgs  {title}"
        print(_shown(line))
    return 0
