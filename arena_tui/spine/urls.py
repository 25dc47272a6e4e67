"""How an endpoint is named in text anyone may read (an error, a turn's record, a notice): the
URL without the parts where credentials hide. One rule for the judge's errors and the engine's
(a run's infrastructure failures name the endpoint they could not use)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def endpoint_label(url: object) -> str:
    """`scheme://host:port/path` of an endpoint, for error text.

    Userinfo, query and fragment are dropped, not masked: they are where credentials hide in a
    URL (`user:key@host`, `?api_key=`, what `store.scrub.scrub_text` masks in free text), and
    the endpoint is named without them.
    """
    try:
        parts = urlsplit(str(url))
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparsable endpoint URL)"
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, host + port, parts.path.rstrip("/"), "", ""))
