"""How a figure says which judge made it: the judge's kind and model, and the version of our rules
it was asked by (`rubric.JUDGE_VERSION`, stored on every judgement)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def judge_label(judgements: Iterable[Any]) -> str:
    """`anthropic:claude-opus-4-5 (arena-judge/2)`; several judges joined by ", " in name order;
    a judgement recorded without a version (older, or imported) is named alone; "none" for none."""
    pairs = sorted({(j.judge, j.judge_version or "") for j in judgements if j is not None})
    return ", ".join(f"{name} ({version})" if version else name for name, version in pairs) or "none"
