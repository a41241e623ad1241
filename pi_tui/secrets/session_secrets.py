"""The secrets of a session being exported: judged by the session, not by the exporting process.

``pi-tui --export`` may run anywhere, long after the session. What the page must hide is what
pi-tui would have hidden from the model in that session, so the secrets are gathered

- in the session's folder (the header's ``cwd``): its ``.env`` files, ``.agent/secrets.yml``
  and project settings (when that folder still exists; else the exporting folder's settings);
- from the session's recorded environment: every ``NAME=value`` line in it (``env`` output, a
  ``.env`` a tool printed), judged as the environment is (:func:`environment_secrets`); a
  provider's key variable always counts, as pi-tui's own credentials do;
- and from the exporting process: its environment and the credentials it knows (they are the
  user's keys wherever the session ran).

``secrets.enabled`` counts when either the session folder's or the exporting folder's settings
turn it on, and a built-in pattern stays on unless both switch it off.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.secrets.entries import SecretEntry
from pi_tui.secrets.environment import environment_secrets
from pi_tui.secrets.obfuscator import Obfuscator
from pi_tui.secrets.sources import SecretsSetup, build_secrets, with_derived_forms

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.session.manager import SessionManager

_ASSIGNMENT = re.compile(
    r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*(\S.*?)[ \t]*$", re.MULTILINE
)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def recorded_environment(manager: SessionManager) -> tuple[dict[str, str], dict[str, str]]:
    """``(credentials, secrets)``: value -> where, from every ``NAME=value`` line of the session.
    Credentials are the values of providers' key variables (hidden whatever the setting)."""
    from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES

    key_names = KEY_ENV_VAR_NAMES  # every provider's, anthropic's bearer tokens too
    credentials: dict[str, str] = {}
    found: dict[str, str] = {}
    for raw in manager.iter_raw_entries():
        for text in _strings(raw):
            if "=" not in text:
                continue
            for match in _ASSIGNMENT.finditer(text):
                name, value = match.group(1), match.group(2)
                if value[:1] in "\"'" and len(value) >= 2 and value[-1] == value[0]:
                    value = value[1:-1]
                for secret, variable in environment_secrets({name: value}).items():
                    where = f"recorded {variable}"
                    if variable in key_names:
                        credentials.setdefault(secret, where)
                    else:
                        found.setdefault(secret, where)
    return credentials, found


def session_secrets(
    manager: SessionManager, exporting_cwd: str, agent_dir: Path, registry: ModelRegistry | None
) -> SecretsSetup:
    """What an export of ``manager``'s session hides (see the module docstring)."""
    from pi_tui.config.settings import SettingsError, load_settings

    exporting = load_settings(exporting_cwd)
    folder = manager.get_header().cwd
    if not folder or not Path(folder).is_dir():
        folder, settings = exporting_cwd, exporting
    else:
        try:
            settings = load_settings(folder)
        except SettingsError:
            settings = exporting
    if settings is not exporting:
        switch = settings.secrets.model_copy(
            update={
                "enabled": settings.secrets.enabled or exporting.secrets.enabled,
                "disabled_patterns": [
                    name
                    for name in settings.secrets.disabled_patterns
                    if name in exporting.secrets.disabled_patterns
                ],
            }
        )
        settings = settings.model_copy(update={"secrets": switch})
    setup = build_secrets(settings, folder, agent_dir, registry)
    credentials, recorded = recorded_environment(manager)
    added = dict(credentials)
    if setup.enabled:
        for value, where in recorded.items():
            added.setdefault(value, where)
    new = {
        value: SecretEntry("plain", value, source=where)
        for value, where in added.items()
        if value not in setup.obfuscator.plain
    }
    if new:
        old = setup.obfuscator
        plain = {**with_derived_forms(new), **old.plain}
        setup.obfuscator = Obfuscator(old.key, plain, list(old.patterns), old.user_regexes)
        setup.sources["recorded in the session"] = len(new)
    setup.credentials |= set(credentials)
    return setup
