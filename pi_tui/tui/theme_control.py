"""The pi theme of the running app: installing it, switching it, and reloading it when its file
changes on disk.

A pi theme becomes a Textual theme (the ``$pi-*`` colours of ``app.tcss``), a Rich theme for
the finished replies' markdown, and the code theme (dark or light) of code blocks. The app owns
one :class:`ThemeControl`; the theme logic itself (choosing, loading, converting) lives in
:mod:`pi_tui.view.theme`, this module only applies it to the app and watches the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.theme import Theme as RichTheme
from textual.app import App

from pi_tui.tui.theme import is_pi_theme, to_textual_theme
from pi_tui.view.terminal_colours import terminal_appearance
from pi_tui.view.theme import SYSTEM_THEME, ThemeLoad, available_themes, choose_theme, load_theme

if TYPE_CHECKING:
    from pi_tui.config.settings import Settings
    from pi_tui.start_options import StartOptions

POLL_SECONDS = 1.0
"""How often the theme file's modification time is looked at (edits show within a second)."""

Say = Callable[[str, str], None]
"""How the control tells the user something: ``(text, level)``."""


class ThemeControl:
    """One app's pi theme: its name as the setting says it, the file it came from, its problems."""

    def __init__(
        self, app: App[Any], say: Say, agent_dir: Path, theme_paths: list[str], *, discover: bool
    ) -> None:
        self.app = app
        self.say = say
        self.agent_dir = agent_dir
        self.theme_paths = theme_paths
        """``--theme`` files and folders and the settings' ``themes`` (existing ones)."""
        self.discover = discover
        """False with ``--no-themes``: the agent dir's themes are not offered."""
        self.name = SYSTEM_THEME
        """The pi theme's name as the ``theme`` setting says it (``system`` after a problem)."""
        self.problems: list[str] = []
        self.code_theme = "monokai"
        """Pygments' theme for code blocks: dark or light, as the pi theme is."""
        self.redraw: Callable[[], None] = lambda: None
        """Redraws the chat's items after a switch (their colours are baked in when drawn)."""
        self._path: Path | None = None
        self._mtime: float | None = None
        self._markdown_theme_pushed = False

    @classmethod
    def for_options(
        cls, app: App[Any], say: Say, cwd: str, agent_dir: Path, options: StartOptions | None
    ) -> ThemeControl:
        """The themes on offer as the command line and the settings say: ``--theme`` paths that
        exist, the settings' ``themes`` and the agent dir's (both skipped with ``--no-themes``)."""
        given = options.theme_paths or [] if options is not None else []
        approve = options.approve if options is not None else None
        discover = not (options is not None and options.no_themes)
        listed = settings_themes(cwd, agent_dir, approve) if discover else []
        theme_paths = [*listed, *(path for path in given if Path(path).expanduser().exists())]
        return cls(app, say, agent_dir, theme_paths, discover=discover)

    def files(self) -> dict[str, Path]:
        """Every theme on offer: built-ins, the agent dir's (unless --no-themes), --theme's."""
        return available_themes(self.agent_dir, self.theme_paths, discover=self.discover)

    def install(self, name: str, *, first: bool = False) -> ThemeLoad:
        """Make ``name`` the app's theme (read from disk again); problems go to :attr:`problems`."""
        app = self.app
        choice = choose_theme(name, self.files(), terminal_appearance())
        if choice.problem:
            self.problems.append(choice.problem)
        path = choice.path
        loaded = load_theme(path)
        self.problems.extend(loaded.problems)
        textual_theme = to_textual_theme(loaded.theme)
        app.register_theme(textual_theme)
        if first:
            # Before the app runs, the stylesheet has not been read yet: set the theme without
            # the watcher, whose queued refresh_css would parse every rule a second time.
            app.set_reactive(App.theme, textual_theme.name)
            dark = textual_theme.dark
            app.update_classes(
                {f"-theme-{textual_theme.name}": True, "-dark-mode": dark, "-light-mode": not dark},
                update=False,
            )
            app.stylesheet.set_variables(app.get_css_variables())
        elif app.theme == textual_theme.name:
            app.refresh_css()  # the same theme, new colours: re-read the variables
        else:
            app.theme = textual_theme.name
        self.name = SYSTEM_THEME if choice.problem else name  # as the setting says it
        self._path = path
        self._mtime = _mtime(path)
        self.code_theme = "monokai" if loaded.theme.dark else "friendly"
        self._push_markdown_styles(loaded.theme.colors)
        if not first:
            self.redraw()
        return loaded

    def switch(self, name: str) -> list[str]:
        """Switch at run time; returns the problems found in the theme file."""
        self.problems = []
        self.install(name)
        return list(self.problems)

    def reload_if_changed(self) -> None:
        """(Timer) the theme file was saved since it was read: read it again and say so."""
        if self._path is None:
            return
        mtime = _mtime(self._path)
        if mtime is not None and mtime != self._mtime:
            problems = self.switch(self.name)
            self.say(f"Theme {self._path.name} changed on disk: reloaded.", "info")
            for problem in problems:
                self.say(problem, "warning")

    def validate(self, theme_name: str) -> str:
        """Keep the current pi theme when something sets a theme that is not one.

        Textual's own themes (nord, gruvbox, ... from its theme picker or ``action_toggle_dark``)
        lack the ``$pi-*`` colours, and the stylesheet stops the app with an undefined-variable
        error under them; refusing here, before the watcher runs, means no theme can crash it.
        """
        app = self.app
        theme = app.get_theme(theme_name)
        if theme is not None and is_pi_theme(theme):
            return theme_name
        kind = "a Textual theme" if theme is not None else "not a known theme"
        warning = (
            f'"{theme_name}" is {kind}, not a pi theme: keeping "{self.name}". Pick a theme in /settings.'
        )
        app.call_later(self.say, warning, "warning")
        return app.theme

    def _push_markdown_styles(self, colors: dict[str, str | None]) -> None:
        """Rich's markdown style names, from the theme's md* tokens (finished replies use Rich)."""

        def style(token: str, extra: str = "") -> str:
            colour = colors.get(token)
            return f"{extra} {colour}".strip() if colour else (extra or "none")

        theme = RichTheme(
            {
                "markdown.h1": style("mdHeading", "bold underline"),
                "markdown.h2": style("mdHeading", "bold"),
                "markdown.h3": style("mdHeading", "bold"),
                "markdown.h4": style("mdHeading", "italic"),
                "markdown.h5": style("mdHeading", "italic"),
                "markdown.h6": style("mdHeading", "dim"),
                "markdown.link": style("mdLink", "underline"),
                "markdown.link_url": style("mdLinkUrl", "underline"),
                "markdown.code": style("mdCode", "bold"),
                "markdown.block_quote": style("mdQuote", "italic"),
                "markdown.hr": style("mdHr"),
                "markdown.item.bullet": style("mdListBullet", "bold"),
                "markdown.item.number": style("mdListBullet", "bold"),
                "markdown.paragraph": style("text"),
                "markdown.text": style("text"),
            }
        )
        console = self.app.console
        if self._markdown_theme_pushed:
            console.pop_theme()
        console.push_theme(theme)
        self._markdown_theme_pushed = True


def settings_themes(cwd: str, folder: Path, approve: bool | None) -> list[str]:
    """pi's settings ``themes``: theme files or folders named in the user's (and the trusted
    project's) settings, offered like ``--theme`` folders (``--no-themes`` skips them)."""
    from pi_tui.config.project_trust import saved_trust_allows
    from pi_tui.resources.listed import listed_paths

    trusted = saved_trust_allows(cwd, approve)
    return [
        str(path) for path in listed_paths(cwd, folder, "themes", project_trusted=trusted) if path.exists()
    ]


def first_theme_name(options: StartOptions | None, settings: Settings | None, cwd: str) -> str:
    """The theme of the first frame: ``--use-theme`` (this run only), else ``--theme``'s last
    name or file, else the ``theme`` setting (from ``settings`` once they are loaded, else
    peeked from the files), else ``system``."""
    from pi_tui.tui.settings_peek import peek_setting

    use_theme = options.use_theme if options is not None else None
    chosen = use_theme or theme_from_options(options)
    if chosen:
        return chosen
    approve = options.approve if options is not None else None
    setting = settings.theme if settings is not None else peek_setting(cwd, "theme", approve)
    return cast(str, setting or SYSTEM_THEME)  # (a peeked value is whatever the file holds)


def theme_from_options(options: StartOptions | None) -> str | None:
    """The theme ``--theme`` asks for: the last name, or the last theme file given."""
    chosen = None
    for value in (options.theme_paths or []) if options is not None else []:
        path = Path(value).expanduser()
        if path.is_dir():
            continue
        chosen = path.stem if path.suffix == ".json" else value
    return chosen


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
