"""How a figure says which judge made it: the judge's kind and model, and the version of our rules
it was asked by (`rubric.JUDGE_VERSION`, stored on every judgement)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def judge_text(name: str, version: str | None) -> str:
    """`anthropic:claude-opus-4-5 (arena-judge/2)`: one judge and the rules version it was asked by
    (named alone when recorded without one: older, or imported)."""
    return f"{name} ({version})" if version else name


def judge_label(judgements: Iterable[Any]) -> str:
    """`anthropic:claude-opus-4-5 (arena-judge/2)` (`judge_text`); several judges joined by ", " in name
    order; "none" for none."""
    pairs = sorted({(j.judge, j.judge_version or "") for j in judgements if j is not None})
    return ", ".join(judge_text(name, version) for name, version in pairs) or "none"
