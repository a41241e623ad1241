"""The two-line footer: where (cwd, git branch, session name) and how much (tokens, cost,
context use, model, thinking level).

The figures are computed by ``pi_tui.view.stats``; the app calls :meth:`PiFooter.show_state`
when they may have changed (a reply ended, the model or thinking level changed, a new session).
The folder, branch, session name and model id are outside text (a folder or branch name, a
name from a session file) and are made terminal-safe here, where they are drawn.
The totals are cached per session file and only new entries are added, so a redraw costs the
same on a long session as on a short one.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from textual.content import Content
from textual.widgets import Static

from pi_tui.text_safety import for_terminal
from pi_tui.view.stats import (
    UsageTotals,
    add_raw_usage,
    context_level,
    footer_model_text,
    footer_path_line,
    footer_usage_line,
)


class PiFooter(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._counted: tuple[int, int] = (0, 0)
        """(id of the manager, entries already summed)."""
        self._totals = UsageTotals(0, 0, 0, 0, 0.0)
        self._statuses: dict[str, str] = {}
        self.override: str | None = None
        """An extension's footer text (``ctx.ui.set_footer``), shown instead of ours."""
        """Extensions' status texts by key (``ctx.ui.set_status``), shown on a third line."""

    def set_status(self, key: str, text: str | None) -> None:
        if text is None or not str(text).strip():
            self._statuses.pop(key, None)
        else:
            self._statuses[key] = _one_row(str(text))

    def totals_for(self, manager: Any) -> UsageTotals:
        """Usage summed over every reply in the session file (all branches), as pi's footer.

        Works on the raw entries (no typed views) and only on those added since last time.
        """
        key, done = self._counted
        total_entries = len(manager)
        if key != id(manager) or done > total_entries:
            self._totals, done = UsageTotals(), 0
        add_raw_usage(self._totals, itertools.islice(manager.iter_raw_entries(), done, None))
        self._counted = (id(manager), total_entries)
        return self._totals

    def show_state(self, agent: Any, cwd: str, git_branch: str | None) -> None:
        self._last = (agent, cwd, git_branch)
        if self.override is not None:
            lines = [_one_row(line) for line in str(self.override).splitlines()[:2]] or [""]
            self.update(Content.assemble(Content.styled("\n".join(lines), "$pi-dim"), *self._status_line()))
            return
        manager = agent.manager
        model = agent.model
        totals = self.totals_for(manager)
        try:
            context_tokens: int | None = agent.context_tokens_if_built()
        except Exception:  # an odd message in an old session must not break the footer
            context_tokens = None
        usage = footer_usage_line(
            totals, context_tokens, model.context_window, agent.settings.compaction.enabled
        )
        level = context_level(context_tokens, model.context_window)
        right = for_terminal(footer_model_text(model.id, agent.thinking_level, model.reasoning))
        width = max(self.size.width, 40)
        if self._provider_count() > 1:  # pi: "(provider) " too, when there is room for it
            with_provider = f"({for_terminal(model.provider)}) {right}"
            if len(usage) + 2 + len(with_provider) <= width:
                right = with_provider
        gap = max(1, width - len(usage) - len(right) - 2)
        usage_style = {"error": "$pi-error", "warning": "$pi-warning"}.get(level, "$pi-dim")
        self.update(
            Content.assemble(
                Content.styled(
                    _one_row(footer_path_line(Path(cwd), git_branch, manager.get_session_name())),
                    "$pi-dim",
                ),
                "\n",
                Content.styled(usage, usage_style),
                " " * gap,
                Content.styled(right, "$pi-dim"),
                *self._status_line(),
            )
        )
        self._last = (agent, cwd, git_branch)

    def _provider_count(self) -> int:
        """How many providers the user can switch between, as pi counts them for its footer:
        those of the Ctrl+P scope when there is one, else of every model with a key. With more
        than one, the model alone does not say where requests go (``claude-sonnet-4-6`` is sold
        by Anthropic, OpenCode, OpenRouter...), so the provider is shown before it."""
        started = getattr(self.app, "started", None)
        if started is None:
            return 1
        # Here, not at the top: the footer is drawn in the first frame, before the agent (and
        # the message models scoped_models imports, ~140 ms) exists.
        from pi_tui.ai.scoped_models import available_models

        models = [item.model for item in started.scoped_models] or available_models(started.registry)
        return len({model.provider for model in models})

    def _status_line(self) -> list[str | Content]:
        if not self._statuses:
            return []
        return ["\n", Content.styled("  ".join(self._statuses.values()), "$pi-dim")]

    def show_path(self, cwd: str, git_branch: str | None) -> None:
        """Before the agent has started: where we are, nothing counted yet."""
        self.update(Content.styled(_one_row(footer_path_line(Path(cwd), git_branch, None)), "$pi-dim"))

    def on_resize(self) -> None:
        last = getattr(self, "_last", None)
        if last is not None:
            self.show_state(*last)


def _one_row(text: str) -> str:
    """The path line, safe to draw and on one row even when a name holds a newline."""
    return for_terminal(text).replace("\n", " ")
