"""An argument parser for subcommands (``pi-tui import``, ``pi-tui serve``) whose mistakes are
one line and exit 2, like every other user error, instead of argparse's usage dump; and the
flags the main command and ``serve`` share."""

from __future__ import annotations

import argparse


class ArgumentsError(Exception):
    """What argparse would have printed before exiting; the caller says it in one line."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ArgumentsError(message)


def add_approval_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    whose: str,
    aliases: tuple[str, ...] = (),
) -> None:
    """pi's ``-a/--approve`` and ``-na/--no-approve`` (``dest="approve"``: True, False, or None
    when neither is given), for ``whose`` project folder(s). One place, so the main command and
    ``serve`` cannot drift apart in what they mean."""
    approval = parser.add_mutually_exclusive_group()
    approval.add_argument(
        "-a",
        "--approve",
        *aliases,
        dest="approve",
        action="store_const",
        const=True,
        default=None,
        help=f"trust {whose} for this run: load the .agent settings, extensions, skills, prompts "
        "and SYSTEM.md without asking" + (f" ({', '.join(aliases)} is the same)" if aliases else ""),
    )
    approval.add_argument(
        "-na",
        "--no-approve",
        dest="approve",
        action="store_const",
        const=False,
        help=f"load none of the .agent settings, extensions, skills, prompts or SYSTEM.md of {whose} "
        "for this run, whatever trust.json says",
    )
