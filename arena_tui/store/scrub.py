"""Secret scrubbing: the one place that decides what counts as a secret before anything is written
or shown.

Secrets are read from the environment and never meant to be stored, but they leak in by value
(an API key echoed in a provider's error), by name (a config field called `api_key`) and inside
URLs (`wss://user:pass@host`, `?api_key=…`). Everything the store serialises, and every log line
added with `scrub_log_record`, passes through here; an endpoint named in error text (the judge's)
is `endpoint_label` (`spine.urls`, re-exported here): the URL without the parts where credentials hide.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from arena_tui.spine.env_refs import is_env_ref
from arena_tui.spine.urls import endpoint_label as endpoint_label  # (its one home is the spine)

if TYPE_CHECKING:
    from loguru import Record

REDACTED = "[REDACTED]"

_SECRET_WORDS = r"key|token|secret|password|passwd|credential"
_SECRET_NAME = re.compile(_SECRET_WORDS, re.IGNORECASE)
_SECRET_VALUE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}"  # OpenAI / xAI style
    r"|xai-[A-Za-z0-9_\-]{16,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*)"
)
# `scheme://userinfo@host`: the userinfo (user:password, or a bare token) is a credential.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@\"'<>\\]+@")
# `?api_key=…`, `&key=…`, `;token=…`, `sig=`/`auth=` too: a query parameter named like a secret.
_URL_SECRET_PARAM = re.compile(
    rf"(?i)([?&;][^=&#\s\"'<>\\]*(?:{_SECRET_WORDS}|sig|signature|auth)[^=&#\s\"'<>\\]*=)[^&#\s\"'<>\\]+"
)


def has_secret(text: str) -> bool:
    """Whether `text` holds anything `scrub_text` would replace (cheap test before re-parsing)."""
    return bool(_SECRET_VALUE.search(text) or _URL_USERINFO.search(text) or _URL_SECRET_PARAM.search(text))


def scrub_text(text: str) -> str:
    """Replace anything shaped like an API key, and credentials inside URLs, in free text."""
    text = _SECRET_VALUE.sub(REDACTED, text)
    text = _URL_USERINFO.sub(rf"\1{REDACTED}@", text)
    return _URL_SECRET_PARAM.sub(rf"\1{REDACTED}", text)


def scrub_config(value: object, _name: str = "") -> object:
    """Copy of a config with secret-named text values and key-shaped strings redacted.

    Numbers and booleans under secret-like names stay (`max_tokens` is a setting, not a secret).
    """
    if isinstance(value, dict):
        return {k: scrub_config(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_config(v, _name) for v in value]
    if isinstance(value, str):
        if _name and _SECRET_NAME.search(_name) and value and not is_env_ref(value):
            return REDACTED  # (an `env:NAME` reference names where a key is read, and is kept)
        return scrub_text(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    # Anything else (paths, enums, objects) is stored as its text.
    return scrub_config(str(value), _name)


def scrub_log_record(record: Record) -> bool:
    """A loguru `filter=` that scrubs each record's message in place (and keeps the record), so
    whatever a library logs (Pipecat logs the URL it connects to) reaches the sink scrubbed."""
    record["message"] = scrub_text(str(record["message"]))
    return True
