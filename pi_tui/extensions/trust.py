"""The trust decisions of ``<agent dir>/trust.json`` (kept in :mod:`pi_tui.config.trust_store`,
which project trust reads before the first frame without importing the extension machinery;
this name stays for extensions and code written against it)."""

from pi_tui.config.trust_store import (
    DECISIONS,
    TRUST_FILE_NAME,
    Decision,
    TrustEntry,
    TrustError,
    TrustStore,
    folder_key,
)

__all__ = [
    "DECISIONS",
    "TRUST_FILE_NAME",
    "Decision",
    "TrustEntry",
    "TrustError",
    "TrustStore",
    "folder_key",
]
