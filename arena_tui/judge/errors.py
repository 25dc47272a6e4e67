"""How one judge attempt can fail; the retry loop (`backends.judge_with_retries`) acts on the kind."""

from __future__ import annotations


class InvalidOutput(Exception):
    """The judge answered, but not with JSON that fits the schema (retried)."""


class TransientError(Exception):
    """Rate limit, server error, timeout or connection failure (retried)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s  # the server's Retry-After, honoured up to max_delay_s


class PermanentError(Exception):
    """Retrying cannot help (bad credentials, unknown model, bad request)."""
