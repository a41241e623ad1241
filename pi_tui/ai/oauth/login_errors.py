"""How a subscription sign-in fails: one line for the user, never a traceback."""

from __future__ import annotations


class LoginError(Exception):
    """The sign-in did not give a credential; the message is one line."""


class LoginCancelled(LoginError):
    """The user stopped the sign-in (Esc, Ctrl+C, an empty paste)."""
