"""Start-up: find the extensions, load the ones allowed to run, say what was left out.

The user's own extensions (agent dir, global settings, ``-e``) load at once. A project's
extensions load when the folder is trusted (:mod:`pi_tui.config.project_trust`: ``-a``, a saved
decision, ``defaultProjectTrust``). When the interactive mode is to ask, they wait in
:attr:`ExtensionSetup.waiting` for the answer; otherwise they are not even listed (the one line
saying what of the project was skipped is the trust's, not this module's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.config.extension_sources import ExtensionSource, discover_extensions
from pi_tui.config.paths import agent_dir
from pi_tui.extensions.runner import ExtensionRunner

if TYPE_CHECKING:
    from pi_tui.config.project_trust import ProjectTrust


class ExtensionSetupError(Exception):
    """A path given with ``-e`` names no extension (the user can fix it: exit 2)."""


@dataclass(slots=True)
class ExtensionSetup:
    runner: ExtensionRunner
    project: Path
    waiting: list[ExtensionSource] = field(default_factory=list)
    """Project extensions waiting for the user's answer (interactive mode only)."""
    lines: list[str] = field(default_factory=list)
    """What to tell the user (load failures, bad paths), one line each."""
    trust: ProjectTrust | None = None
    """This run's project trust (the interactive mode asks when its state is ``ask``)."""


def setup_extensions(
    registry: Any,
    cwd: str,
    cli_paths: list[str] | None,
    *,
    no_extensions: bool = False,
    trust: ProjectTrust | None = None,
) -> ExtensionSetup:
    """Load every extension allowed to run for ``cwd`` into a new runner (bound to the agent
    once it exists: :meth:`ExtensionRunner.bind`). ``trust`` None: decided from the saved
    decision, without asking."""
    from pi_tui.config.project_trust import decide_trust

    if trust is None:
        trust = decide_trust(cwd)
    folder = agent_dir()
    with_project = trust.state in ("trusted", "ask")
    discovered = discover_extensions(
        cwd, folder, cli_paths, no_extensions=no_extensions, with_project=with_project
    )
    named = [problem for problem in discovered.problems if problem.startswith("-e:")]
    if named:
        raise ExtensionSetupError(named[0])
    setup = ExtensionSetup(ExtensionRunner(registry=registry), Path(cwd).resolve(), trust=trust)
    setup.lines += discovered.problems
    setup.runner.report = setup.lines.append  # until a mode shows them its own way
    loading = discovered.trusted()
    if trust.trusted:
        loading += discovered.untrusted()
    elif trust.state == "ask":
        setup.waiting = discovered.untrusted()
    setup.runner.load(loading)
    return setup
