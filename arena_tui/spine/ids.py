"""Which stored id a user's text names: the id itself, else the one id it is a prefix of.

One rule for every command that takes a run or campaign id (`judge`, `export`, `resume`,
`report`, `ui --open`, `campaign show|resume`), so a prefix that works for one works for all,
and an unknown or ambiguous one is the same one line everywhere, naming the candidates.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

SHOWN = 5  # candidates named in an ambiguity message
SHORT = 8  # the fewest characters a listed id is cut to
WHOLE = 12  # an id this short is listed whole


def new_run_id() -> str:
    """A run's id, one form wherever the run starts (TUI, CLI, campaign, engine): 32 hex digits."""
    return uuid.uuid4().hex


class IdError(LookupError):
    """`raw` names no stored id, or more than one: one line, naming the candidates."""


def unique_prefix(raw: str, ids: Iterable[str], *, kind: str, where: object, hint: str = "") -> str:
    """The id `raw` names among `ids`: itself when stored, else the only stored id it begins.

    `kind` ("run", "campaign") and `where` (the database) word the error; `hint` is the command
    that lists the ids ("arena-tui runs"). An empty `raw` names nothing."""
    ids = list(ids)
    if raw in ids:
        return raw
    hits = sorted(i for i in ids if raw and i.startswith(raw))
    if len(hits) == 1:
        return hits[0]
    see = f" (see `{hint}`)" if hint else ""
    if not hits:
        raise IdError(f"{where}: no {kind} {raw!r}{see}")
    more = f", … ({len(hits)} in all)" if len(hits) > SHOWN else ""
    raise IdError(f"{where}: {kind} id {raw!r} is ambiguous: {', '.join(hits[:SHOWN])}{more}")


def short_ids(ids: Iterable[str], least: int = SHORT) -> dict[str, str]:
    """Each id as a list shows it: whole when it is short (`WHOLE`), else its shortest prefix of at
    least `least` characters that begins no other id, which `unique_prefix` (every command) takes back."""
    ordered = sorted(set(ids))

    def common(a: str, b: str) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    out: dict[str, str] = {}
    for i, run_id in enumerate(ordered):
        if len(run_id) <= WHOLE:
            out[run_id] = run_id
            continue
        near = [common(run_id, ordered[j]) for j in (i - 1, i + 1) if 0 <= j < len(ordered)]
        out[run_id] = run_id[: max(least, max(near, default=0) + 1)]
    return out
