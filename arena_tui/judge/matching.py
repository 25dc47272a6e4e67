"""Call matching for the judge: the engine's own canonical matching, plus the ID rule.

The run engine answers calls with the same notion of "same call" (`arena_tui.spine.calls`),
so the two can never disagree about what matched.
"""

from __future__ import annotations

import json
from typing import Any

from arena_tui.spine.benchmark import ExpectedCall
from arena_tui.spine.calls import args_match, canonical_args

__all__ = ["call_matches", "canonical_args", "ids_equal"]


def call_matches(expected: ExpectedCall, name: str, args: dict[str, Any]) -> bool:
    """Exact (canonical) match of name and arguments."""
    return name == expected.name and args_match(expected, args or {})


def _is_id_key(key: str) -> bool:
    k = key.lower()
    return k in ("id", "ids") or k.endswith("_id") or k.endswith("_ids")


def _key(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def ids_equal(expected: ExpectedCall, args: dict[str, Any]) -> bool:
    """IDs must match exactly even where the judge may call other arguments equivalent.

    Only list order is forgiven (a list of IDs is compared as a multiset).
    """
    got_all = canonical_args(args or {})
    want_all = canonical_args(expected.args)
    for key, want in want_all.items():
        if not _is_id_key(key):
            continue
        got = got_all.get(key)
        if isinstance(want, list) and isinstance(got, list):
            if sorted(map(_key, want)) != sorted(map(_key, got)):
                return False
        elif _key(want) != _key(got):
            return False
    return True
