"""What the HTTP judge backends share about a failed or odd reply: which statuses are worth a
retry, a one-line reason without URLs or keys, and a 200 that is not what the SDK expected.
The retrying itself is `backends.judge_with_retries`, never here."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Mapping
from types import ModuleType
from typing import Protocol

import httpx
import httpx2

from .backends import retry_after_seconds
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


class _HttpReply(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def content(self) -> bytes: ...


class RawReply(Protocol):
    """What a `with_raw_response` call of a Stainless-generated client returns (openai's
    `LegacyAPIResponse`, anthropic's `AsyncAPIResponse`): the HTTP reply and its parse."""

    @property
    def http_response(self) -> _HttpReply: ...
    def parse(self) -> object: ...


async def parsed[M](raw: RawReply, expected: type[M], endpoint: str, what: str) -> M:
    """The SDK's parsed reply of a `with_raw_response` call, or InvalidOutput (retried) naming
    what came back instead: an HTML page, garbage, JSON of another shape."""
    http = raw.http_response
    kind = http.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    resp: object
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


def retry_after(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms` when given (more precise; Anthropic and OpenAI send it), else `Retry-After`."""
    ms = headers.get("retry-after-ms")
    try:
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
    except ValueError:
        pass
    return retry_after_seconds(headers.get("retry-after"))


async def sdk_call[T](call: Awaitable[T], sdk: ModuleType, endpoint: str, timeout_s: float) -> T:
    """Await one request of a Stainless-generated client (`openai`, `anthropic`: the same error
    classes) and raise what a failure means for the retry policy, naming the endpoint only."""
    try:
        return await call
    except sdk.APITimeoutError as e:
        raise TransientError(f"APITimeoutError: no reply from {endpoint} within {timeout_s:g} s") from e
    except sdk.APIConnectionError as e:
        raise TransientError(f"APIConnectionError: cannot reach {endpoint}: {cause(e)}") from e
    except sdk.APIStatusError as e:
        text = f"HTTP {e.status_code} from {endpoint}: {short(e)}"
        raise status_error(e.status_code, text, retry_after(e.response.headers)) from e
    except (httpx.HTTPError, httpx2.HTTPError) as e:  # e.g. the body broke off while being read
        raise TransientError(f"{type(e).__name__} reading the reply from {endpoint}: {short(e)}") from e
