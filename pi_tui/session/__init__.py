"""The session core: pi-compatible session trees on disk.

Import from here: :class:`SessionManager`, the entry and message models, context building.
"""

from pi_tui.session.context import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    GENERATED_BRANCH_SUMMARY_PREFIX,
    ModelRef,
    SessionContext,
    bash_execution_text,
    build_session_context,
    convert_to_llm,
)
from pi_tui.session.entries import CURRENT_SESSION_VERSION, SessionHeader
from pi_tui.session.errors import EntryNotFoundError, SessionError, SessionFileError, SessionLockedError
from pi_tui.session.info import SessionInfo
from pi_tui.session.manager import SessionManager
from pi_tui.session.tree import TreeNode

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "CURRENT_SESSION_VERSION",
    "GENERATED_BRANCH_SUMMARY_PREFIX",
    "EntryNotFoundError",
    "ModelRef",
    "SessionContext",
    "SessionError",
    "SessionFileError",
    "SessionHeader",
    "SessionInfo",
    "SessionLockedError",
    "SessionManager",
    "TreeNode",
    "bash_execution_text",
    "build_session_context",
    "convert_to_llm",
]
