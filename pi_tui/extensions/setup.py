"""Start-up: find the extensions, load the ones allowed to run, say what was left out.

The user's own extensions (agent dir, global settings, ``-e``) load at once. A project's
extensions load when the folder is trusted in ``trust.json`` or ``--trust`` is given. Otherwise
the interactive mode asks (they wait in :attr:`ExtensionSetup.waiting`), and the other modes
skip them with one line saying how to allow them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.config.paths import agent_dir
from pi_tui.extensions.discovery import ExtensionSource, discover_extensions
from pi_tui.extensions.runner import ExtensionRunner
from pi_tui.extensions.trust import TrustStore


class ExtensionSetupError(Exception):
    """A path given with ``-e`` names no extension (the user can fix it: exit 2)."""


@dataclass(slots=True)
class ExtensionSetup:
    runner: ExtensionRunner
    project: Path
    waiting: list[ExtensionSource] = field(default_factory=list)
    """Project extensions waiting for the user's answer (interactive mode only)."""
    lines: list[str] = field(default_factory=list)
    """What to tell the user (load failures, skipped project extensions), one line each."""


def setup_extensions(
    registry: Any,
    cwd: str,
    cli_paths: list[str] | None,
    *,
    no_extensions: bool = False,
    trust: bool = False,
    interactive: bool = False,
) -> ExtensionSetup:
    """Load every extension allowed to run for ``cwd`` into a new runner (bound to the agent
    once it exists: :meth:`ExtensionRunner.bind`)."""
    folder = agent_dir()
    discovered = discover_extensions(cwd, folder, cli_paths, no_extensions=no_extensions)
    named = [problem for problem in discovered.problems if problem.startswith("-e:")]
    if named:
        raise ExtensionSetupError(named[0])
    setup = ExtensionSetup(ExtensionRunner(registry=registry), Path(cwd).resolve())
    setup.lines += discovered.problems
    setup.runner.report = setup.lines.append  # until a mode shows them its own way
    loading = discovered.trusted()
    untrusted = discovered.untrusted()
    if untrusted:
        store = TrustStore(folder)
        entry = store.entry(setup.project)  # the project's own decision or a parent folder's
        decision = entry.decision if entry is not None else None
        if store.problem:
            setup.lines.append(store.problem)
        names = ", ".join(source.name for source in untrusted)
        if trust or decision == "trusted":
            loading += untrusted
        elif entry is not None and decision == "never":
            through = "" if Path(entry.folder) == setup.project else f" (through {entry.folder})"
            setup.lines.append(
                f"project extensions not loaded ({names}): this folder is marked never to be trusted "
                f"in {store.path}{through}"
            )
        elif interactive:
            setup.waiting = untrusted
        else:
            setup.lines.append(
                f"project extensions not loaded ({names}): this folder is not trusted; "
                "run with --trust, or trust it when pi-tui asks"
            )
    setup.runner.load(loading)
    return setup
