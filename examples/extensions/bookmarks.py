"""Bookmarks in the session tree: ``/mark NAME`` labels the newest entry, ``/jump NAME`` goes
back to it (as /tree would: the next prompt continues from there).

Labels are ordinary ``label`` entries, so /tree shows them and pi reads them too.

    pi-tui -e examples/extensions/bookmarks.py
"""

from __future__ import annotations

from typing import Any

from pi_tui.extensions import ExtensionAPI


def activate(pi: ExtensionAPI) -> None:
    def mark(args: str, ctx: Any) -> None:
        name = args.strip()
        leaf = ctx.session_manager.get_leaf_id()
        if not name or leaf is None:
            ctx.ui.notify("Usage: /mark NAME (after the first message)", "warning")
            return
        pi.set_label(leaf, name)
        ctx.ui.notify(f"Marked {leaf} as {name}")

    async def jump(args: str, ctx: Any) -> None:
        name = args.strip()
        manager = ctx.session_manager
        labelled = [
            entry["id"] for entry in manager.iter_raw_entries() if manager.get_label(entry.get("id")) == name
        ]
        target = labelled[-1] if labelled else None
        if target is None:
            ctx.ui.notify(f"No bookmark called {name!r}", "warning")
            return
        await ctx.wait_for_idle()
        await ctx.navigate_tree(target)
        ctx.ui.notify(f"Back at {name}")

    pi.register_command("mark", handler=mark, description="Bookmark the newest entry", usage="<name>")
    pi.register_command("jump", handler=jump, description="Go back to a bookmark", usage="<name>")
