"""Which failures are ours, not the model's: an endpoint that cannot be reached, credentials
refused (401/403), a provider's own failure (5xx), a request or session setup the provider
refused. A turn lost to one of them never reached the model, so it is recorded `infra_error`
(never `no_response`, the model's failure to answer) with `error` saying which, in one line:
what failed and the endpoint as `spine.urls.endpoint_label` names it (no userinfo, no query).

One rule for every loop (audio, text, cascade, rehydrated): `infra_failure` reads a Pipecat
`ErrorFrame` (its exception chain, its HTTP or websocket status, Pipecat's own category) or a
bare exception; `InfraError` is the run giving up on such a failure (`replays.Replays.replace`,
a status no retry can fix), which records the turn under way as `infra_error`.
"""

from __future__ import annotations

import errno
import re
import socket
from collections.abc import Iterator

from pipecat.frames.frames import ErrorFrame
from pipecat.utils.errors import ErrorCategory, extract_http_status_code
from pipecat.utils.security.redaction import redact_secrets

from arena_tui.spine.urls import endpoint_label

from ..base import RunError

UNREACHABLE = "endpoint unreachable"
CONNECTION_LOST = "connection lost"
AUTH_REFUSED = "auth refused"
PROVIDER_ERROR = "provider error"
REQUEST_REFUSED = "request refused"
SESSION_REFUSED = "session setup refused"
RATE_LIMITED = "rate limited"
QUOTA = "quota exhausted"

#: what Pipecat's category says when no status or socket error says more
_BY_CATEGORY = {
    ErrorCategory.CONNECTIVITY: UNREACHABLE,
    ErrorCategory.SERVER: PROVIDER_ERROR,
    ErrorCategory.AUTHENTICATION: AUTH_REFUSED,
    ErrorCategory.AUTHORIZATION: AUTH_REFUSED,
    ErrorCategory.INVALID_REQUEST: REQUEST_REFUSED,
    ErrorCategory.RATE_LIMIT: RATE_LIMITED,
    ErrorCategory.QUOTA: QUOTA,
}
#: a socket that never connected (refused, no such host, no route), by errno
_UNREACHABLE_ERRNO = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}
#: the same said by a library that wraps it in its own type (httpx, botocore, aiohttp, the AWS CRT)
_UNREACHABLE_TYPES = {"ConnectError", "ConnectTimeout", "EndpointConnectionError", "ConnectTimeoutError",
                      "ClientConnectorError", "ClientConnectorDNSError"}
_UNREACHABLE_TEXT = re.compile(
    r"connection refused|connect call failed|CONNECTION_REFUSED|name or service not known|nodename nor servname"
    r"|temporary failure in name resolution|getaddrinfo failed|no route to host|network is unreachable"
    r"|all connection attempts failed|cannot connect to host",
    re.IGNORECASE,
)
_LOST_TYPES = {"RemoteProtocolError", "ReadError", "WriteError", "ServerDisconnectedError", "ConnectionClosedError",
               "IncompleteRead"}
MAX_DETAIL = 160


class InfraError(RunError):
    """The run gave up on an infrastructure failure (`failure`: `infra_failure`'s line): the turn
    under way is recorded `infra_error`, never as the model's."""

    def __init__(self, message: str, failure: str) -> None:
        super().__init__(message)
        self.failure = failure


def infra_failure(error: ErrorFrame | BaseException, endpoint: str) -> str | None:
    """One line naming an infrastructure failure (`kind: endpoint (detail)`), or None when the
    error is not one (a model's refusal, a timeout waiting for its reply, our own bug: those stay
    what they were). `endpoint` is the run's; a URL the exception carries names it better."""
    exc: BaseException | None
    if isinstance(error, ErrorFrame):
        exc, category, message = error.exception, error.category, str(error.error)
    else:
        exc, category, message = error, None, str(error)
    chain = list(_chain(exc))
    status = next((s for s in map(http_status, chain) if s is not None), None)
    kind = _kind_of_status(status) if status is not None else None
    if kind is None:
        kind = _kind_of_socket(chain, message)
    if kind is None and category is not None:
        kind = _BY_CATEGORY.get(category)
    if kind is None:
        return None
    where = endpoint_label(next((u for u in map(_url, chain) if u), endpoint))
    said = f" answered HTTP {status}" if status is not None and status < 1000 else (
        f" closed the session ({status})" if status is not None else "")
    detail = _detail(chain, message, status)
    line = f"{kind}: {where}{said}" + (f" ({detail})" if detail else "")
    return redact_secrets(" ".join(line.split()))


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """The exception and what caused it, outermost first (each once)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def http_status(exc: BaseException) -> int | None:
    """The HTTP status (or a websocket close code) an exception carries: `status_code` (openai,
    anthropic, httpx, through Pipecat's reader), google-genai's `code`, botocore's response metadata."""
    status = extract_http_status_code(exc)
    if status is None:
        code = getattr(exc, "code", None)  # google-genai: an HTTP status, or the websocket's close code
        if isinstance(code, int) and not isinstance(code, bool) and type(exc).__module__.startswith("google"):
            status = code
    if status is None:  # botocore: in the response's metadata
        response = getattr(exc, "response", None)
        if isinstance(response, dict):
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) and status >= 400 else None


def _kind_of_status(status: int) -> str | None:
    if status in (401, 403):
        return AUTH_REFUSED
    if status == 429:
        return RATE_LIMITED
    if status == 402:
        return QUOTA
    if 400 <= status < 500:
        return REQUEST_REFUSED
    if 500 <= status < 600:
        return PROVIDER_ERROR
    if status in (1007, 1008):  # invalid payload, policy: the provider refused the session's setup
        return SESSION_REFUSED
    if status in (1011, 1013, 1014):  # internal error, try again later, bad gateway
        return PROVIDER_ERROR
    return None


def _kind_of_socket(chain: list[BaseException], message: str) -> str | None:
    names = {t.__name__ for e in chain for t in type(e).__mro__}
    unreachable = names & _UNREACHABLE_TYPES or any(
        isinstance(e, (ConnectionRefusedError, socket.gaierror))
        or (isinstance(e, OSError) and e.errno in _UNREACHABLE_ERRNO) for e in chain
    )
    if unreachable or any(_UNREACHABLE_TEXT.search(str(e)) for e in chain) or _UNREACHABLE_TEXT.search(message):
        return UNREACHABLE
    if names & _LOST_TYPES or any(isinstance(e, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError))
                                  for e in chain):
        return CONNECTION_LOST
    return None


def _url(exc: BaseException) -> str | None:
    """The URL a request failed on, when the exception says (httpx through openai/anthropic, aiohttp)."""
    for holder in (exc, getattr(exc, "response", None)):
        try:
            request = getattr(holder, "request", None)
        except RuntimeError:  # httpx: an exception or response built without its request
            request = None
        url = getattr(request, "url", None)
        if url:
            return str(url)
    url = getattr(getattr(exc, "request_info", None), "url", None)
    return str(url) if url else None


def _detail(chain: list[BaseException], message: str, status: int | None) -> str:
    """What the provider or the socket said, short: the provider's own message for a status, the
    innermost error for a socket."""
    text = ""
    if status is not None:
        for e in chain:
            body = getattr(e, "body", None)
            err = body.get("error") if isinstance(body, dict) else None
            got = err.get("message") if isinstance(err, dict) else (err if isinstance(err, str) else None)
            got = got or getattr(e, "message", None)
            if isinstance(got, str) and got:
                text = got
                break
    elif chain:
        text = str(chain[-1]) or type(chain[-1]).__name__
    text = text or message
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
