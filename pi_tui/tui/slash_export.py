"""``/export`` and ``/share``: the session as a page to read anywhere, or as a session file.

- ``/export`` (or ``/export FILE.html``) writes the whole tree as one self-contained HTML page,
  the secrets the model never sees as placeholders (``--with-secrets`` keeps them);
- ``/export FILE.jsonl`` writes the current branch as a session file pi reads, and
  ``/export FILE.jsonl --tree`` the whole tree (every branch and label);
- ``/share`` exports the page to a temporary file and uploads it as a secret gist with ``gh``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.tui.slash_base import CommandSet

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

_TREE_FLAGS = ("--tree", "--all")
_BRANCH_FLAGS = ("--branch",)
_SECRET_FLAGS = ("--with-secrets",)


def export_arguments(args: str) -> tuple[str | None, set[str], str | None]:
    """``(file, flags, problem)`` from ``/export``'s arguments (a quoted file may hold spaces);
    flags are ``tree`` and ``secrets``."""
    from pi_tui.tui.slash_more import command_path

    known = _TREE_FLAGS + _BRANCH_FLAGS + _SECRET_FLAGS
    words = args.split()
    flags = {"tree"} if any(word in _TREE_FLAGS for word in words) else set()
    if any(word in _SECRET_FLAGS for word in words):
        flags.add("secrets")
    rest = " ".join(word for word in words if word not in known)
    unknown = [word for word in words if word.startswith("--") and word not in known]
    if unknown:
        usage = "/export [file.html [--with-secrets] | file.jsonl [--tree]]"
        return None, flags, f"Unknown option {unknown[0]}: {usage}"
    return command_path(rest), flags, None


@COMMANDS.command("export")
async def export(app: CommandHost, args: str) -> None:
    from pi_tui.html_export import agent_context, default_html_name, export_html, is_html_name
    from pi_tui.secrets.active import current as current_secrets
    from pi_tui.session.export import export_jsonl

    given, flags, problem = export_arguments(args)
    whole_tree = "tree" in flags
    if problem:
        app.say(problem, "error")
        return
    manager = app.agent.manager
    output = Path(given) if given else Path(default_html_name(manager))
    suffix = output.suffix.lower()
    if suffix != ".jsonl" and not is_html_name(output):
        app.say(f"/export writes .html or .jsonl files; {output} is neither.", "error")
        return
    if whole_tree and suffix != ".jsonl":
        app.say("--tree is for .jsonl files: the page always holds the whole tree.", "warning")
    target = Path(app.cwd) / output.expanduser()
    try:
        if suffix == ".jsonl":
            written = await asyncio.to_thread(export_jsonl, manager, target, whole_tree=whole_tree)
        else:
            hide = None if "secrets" in flags else current_secrets()
            written = await asyncio.to_thread(
                export_html,
                manager,
                target,
                theme=app.pi_theme_name,
                agent_dir=app.agent_dir,
                hide=hide,
                context=agent_context(app.agent),  # the prompt and tools it runs with (as pi)
            )
    except OSError as error:
        app.say(f"Cannot write {output}: {error.strerror or error}", "error")
        return
    app.say(f"Session exported to: {written}")


@COMMANDS.command("share")
async def share(app: CommandHost, args: str) -> None:
    from pi_tui.html_export import agent_context, export_html
    from pi_tui.html_export.share import ShareError, check_logged_in, destination_problem, gh_path, upload
    from pi_tui.secrets.active import current as current_secrets

    refused = destination_problem(app.agent.settings.session_share_destination)
    if refused:
        app.say(refused, "error")
        return
    manager = app.agent.manager
    if len(manager) == 0:
        app.say("Nothing to share yet: the session has no entries.", "warning")
        return
    try:
        gh = gh_path()
        await asyncio.to_thread(check_logged_in, gh)
    except ShareError as error:
        app.say(str(error), "error")
        return
    app.say("Exporting and uploading a secret gist…")
    with tempfile.TemporaryDirectory(prefix="pi-tui-share-") as folder:
        page = Path(folder) / "session.html"
        try:
            await asyncio.to_thread(
                export_html,
                manager,
                page,
                theme=app.pi_theme_name,
                agent_dir=app.agent_dir,
                hide=current_secrets(),  # a shared page never carries secrets
                context=agent_context(app.agent),
            )
            shared = await asyncio.to_thread(upload, gh, page)
        except OSError as error:
            app.say(f"Failed to export the session: {error.strerror or error}", "error")
            return
        except ShareError as error:
            app.say(str(error), "error")
            return
    lines = [f"Gist: {shared.gist_url}"]
    if shared.viewer_url:
        lines.insert(0, f"Share URL: {shared.viewer_url}")
    app.say("\n".join(lines))
