"""What a run's record may decide when it came from a file, not from this installation.

A run folder someone else wrote (an export, the reference harness's run) is data: it may say
what ran and what was answered, never where a key goes or what code is imported. So its
connection settings — the endpoint (`base_url`), a service class to import (`service`) and that
class's arguments (`service_args`, which may name a key as `env:NAME` and the URL to send it to)
— are kept on import as provenance, under `IMPORTED_CONNECTION`, and never read back as settings
(`RunSettings.from_recorded`). A resumed imported run connects where this installation's
catalog says, or where the user types again (`resume --base-url/--service`). docs/architecture.md,
"Trust boundary", says the whole rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .urls import endpoint_label

#: the settings that choose where a session connects (and so where a key is sent) or what is imported
CONNECTION = ("base_url", "service", "service_args")
#: an imported run's config: the connection settings its file named, kept to be read, never used
IMPORTED_CONNECTION = "imported_connection"
#: config keys an import writes (ours: `imported_from`; the reference harness's: `imported`)
IMPORT_MARKS = ("imported_from", "imported")


def is_imported(config: Mapping[str, Any]) -> bool:
    """Whether a stored run's config came from a file (an import writes one of `IMPORT_MARKS`;
    the key's presence is what counts, whatever the file set it to)."""
    return any(mark in config for mark in IMPORT_MARKS) or IMPORTED_CONNECTION in config


def named_connection(config: Mapping[str, Any]) -> dict[str, Any]:
    """The connection settings a config names (those set: a URL, a class, its arguments)."""
    return {k: config[k] for k in CONNECTION if config.get(k)}


def as_provenance(config: Mapping[str, Any]) -> dict[str, Any]:
    """An imported run's config: its connection settings moved under `IMPORTED_CONNECTION`
    (added to what an earlier import of it kept there), so nothing of them is a setting."""
    out = {k: v for k, v in config.items() if k not in CONNECTION}
    kept = config.get(IMPORTED_CONNECTION)
    named = {**(dict(kept) if isinstance(kept, Mapping) else {}), **named_connection(config)}
    if named:
        out[IMPORTED_CONNECTION] = named
    else:
        out.pop(IMPORTED_CONNECTION, None)
    return out


def usable(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a stored config a run may be set from: all of it for a run recorded here, an
    imported run's without its connection settings (whatever an older import left in place)."""
    if not is_imported(config):
        return dict(config)
    return {k: v for k, v in config.items() if k not in CONNECTION}


def provenance_text(config: Mapping[str, Any]) -> str:
    """What an imported run's file named for its connection, said without credentials (""
    when it named none): `base_url http://127.0.0.1:9/v1, service a.b:C (its base_url http://…)`."""
    named = config.get(IMPORTED_CONNECTION)
    named = dict(named) if isinstance(named, Mapping) else {}
    if is_imported(config):
        named.update(named_connection(config))
    parts = []
    if named.get("base_url"):
        parts.append(f"base_url {endpoint_label(named['base_url'])}")
    given = named.get("service_args")
    args = given if isinstance(given, Mapping) else {}
    urls = [f"its {k} {endpoint_label(v)}" for k, v in args.items() if isinstance(v, str) and "://" in v]
    if named.get("service") or args:
        parts.append(f"service {str(named.get('service') or '(none)')[:120]}" + (f" ({', '.join(urls)})" if urls else ""))
    return ", ".join(parts)
