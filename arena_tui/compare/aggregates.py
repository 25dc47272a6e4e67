"""`aggregates.json`: the original eval's ten-run aggregates (kwindla/aiewf-eval), from our figures.

Its `scripts/benchmark_summary.py --json` writes, per model: `valid_runs`, `total_runs`,
`scores` {dimension: {correct, total}} with `turn_pass` (tool use ∧ instruction following ∧ KB
grounding), and the per-turn lists `non_tool_v2vs`, `tool_v2vs` (voice-to-voice above 0, split by
whether the model called a tool), `silence_pads` (leading silence) and `ttfts` (the service's TTFB).
The same object per model here, one per benchmark (and `all`, pooled), from the same rules as every
other figure: counts over our fixed denominators (`arena_tui.verdicts`), latencies only from runs
at speed 1 on our timeline. Our own turn pass (every scored dimension) sits beside theirs under
`arena_tui`, named, never in place of it, and so are a cascade's stage figures (`stages_ms`).
"""

from __future__ import annotations

from typing import Any

from .leaderboard import STAGES, BoardRow, Leaderboard, RunFigures
from ..stats import Rate


def _score(r: Rate) -> dict[str, int]:
    return {"correct": r.passes, "total": r.n}


def row_aggregate(row: BoardRow) -> dict[str, Any]:
    """One model's aggregate object, in the original eval's shape (plus `arena_tui`)."""
    figs = row.runs
    scores = {d: _score(r) for d, r in row.dimensions.items() if r.n}
    scores["turn_pass"] = _score(row.original)
    return {
        "valid_runs": sum(f.run.judged for f in figs),
        "total_runs": len(figs),
        "scores": scores,
        "non_tool_v2vs": [v for f in figs for v in f.v2v_non_tool if v > 0],
        "tool_v2vs": [v for f in figs for v in f.v2v_tool if v > 0],
        "silence_pads": [v for f in figs for v in f.leading_silence],
        "ttfts": [v for f in figs for v in f.provider_ttfb],
        "arena_tui": {
            "turn_pass_strict": _score(row.strict),  # ours: every scored dimension, turn_taking included
            "labels": list(row.labels),
            "latency_excluded": row.latency_excluded,
            "run_ids": [f.run.run_id for f in figs],
            **_stages(figs),
        },
    }


def _stages(figs: list[RunFigures]) -> dict[str, Any]:
    """A cascade's per-turn stage figures (`stages_ms`: stt, turn, llm, tts), as the lists above;
    nothing for a row without stages."""
    stages = {k: [v for f in figs for v in f.stages.get(k, [])] for k in STAGES}
    return {"stages_ms": stages} if any(stages.values()) else {}


def aggregates(board: Leaderboard) -> dict[str, dict[str, Any]]:
    """benchmark (and `all` for a model's pooled row) -> model -> its aggregate."""
    out: dict[str, dict[str, Any]] = {}
    for row in board.rows:
        out.setdefault(row.benchmark, {})[row.model] = row_aggregate(row)
    return out
