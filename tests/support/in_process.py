"""``pi-tui ARGS`` through the installed script's entry point, :func:`pi_tui.cli.main`, in the
test process: the same argument handling, files and output as the ``pi-tui`` console script, without
a Python start-up and pi-tui's imports (1-3 s each on the loaded 2-core CI machine, for checks of
arguments, messages, exit codes and the files a command writes).

Tests keep at least one run of each command through the installed script (a subprocess), and run
through it whatever needs a real process: signals, terminals, stdin pipes, process trees.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Ran:
    """What a run gave: the fields of a finished ``subprocess.run`` the tests read."""

    returncode: int
    stdout: str
    stderr: str


def run_main(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> Ran:
    """``pi-tui ARGS`` in ``cwd`` with exactly the environment ``env`` (this process's when None),
    both put back afterwards; stdout and stderr captured as text. stdin stays the test process's
    (``/dev/null``, tests/conftest.py), as a subprocess started with ``stdin=DEVNULL`` has it."""
    from pi_tui.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse's usage errors and --help
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, out.getvalue(), err.getvalue())
