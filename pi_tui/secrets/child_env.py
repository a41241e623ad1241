"""The environment of every command pi-tui runs for the model or the user's ``!command``: its own
minus what pi-tui holds in trust.

A command the model asks for can print its environment (``env``), and what it prints goes to
the model. So the bash tool, ``!`` commands and extensions' ``exec`` start from
:func:`child_environment`, which leaves out

- ``PI_TUI_SERVE_TOKEN`` (and any ``PI_TUI_*`` variable in :data:`WITHHELD_NAMES`): whoever has
  it drives the server, and so every tool on this machine;
- every variable whose value is a credential pi-tui holds for a provider: a provider key in the
  environment (``ANTHROPIC_API_KEY``...), the variable a models.json ``apiKey`` or header names,
  a key equal to ``--api-key`` or to one saved in auth.json, and values registered with
  :func:`hold` (the server's token when it came from ``--token``).

The user's other variables (``DATABASE_URL``, ``GITHUB_TOKEN``...) stay: the commands need them,
and their values are hidden from the model in tool output when ``secrets.enabled`` is on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

WITHHELD_NAMES = frozenset({"PI_TUI_SERVE_TOKEN"})
"""Variables never passed on, whatever their value."""

_held: set[str] = set()


def hold(value: str) -> None:
    """A credential of this process that no child may see in its environment (a server token
    given on the command line, say)."""
    if value:
        _held.add(value)


def held_credentials(environ: Mapping[str, str]) -> set[str]:
    """The credential values pi-tui holds: those the installed secrets gathered (provider keys,
    ``--api-key``, auth.json, models.json, keys from ``!commands``), the provider variables of
    ``environ`` (so a process that installed no secrets withholds them too), and :func:`hold`'s."""
    from pi_tui.secrets.active import current_setup
    from pi_tui.secrets.sources import known_credentials

    held = set(_held)
    setup = current_setup()
    if setup is not None:
        held |= setup.credentials
    held |= set(known_credentials(None, None, environ))
    return held


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the withheld variables, then ``extra`` (what the
    caller sets on purpose, such as a tool context's variables) on top."""
    environ = os.environ
    held = held_credentials(environ)
    env = {
        name: value
        for name, value in environ.items()
        if name not in WITHHELD_NAMES and (not value or value not in held)
    }
    if extra:
        env.update(extra)
    return env
