"""The judge: per-turn streaming rubric scores (phase 1) and rules enforced in code (phase 2).

Entry points: `JudgeWorker` (bus subscriber for live runs), `rejudge_turn` (the TUI's `r`
key and `arena-tui judge`), `make_backend` (the kinds of `arena_tui.spine.judges`: openai, anthropic,
google, bedrock, local, heuristic), `summarize`; `agreement` (`judge RUN --repeat N`).
"""

from __future__ import annotations

from .backends import JudgeBackend, PermanentError, RetryPolicy
from .factory import BACKENDS, make_backend
from .heuristic import HeuristicJudge
from .summary import RunSummary, render_text, summarize, wilson
from .worker import JudgeWorker, judge_turn, rejudge_turn

__all__ = [
    "BACKENDS", "HeuristicJudge", "JudgeBackend", "JudgeWorker", "PermanentError", "RetryPolicy",
    "RunSummary", "judge_turn", "make_backend", "rejudge_turn", "render_text", "summarize", "wilson",
]
