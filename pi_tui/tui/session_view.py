"""Drawing a session in the chat quickly however long it is.

Opening a long session has three stages, each sooner than waiting for the whole: the newest
turns read from the end of the file before the session loads (:meth:`SessionView.show_tail`),
then the newest :data:`FIRST_ENTRIES` entries of the loaded branch, then the older ones, built
in a thread and put in front (mounted only when the user scrolls up). The model's context (the
footer's token count) of a very long branch is built in a thread too.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.tui.transcript import UserItem, build_transcript

if TYPE_CHECKING:
    from textual.app import App

    from pi_tui.start_options import StartOptions
    from pi_tui.tui.widgets.chat import ChatView
    from pi_tui.tui.widgets.editor import PromptEditor

FIRST_ENTRIES = 400
"""Entries turned into chat items before the first screen of a resumed session."""
BUILD_CONTEXT_AT_ONCE = 2_000
"""Branches up to this many entries get their context (the footer's token count) before the
first screen; a longer one builds it in a thread after that screen."""
FILE_PROBLEMS_SHOWN = 8
"""How many file problems the chat lists before "... and N more"."""


class SessionViewHost(Protocol):
    """The app as the session view sees it."""

    agent: Any
    start_options: StartOptions | None

    @property
    def chat(self) -> ChatView:
        """The chat the items go to."""

    @property
    def editor(self) -> PromptEditor:
        """The editor, whose prompt history is the session's prompts."""

    def refresh_footer(self) -> None:
        """Redraw the footer (the token count changed)."""

    def say(
        self,
        text: str,
        level: str = "info",
        title: str | None = None,
        *,
        markdown: bool = False,
        fold: bool = False,
    ) -> None:
        """A message from pi-tui in the chat."""


class SessionView:
    """Shows the current branch of the app's session in its chat."""

    def __init__(self, app: App[Any], host: SessionViewHost) -> None:
        self.app = app
        """For the workers and the hand-over from their threads."""
        self.host = host
        self._generation = 0
        """Bumped on each :meth:`show`: older items built for an earlier one are dropped."""

    async def show_tail(self) -> None:
        """Draw the newest turns of the session being opened from the end of its file, before
        the full load (which replaces them): on a long session that is most of a second sooner.
        Done before the load starts, which would otherwise hold the GIL against the drawing."""
        path = session_path_to_open(self.host.start_options)
        if path is None:
            return  # nothing imported: a new session's first frame stays as quick as it was
        from pi_tui.session.tail import read_tail_branch

        tail = read_tail_branch(path, FIRST_ENTRIES)
        if tail is None:
            return
        items = build_transcript(tail.entries, tail.label_of)
        await self.host.chat.show(items)
        self.host.editor.prompt_history = user_texts(items)

    async def show(self) -> None:
        """Draw the current branch of the session (start, resume, new session).

        The newest :data:`FIRST_ENTRIES` entries are turned into items at once, so the last screen
        shows quickly however long the session is; older items are built in a thread and put
        in front of them (they are mounted only when the user scrolls up).
        """
        host = self.host
        manager = host.agent.manager
        self._generation += 1
        ids = manager.get_branch_ids()
        cut = max(0, len(ids) - FIRST_ENTRIES)
        items = build_transcript([manager.get_entry(i) for i in ids[cut:]], manager.get_label)
        await host.chat.show(items)
        host.editor.prompt_history = user_texts(items)
        if len(ids) <= BUILD_CONTEXT_AT_ONCE:
            manager.build_session_context()
        else:  # reading 25,000 messages would hold the first screen back: the footer waits instead
            self.app.run_worker(self._build_context, thread=True, group="context", exit_on_error=False)
        host.refresh_footer()
        self.say_file_problems()
        if cut:
            self.app.run_worker(
                partial(self._load_older, ids[:cut], self._generation),
                thread=True,
                group="older",
                exit_on_error=False,
            )

    def say_file_problems(self) -> None:
        """Problems met reading the session file (skipped, torn or repaired lines, messages left
        out of the context), each said once, the way print mode writes them to stderr."""
        problems = self.host.agent.manager.take_new_warnings()
        if problems:
            shown = problems[:FILE_PROBLEMS_SHOWN]
            if len(problems) > len(shown):
                shown.append(f"... and {len(problems) - len(shown)} more")
            title = "Session file problems (nothing was changed on disk)"
            self.host.say("\n".join(shown), "warning", title=title)

    def _build_context(self) -> None:
        """(Thread) the model's context of a long branch, for the footer's token count; the
        agent's first turn would build it anyway, and then finds it ready."""
        self.host.agent.manager.build_session_context()
        self.app.call_from_thread(self._context_built)

    def _context_built(self) -> None:
        self.host.refresh_footer()
        self.say_file_problems()  # messages left out of the context are found while building it

    def _load_older(self, ids: list[str], generation: int) -> None:
        """(Thread) the items before the first screen; handed to the chat on the UI thread."""
        manager = self.host.agent.manager
        items = build_transcript([manager.get_entry(i) for i in ids], manager.get_label)
        self.app.call_from_thread(self._prepend_older, items, generation)

    def _prepend_older(self, items: list[Any], generation: int) -> None:
        if generation != self._generation:
            return  # another session (or branch) is shown by now
        self.host.chat.prepend_items(items)
        self.host.editor.prompt_history[:0] = user_texts(items)


def session_path_to_open(options: StartOptions | None) -> Path | None:
    """The file ``--session FILE`` or ``-c`` will open, when that is plain to see."""
    if options is None or options.no_session or options.fork:
        return None
    if options.session:
        path = Path(options.session).expanduser()
        return path if path.suffix == ".jsonl" and path.is_file() else None
    if options.continue_recent:
        from pi_tui.config.paths import session_dir_for_cwd
        from pi_tui.session.listing import most_recent_session

        folder = Path(options.session_dir) if options.session_dir else session_dir_for_cwd(options.cwd)
        return most_recent_session(folder, options.cwd)
    return None


def user_texts(items: list[Any]) -> list[str]:
    """The user's prompts among chat items (the editor's history, oldest first)."""
    return [item.text for item in items if isinstance(item, UserItem)]
