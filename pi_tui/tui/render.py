"""How each chat item reads: titles, collapsed output, diffs, notices, as Textual ``Content``.

Styles name the theme's ``$pi-*`` variables, so a theme switch recolours everything without
rebuilding any text. These are pure functions of an item and two display switches
(``expanded`` for Ctrl+O, ``show_thinking`` for Ctrl+T); the widgets only call them. What an
extension registered to draw (:mod:`pi_tui.view.renderers`) is called from here, guarded.

Text that came from outside (tool output, commands, file names, prompts, labels, summaries,
custom messages, rule texts, error messages) goes through :func:`~pi_tui.text_safety.for_terminal`
here, where it becomes ``Content``: Textual passes ``ESC`` and other control characters straight to
the terminal, where a file's bytes could retitle the window, clear the screen or write the
clipboard (OSC 52). Words of our own need no pass; anything that quotes outside text does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from textual.content import Content

from pi_tui.text_safety import for_terminal
from pi_tui.tui.transcript import (
    BashItem,
    CustomItem,
    InfoItem,
    RuleNoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from pi_tui.view.renderers import custom_renderer, tool_renderers

COLLAPSED_LINES = 5
"""Output lines a collapsed tool card or ``!command`` shows (the rest is one Ctrl+O away)."""
EXPANDED_LINES = 400
"""Even expanded, a card stops here: the full text is in the session and the model saw it."""
SUMMARY_COLLAPSED_LINES = 2
NOTICE_COLLAPSED_LINES = 3
ARG_PREVIEW = 60


def safe_content(content: Content) -> Content:
    """``content`` made by someone else's code (an extension's renderer), safe to draw: unchanged
    when its text holds no control character, else its text redrawn plain (the styling is lost,
    as the spans would no longer line up with the longer, visible text)."""
    plain = content.plain
    safe = for_terminal(plain)
    return content if safe is plain else Content(safe)


def _drawn(render: Callable[..., Content], *args: Any) -> Content:
    """Someone else's renderer, made safe; its failure is shown in its place."""
    try:
        drawn = render(*args)
        return safe_content(drawn if isinstance(drawn, Content) else Content(str(drawn)))
    except Exception as error:  # an extension's bug must not take the chat down
        return Content.styled(
            for_terminal(f"(renderer failed: {type(error).__name__}: {error})"), "$pi-error"
        )


def label_suffix(label: str | None) -> Content:
    return Content.styled(f"  [{for_terminal(label)}]", "$pi-accent bold") if label else Content("")


def user_content(item: UserItem) -> Content:
    text = item.text
    if item.image_count:
        noun = "image" if item.image_count == 1 else "images"
        text = f"{text}\n[{item.image_count} {noun}]" if text else f"[{item.image_count} {noun}]"
    return Content.assemble(
        Content.styled(for_terminal(text), "$pi-user-message-text"), label_suffix(item.label)
    )


def short_path(path: str, cwd: str | None = None) -> str:
    """Paths inside the working folder are shown relative, the home folder as ``~``."""
    if cwd and path.startswith(cwd.rstrip(os.sep) + os.sep):
        return path[len(cwd.rstrip(os.sep)) + 1 :]
    home = os.path.expanduser("~")
    if home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def _one_line(value: Any, limit: int = ARG_PREVIEW) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_title(name: str, args: dict[str, Any], cwd: str | None = None) -> str:
    """One line saying what the call does: ``read src/app.py:10-49``, ``$ make test``."""
    path = short_path(str(args.get("path", args.get("file_path", ""))), cwd)
    if name == "read":
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            start = offset if isinstance(offset, int) else 1
            end = f"{start + limit - 1}" if isinstance(limit, int) else ""
            return f"read {path}:{start}-{end}"
        return f"read {path}"
    if name in ("write", "edit", "ls"):
        return f"{name} {path or '.'}"
    if name == "bash":
        return f"$ {_one_line(args.get('command', ''), 200)}"
    if name == "grep":
        where = f" in {path}" if path else ""
        return f"grep /{_one_line(args.get('pattern', ''))}/{where}"
    if name == "find":
        where = f" in {path}" if path else ""
        return f"find {_one_line(args.get('pattern', ''))}{where}"
    shown = ", ".join(f"{key}={_one_line(value, 30)}" for key, value in args.items())
    return f"{name} {shown}".rstrip()


def clip_lines(text: str, limit: int, *, tail: bool = False) -> tuple[list[str], int]:
    """At most ``limit`` lines (the last ones with ``tail``) and how many were left out."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return lines, 0
    hidden = len(lines) - limit
    return (lines[-limit:] if tail else lines[:limit]), hidden


def _more_line(hidden: int, expanded: bool, where: str = "more") -> Content:
    if not hidden:
        return Content("")
    key = "" if expanded else ", ctrl+o to expand"
    noun = "line" if hidden == 1 else "lines"
    return Content.styled(f"\n… {hidden} {where} {noun}{key}", "$pi-muted")


def diff_content(diff: str, expanded: bool) -> Content:
    """A unified-ish diff with added, removed and context lines in the theme's diff colours."""
    lines, hidden = clip_lines(diff, EXPANDED_LINES if expanded else COLLAPSED_LINES * 3)
    parts = []
    for line in lines:
        if line.startswith("+") and not line.startswith("+++"):
            style = "$pi-tool-diff-added"
        elif line.startswith("-") and not line.startswith("---"):
            style = "$pi-tool-diff-removed"
        else:
            style = "$pi-tool-diff-context"
        parts.append(Content.styled(for_terminal(line), style))
    return Content.assemble(Content("\n").join(parts), _more_line(hidden, expanded))


def tool_content(item: ToolItem, expanded: bool, cwd: str | None = None) -> Content:
    render_call, render_result = tool_renderers(item.name)
    if render_call is not None:
        title = _drawn(render_call, item.args, expanded).stylize_before("$pi-tool-title bold")
    else:
        title = Content.styled(for_terminal(tool_title(item.name, item.args, cwd)), "$pi-tool-title bold")
    parts = [title, label_suffix(item.label)]
    if render_result is not None and item.status != "pending":
        parts += [Content("\n"), _drawn(render_result, item, expanded)]
        return Content.assemble(*parts)
    details = item.details if isinstance(item.details, dict) else {}
    if item.name == "edit" and item.status == "success" and isinstance(details.get("diff"), str):
        parts += [Content("\n"), diff_content(details["diff"], expanded)]
        return Content.assemble(*parts)
    body = item.output
    if not body and item.name == "write" and item.status != "error":
        body = str(item.args.get("content", ""))
    if body:
        limit = EXPANDED_LINES if expanded else COLLAPSED_LINES
        tail = item.name == "bash"  # a command's last lines say how it ended
        lines, hidden = clip_lines(body, limit, tail=tail)
        style = "$pi-error" if item.status == "error" else "$pi-tool-output"
        if hidden and tail:
            parts.append(_more_line(hidden, expanded, "earlier"))
        parts += [Content("\n"), Content.styled(for_terminal("\n".join(lines)), style)]
        if hidden and not tail:
            parts.append(_more_line(hidden, expanded))
    elif item.status == "pending":
        parts.append(Content.styled("  …", "$pi-muted"))
    if item.name == "bash" and item.seconds is not None and item.status != "pending":
        parts.append(Content.styled(f"\n{took(item.seconds)}", "$pi-muted"))
    return Content.assemble(*parts)


def took(seconds: float) -> str:
    """pi's duration line under a command: tenths of a second."""
    return f"Took {seconds:.1f}s"


def bash_content(item: BashItem, expanded: bool) -> Content:
    command = Content.styled(for_terminal(f"$ {item.command}"), "$pi-bash-mode bold")
    parts = [command, label_suffix(item.label)]
    if item.excluded:
        parts.append(Content.styled("  (not sent to the model)", "$pi-muted"))
    lines, hidden = clip_lines(item.output, EXPANDED_LINES if expanded else COLLAPSED_LINES, tail=True)
    if hidden:
        parts.append(_more_line(hidden, expanded, "earlier"))
    if lines:
        parts += [Content("\n"), Content.styled(for_terminal("\n".join(lines)), "$pi-tool-output")]
    if item.running:
        parts.append(Content.styled("\nrunning… (esc to stop)", "$pi-muted"))
    elif item.cancelled:
        parts.append(Content.styled("\ncancelled", "$pi-warning"))
    elif item.exit_code not in (0, None):
        parts.append(Content.styled(f"\nexit code {item.exit_code}", "$pi-error"))
    if item.truncated and item.full_output_path:
        parts.append(Content.styled(f"\nfull output: {item.full_output_path}", "$pi-muted"))
    if not item.running and item.seconds is not None:
        parts.append(Content.styled(f"\n{took(item.seconds)}", "$pi-muted"))
    return Content.assemble(*parts)


def summary_content(item: SummaryItem, expanded: bool) -> Content:
    """The heading of a compaction or branch summary (the body is markdown: summary_markdown)."""
    if item.kind == "compaction":
        head = "Compacted the conversation"
        if item.tokens_before:
            head += f" ({item.tokens_before:,} tokens summarised)"
    else:
        head = "Summary of the branch left behind"
    return Content.assemble(Content.styled(head, "$pi-accent bold"), label_suffix(item.label))


def summary_markdown(item: SummaryItem, expanded: bool, code_theme: str) -> Any:
    """A summary as pi shows it: its markdown rendered (headings, lists), folded to a few lines
    until expanded; drawn with Rich like a finished reply, so it takes the theme's md* colours."""
    from rich.console import Group
    from rich.markdown import Markdown as RichMarkdown
    from rich.text import Text

    lines, hidden = clip_lines(item.summary, EXPANDED_LINES if expanded else SUMMARY_COLLAPSED_LINES)
    parts: list[Any] = [
        Text(summary_content(item, expanded).plain, style="markdown.h2"),
        RichMarkdown(for_terminal("\n".join(lines)), code_theme=code_theme, hyperlinks=False),
    ]
    if hidden:
        parts.append(Text(_more_line(hidden, expanded).plain.lstrip("\n"), style="dim"))
    return Group(*parts)


def custom_content(item: CustomItem, expanded: bool) -> Content:
    head = Content.styled(f"[{for_terminal(item.custom_type)}]", "$pi-custom-message-label bold")
    renderer = custom_renderer(item.custom_type)
    if renderer is not None:
        try:
            body = renderer(item, expanded)
        except Exception as error:  # an extension's bug must not take the chat down
            failed = f"(renderer for {item.custom_type} failed: {error})"
            body = Content.styled(for_terminal(failed), "$pi-error")
        else:
            body = safe_content(body)
    else:
        body = Content.styled(for_terminal(item.text), "$pi-custom-message-text")
    return Content.assemble(head, label_suffix(item.label), Content("\n"), body)


def notice_content(item: RuleNoticeItem, expanded: bool) -> Content:
    """``⚠ Injecting rule: name`` with the rule's words, or one line per rule when several."""
    rules = item.rules
    if len(rules) == 1:
        rule = rules[0]
        head = Content.styled(for_terminal(f"⚠ Injecting rule: {rule.name}"), "$pi-warning bold")
        body_text = rule.text
    else:
        head = Content.styled(f"⚠ Injecting {len(rules)} rules:", "$pi-warning bold")
        body_text = "\n".join(
            f"• {rule.name}" + (f": {rule.text.splitlines()[0]}" if rule.text and not expanded else "")
            for rule in rules
        )
        if expanded:
            body_text = "\n".join(f"• {rule.name}\n{_indent(rule.text)}".rstrip() for rule in rules)
    lines, hidden = clip_lines(body_text, EXPANDED_LINES if expanded else NOTICE_COLLAPSED_LINES)
    parts = [head, label_suffix(item.label)]
    if lines:
        parts += [Content("\n"), Content.styled(for_terminal("\n".join(lines)), "$pi-warning")]
    parts.append(_more_line(hidden, expanded))
    return Content.assemble(*parts)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def info_content(item: InfoItem) -> Content:
    style = {"error": "$pi-error", "warning": "$pi-warning"}.get(item.level, "$pi-muted")
    text = Content.styled(for_terminal(item.text), style)
    if item.title:
        title = Content.styled(for_terminal(item.title), "$pi-accent bold")
        return Content.assemble(title, Content("\n"), text)
    return text


def info_markdown(item: InfoItem, code_theme: str) -> Any:
    """A markdown message from pi-tui (``/changelog``), drawn with Rich like a finished reply so it
    takes the theme's md* colours; the title uses the heading style."""
    from rich.console import Group
    from rich.markdown import Markdown as RichMarkdown
    from rich.text import Text

    body = RichMarkdown(for_terminal(item.text), code_theme=code_theme, hyperlinks=False)
    if not item.title:
        return body
    return Group(Text(for_terminal(item.title), style="markdown.h2"), Text(""), body)
