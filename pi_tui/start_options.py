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
    append_system_prompt: str | None = None
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
    trust: bool = False
    """``--trust``: load this project's extensions without asking."""
    extension_flags: list[str] | None = None
    """Command-line words argparse did not know: flags extensions may register."""
    interactive: bool = False
    """The TUI: project extensions wait for the user's answer instead of being skipped."""
    skills: list[str] | None = None
    """``--skill`` paths (skill files or folders), loaded even with ``--no-skills``."""
    no_skills: bool = False
    prompt_templates: list[str] | None = None
    """``--prompt-template`` paths (files or folders of ``.md`` templates)."""
    no_prompt_templates: bool = False
