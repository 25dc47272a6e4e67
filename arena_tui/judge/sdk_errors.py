"""What the HTTP judge backends share about a failed or odd reply: which statuses are worth a
retry, a one-line reason without URLs or keys, and a 200 that is not what the SDK expected.
The retrying itself is `backends.judge_with_retries`, never here."""

from __future__ import annotations

import inspect
from typing import Any

from .errors import InvalidOutput, PermanentError, TransientError


def transient_status(status: int) -> bool:
    """Timeouts, conflicts, rate limits and server errors (Anthropic's 529 overloaded included)."""
    return status in (408, 409, 429) or status >= 500


def status_error(status: int, text: str, retry_after_s: float | None = None) -> Exception:
    """The error an HTTP status from the judge's server becomes (`text` names it)."""
    return TransientError(text, retry_after_s) if transient_status(status) else PermanentError(text)


def short(e: BaseException) -> str:
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__


def cause(e: BaseException) -> str:
    """What the transport said (e.g. `ConnectError: [Errno 111] Connection refused`); no URL in it."""
    c = e.__cause__ or e
    return f"{type(c).__name__}: {short(c)}"


async def parsed(raw: Any, expected: type, endpoint: str, what: str) -> Any:
    """The SDK's parsed reply of a `with_raw_response` call, or InvalidOutput (retried) naming
    what came back instead: an HTML page, garbage, JSON of another shape."""
    http = raw.http_response
    kind = http.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    try:
        resp = raw.parse()  # the openai client's raw response parses at once, anthropic's is awaited
        if inspect.isawaitable(resp):
            resp = await resp
    except ValueError:  # a body that does not decode as JSON
        resp = None
    if isinstance(resp, expected):
        return resp
    if "json" not in kind or resp is None:
        raise InvalidOutput(f"judge reply from {endpoint} was not JSON ({kind}, {len(http.content)} bytes)")
    raise InvalidOutput(f"judge reply from {endpoint} is not {what}")
