"""The judge: per-turn streaming rubric scores (phase 1) and rules enforced in code (phase 2).

Entry points: `JudgeWorker` (bus subscriber for live runs), `rejudge_turn` (the TUI's `r`
key and `arena-tui judge`), `make_backend` (openai | bedrock | heuristic), `summarize`.
"""

from __future__ import annotations

from typing import Any

from .backends import JudgeBackend, PermanentError, RetryPolicy
from .heuristic import HeuristicJudge
from .summary import RunSummary, render_text, summarize, wilson
from .worker import JudgeWorker, judge_turn, rejudge_turn

BACKENDS = ("openai", "bedrock", "heuristic")


def make_backend(kind: str, model: str | None = None, **options: Any) -> JudgeBackend:
    """`--judge openai|bedrock|heuristic` (+ `--judge-model`); raises PermanentError on bad setup."""
    if kind == "auto":
        from .options import resolve_kind

        kind = resolve_kind(kind)
    if kind == "heuristic":
        return HeuristicJudge()
    if kind == "openai":
        from .openai_judge import DEFAULT_OPENAI_MODEL, OpenAIJudge

        opts = {k: v for k, v in options.items() if k in ("base_url", "api_key", "timeout_s") and v is not None}
        return OpenAIJudge(model or DEFAULT_OPENAI_MODEL, **opts)
    if kind == "bedrock":
        from .bedrock_judge import DEFAULT_BEDROCK_MODEL, BedrockJudge

        opts = {k: v for k, v in options.items() if k in ("region", "endpoint_url", "timeout_s") and v is not None}
        return BedrockJudge(model or DEFAULT_BEDROCK_MODEL, **opts)
    raise PermanentError(f"unknown judge {kind!r} (choose {', '.join(BACKENDS)})")


__all__ = [
    "BACKENDS", "HeuristicJudge", "JudgeBackend", "JudgeWorker", "PermanentError", "RetryPolicy",
    "RunSummary", "judge_turn", "make_backend", "rejudge_turn", "render_text", "summarize", "wilson",
]
