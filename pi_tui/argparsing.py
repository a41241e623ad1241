"""An argument parser for subcommands (``pi-tui import``, ``pi-tui serve``) whose mistakes are
one line and exit 2, like every other user error, instead of argparse's usage dump."""

from __future__ import annotations

import argparse


class ArgumentsError(Exception):
    """What argparse would have printed before exiting; the caller says it in one line."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ArgumentsError(message)
