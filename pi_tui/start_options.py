"""What the command line asks of a start (kept apart from startup.py, which imports the whole
agent: the interactive mode paints its first frame before that import)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class StartOptions:
    cwd: str
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    continue_recent: bool = False
    session: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    tools: list[str] | None = None
    no_tools: bool = False
    system_prompt: str | None = None
    append_system_prompt: str | list[str] | None = None
    """``--append-system-prompt`` values (repeatable in pi 1.x): each text or a file's path."""
    models: list[str] | None = None
    """``--models a,b:high``: the scoped models Ctrl+P cycles (over the enabledModels setting)."""
    no_builtin_tools: bool = False
    no_context_files: bool = False
    theme_paths: list[str] | None = None
    """``--theme`` values: theme files or folders to load (a name picks that theme)."""
    no_themes: bool = False
    verbose: bool = False
    offline: bool = False
    extensions: list[str] | None = None
    """``-e/--extension`` paths: extensions to load besides the discovered ones."""
    no_extensions: bool = False
    approve: bool | None = None
    """``-a/--approve`` (True: trust this project folder for this run), ``-na/--no-approve``
    (False: load none of its protected resources), or None: the saved decision, then
    ``defaultProjectTrust`` (pi_tui/config/project_trust.py). ``--trust`` is ``--approve``."""
    extension_flags: list[str] | None = None
    """Command-line words argparse did not know: flags extensions may register."""
    interactive: bool = False
    """The TUI: an undecided project folder is asked about instead of being skipped."""
    skills: list[str] | None = None
    """``--skill`` paths (skill files or folders), loaded even with ``--no-skills``."""
    no_skills: bool = False
    prompt_templates: list[str] | None = None
    """``--prompt-template`` paths (files or folders of ``.md`` templates)."""
    no_prompt_templates: bool = False
    name: str | None = None
    """``-n/--name``: the session's display name (a ``session_info`` entry, as ``/name``)."""
    session_id: str | None = None
    """``--session-id``: open this folder's session with that id, or create it with that id."""
    exclude_tools: list[str] | None = None
    """``-xt/--exclude-tools``: names or ``*`` patterns switched off after every other choice."""
    use_theme: str | None = None
    """``--use-theme name`` or ``dark/light``: the theme for this run (the setting is kept)."""
    tui_mode: str | None = None
    """``--tui-mode regular|fullscreen`` (else the ``tuiMode`` setting)."""
    no_mcp: bool = False
    """``--no-mcp``: no MCP servers connect this run."""
    no_checkpoints: bool = False
    """``--no-checkpoints``: the project's files are not recorded this run (no file restores)."""
    demo_fallback: bool = True
    """With no model configured and no key anywhere, fall back to the offline demo (the
    interactive mode's first run). Print, json and rpc modes set False: a script gets the demo
    only when it names it (``--model offline/demo``), else a clear error, never a canned answer."""
