"""What makes two function calls the same call: canonical args and the match rule.

One home for the rule the run engine (`runners.tools`, answering calls) and the judge
(`arena_tui.judge.matching`, scoring them) both apply, so they can never disagree; it sits
in the spine because neither may import the other.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from typing import Any

from .benchmark import ExpectedCall

_TIME_H_MM = re.compile(r"^(\d):([0-5]\d)$")
_ORDER_FREE_KEYS = frozenset({"product_ids"})


def _sort_key(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _canonical(value: object, key: str | None) -> object:
    if isinstance(value, str):
        s = value.strip()
        m = _TIME_H_MM.match(s)
        return f"0{m.group(1)}:{m.group(2)}" if m else s
    if isinstance(value, dict):
        return {k: _canonical(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_canonical(v, None) for v in value]
        return sorted(items, key=_sort_key) if key in _ORDER_FREE_KEYS else items
    return value


def canonical_args(args: dict[str, Any]) -> dict[str, Any]:
    """Normalise what two equivalent calls can differ in: whitespace, 'H:MM', product_ids order."""
    return {k: _canonical(v, k) for k, v in args.items()}


def _same(a: object, b: object) -> bool:
    """Equality by JSON type: bool is not a number, int and float are one number type."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _non_empty(value: object) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, dict, tuple)):
        return len(value) > 0
    return True


def args_match(expected: ExpectedCall, actual_args: dict[str, Any]) -> bool:
    """Whether `actual_args` satisfy `expected` (the name is not checked here)."""
    exp = canonical_args(expected.args)
    act = canonical_args(actual_args)
    flexible = set(expected.flexible_args)
    for key, want in exp.items():
        if key not in act:
            return False
        if key in flexible:
            if not _non_empty(act[key]):
                return False
        elif not _same(want, act[key]):
            return False
    extra = act.keys() - exp.keys() - flexible
    return not extra


def similarity(expected: ExpectedCall, actual_args: dict[str, Any]) -> float:
    """How close the flexible values are (0..1); 1.0 when the call has no flexible args."""
    names = [k for k in expected.flexible_args if k in expected.args]
    if not names:
        return 1.0
    total = 0.0
    for k in names:
        a = _sort_key(_canonical(expected.args[k], k)).casefold()
        b = _sort_key(_canonical(actual_args.get(k), k)).casefold()
        total += 1.0 if a == b else SequenceMatcher(None, a, b).ratio()
    return total / len(names)


def args_key(args: dict[str, Any]) -> str:
    """A hashable form of the canonical args: two calls with the same key are the same call."""
    return _sort_key(canonical_args(args))
