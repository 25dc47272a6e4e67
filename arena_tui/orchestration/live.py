"""What `run`, `demo` and `campaign` share around a live run: which judge scores it, and how it is announced.

The TUI and the headless output agree on the judge (auto resolved once, with the reason:
`arena_tui.judge.choice`) and on how a verdict reads.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass

from arena_tui.spine.errors import CliError
from arena_tui.spine.events import Judgement
from arena_tui.spine.settings import SIM, RunSettings
from arena_tui.spine.source import source_label, variants_text
from ..judge import PermanentError
from ..judge.backends import JudgeBackend
from ..judge.choice import pick_judge
from ..judge.options import backend_from_args
from ..judge.whole_run import requests_said
from ..timing import speed_text


@dataclass(frozen=True)
class JudgeChoice:
    """The judge a run gets: `kind` as resolved from `--judge` (auto → a real judge if its key is
    set, else heuristic), `why` says how auto decided, `make` builds a fresh backend."""

    kind: str  # openai | bedrock | heuristic | none
    why: str
    make: Callable[[], JudgeBackend] | None

    def check(self) -> None:
        """A judge that cannot be built (no key, no region) fails the command now, not after the run."""
        if self.make is None:
            return
        try:
            self.make()
        except PermanentError as e:
            raise CliError(f"--judge {self.kind}: {e}") from None

    @property
    def label(self) -> str:
        notes = [n for n in ("offline word overlap, not an LLM" if self.kind == "heuristic" else "", self.why) if n]
        return f"{self.kind} ({'; '.join(notes)})" if notes else self.kind


def choose_judge(args: argparse.Namespace) -> JudgeChoice:
    """Resolve `--judge` (cheap: environment only; the rule is `judge.choice.pick_judge`);
    `JudgeChoice.check()` then builds it once."""
    pick = pick_judge(getattr(args, "judge", "auto") or "auto")
    if pick.kind == "none":
        return JudgeChoice("none", "", None)
    resolved = argparse.Namespace(**{**vars(args), "judge": pick.kind})

    def make() -> JudgeBackend:
        return backend_from_args(resolved)

    return JudgeChoice(pick.kind, pick.why, make)


def headline(benchmark: str, model: str, *, turns: int, source: str | None, judge: JudgeChoice, db: str | os.PathLike[str],
             speed: float = 1.0, variants: tuple[str, ...] = ()) -> str:
    """The first line of a run: what runs, against what (`source_label`: the simulator or a
    protocol fake, said as which), with which input (`variant_labels`: a human speaker, manual
    commits), judged how, recorded where."""
    against = f"{model} [{source.upper()}]" if source else model
    fast = f", audio at {speed_text(speed)}" if speed != 1 else ""
    return f"run {benchmark} ({turns} turns{fast}) · model {against}{variants_text(variants)} · judge {judge.label} · db {db}"


def verdict_line(j: Judgement, *, heuristic: bool = False) -> str:
    """One judgement as a line: `turn 3 r1 openai:gpt-5-mini: kb_grounding=pass …` (or its error;
    a majority of repeated judgings: `kb_grounding=pass(2/3)`), `· provisional` after a live score
    the whole-run judgement will replace; the run's own judgement (no turn) as
    `whole run r1 …: judged in one request (N input tokens)` (or in N requests, a run split in parts).
    heuristic=True tags it `[heuristic]` where the judge's name may not say so."""
    label = " [heuristic]" if heuristic else ""
    if j.turn_index is None:
        tokens = "offline, no LLM" if j.heuristic else f"{j.usage.input_tokens:,} input tokens"
        done = j.error or f"judged in {requests_said(j.notes)} ({tokens})"
        return f"whole run r{j.revision} {j.judge}{label}: {done}"
    if j.error:
        return f"turn {j.turn_index}: judge error: {j.error}"
    a = getattr(j, "agreement", None)  # a majority of repeated judgings: how many gave each verdict

    def agree(d: str) -> str:
        return f"({a.agree[d]}/{a.judgings})" if a is not None and d in a.agree else ""

    verdicts = " ".join(f"{d}={s.verdict}{agree(d)}" for d, s in j.scores.items())
    rule = f" ({j.rule})" if j.rule else ""
    provisional = " · provisional" if getattr(j, "provisional", False) else ""
    return f"turn {j.turn_index} r{j.revision}{rule} {j.judge}{label}: {verdicts}{provisional}"


def run_source(settings: RunSettings) -> str | None:
    """What a run about to start will talk to, by `spine.source.source_label`'s rule."""
    return source_label(settings.model == SIM or settings.fake, {"fake": settings.fake})

