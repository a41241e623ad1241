"""Errors of the model layer. Messages are written for the user."""

from __future__ import annotations


class ProviderError(Exception):
    """A request or stream failed.

    ``retryable`` says whether trying again may help (rate limits, overload, server errors,
    dropped connections); ``retry_after`` is the server's own wait hint in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        context_overflow: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.context_overflow = context_overflow


class ConfigError(Exception):
    """models.json or a model/provider choice cannot be used; names the file and problem."""
