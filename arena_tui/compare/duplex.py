"""Duplex figures of a run or a leaderboard row: what the bot did while the user spoke during its
replies (the turns' `duplex` outcomes and `agent_interruptions`, measured on our own timeline by
`arena_tui.spine.duplex`). The one place they are counted; the leaderboard, the report, its CSVs
and the headless summary all show these.

Which turns count: those that ran to their end and are a measurement of the model (`FINISHED`,
`verdicts.counts`: not stopped, not lost to our machine's pace or to infrastructure). The yes/no figures count at any speed (they are decided in
audio time); the yield latency only where the run counts for latency (speed 1, pace kept), like
every other latency.
- yield latency: over the interruptions the bot yielded to (an interruption is what it should stop for);
- interruptions yielded: of the interruptions that came while the bot was speaking;
- backchannels talked through (backchannel selectivity): of the backchannels that came while it spoke;
- side speech answered: of the side speech that played (answering it is the failure);
- agent interrupted the user: turns where the bot's speech began while the user was speaking, of
  the audio turns measured (the whole run, duplex cues or not);
- early start: turns whose reply began before the user had finished (a full-duplex model chooses
  when to speak), of the audio turns measured, and by how much (its p50 over those turns);
- answered: turns the model answered at all (a reply, calls, or the call that ended the session),
  of the turns that count. A paced model's unanswered turn was asked again first; a full-duplex
  model's was its choice (`arena_tui.spine.duplex.FULL_DUPLEX_TURN`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena_tui.spine.events import FINISHED, DuplexOutcome, TurnResult

from ..stats import Distribution, Rate, describe
from ..timing import latency_caveat, latency_counts, latency_text
from ..verdicts import counts


@dataclass
class DuplexFigures:
    cues: int = 0  # cues that played
    yield_ms: list[float] = field(default_factory=list)  # interruptions yielded to (runs counted for latency)
    interruptions: Rate = Rate(0, 0)  # yielded / came while the bot spoke
    backchannels: Rate = Rate(0, 0)  # talked through / came while the bot spoke
    side_speech: Rate = Rate(0, 0)  # answered / played
    agent_interrupted: Rate = Rate(0, 0)  # turns the bot started over the user / turns measured
    early: Rate = Rate(0, 0)  # turns whose reply began before the user finished / turns measured
    early_ms: list[float] = field(default_factory=list)  # by how much, over those turns
    answered: Rate = Rate(0, 0)  # turns answered at all / turns that count

    def __add__(self, other: DuplexFigures) -> DuplexFigures:
        return DuplexFigures(self.cues + other.cues, self.yield_ms + other.yield_ms,
                             self.interruptions + other.interruptions, self.backchannels + other.backchannels,
                             self.side_speech + other.side_speech, self.agent_interrupted + other.agent_interrupted,
                             self.early + other.early, self.early_ms + other.early_ms, self.answered + other.answered)

    @property
    def any(self) -> bool:
        """Whether there is anything to show (a cue played, or a turn measured for agent interruptions)."""
        return bool(self.cues or self.agent_interrupted.n)

    @property
    def yield_latency(self) -> Distribution | None:
        return describe(self.yield_ms)

    @property
    def early_lead(self) -> Distribution | None:
        return describe(self.early_ms)


def duplex_figures(results: Iterable[TurnResult], with_latency: bool, untrusted: Collection[int] = ()) -> DuplexFigures:
    """The figures of a run's turns (module docstring); `with_latency`: the run counts for latency;
    `untrusted`: turns whose latencies do not count (`timing.latency_counts`: input sent late)."""
    f = DuplexFigures()
    for r in results:
        if r.status not in FINISHED or not counts(r.status):
            continue
        f.answered += Rate(int(r.status in ANSWERED), 1)
        if r.agent_interruptions is not None:
            f.agent_interrupted += Rate(int(r.agent_interruptions > 0), 1)
            f.early += Rate(int(r.early_start_ms is not None), 1)  # (measured alongside: the audio turns)
            if r.early_start_ms is not None:
                f.early_ms.append(r.early_start_ms)
        for o in r.duplex or []:
            if o.played is None:
                continue
            f.cues += 1
            if o.kind == "side_speech":
                f.side_speech += Rate(int(bool(o.answered)), 1)
            elif o.yielded is None:
                continue  # the bot was not speaking: nothing to yield or talk through
            elif o.kind == "interruption":
                f.interruptions += Rate(int(o.yielded), 1)
                if o.yielded and o.yield_ms is not None and with_latency and latency_counts(r.status, r.turn_index in untrusted):
                    f.yield_ms.append(o.yield_ms)
            elif o.kind == "backchannel":
                f.backchannels += Rate(int(not o.yielded), 1)
    return f


#: a turn the model answered (a reply, calls, or the call that ended the session)
ANSWERED = ("ok", "ended_session")


def rate_text(r: Rate) -> str:
    """`2/3`, or `–` with nothing to count."""
    return f"{r.passes}/{r.n}" if r.n else "–"


def yield_text(d: Distribution | None) -> str:
    """`p50 310 / p95 640 ms (n 6)`, or `–`."""
    return "–" if d is None else f"p50 {d.p50:,.0f} / p95 {d.p95:,.0f} ms (n {d.n})"


class _Row(Protocol):
    model: str
    benchmark: str
    duplex: DuplexFigures


#: the report's duplex table (`render.sections`) and what the leaderboard screen shows of it
DUPLEX_HEAD = ["model", "benchmark", "cues", "yield latency", "interruptions yielded", "backchannels talked through",
               "side speech answered", "agent interrupted user (turns)", "early start (turns)", "answered (turns)"]


def early_text(f: DuplexFigures) -> str:
    """`1/8 (p50 420 ms ahead)`, or `0/8`, or `–`."""
    d = f.early_lead
    return rate_text(f.early) + (f" (p50 {d.p50:,.0f} ms ahead)" if d is not None else "")


def duplex_cells(f: DuplexFigures) -> list[str]:
    """A row's duplex figures as the report and the leaderboard show them (after model, benchmark)."""
    return [str(f.cues), yield_text(f.yield_latency), rate_text(f.interruptions), rate_text(f.backchannels),
            rate_text(f.side_speech), rate_text(f.agent_interrupted), early_text(f), rate_text(f.answered)]


def duplex_table(rows: Sequence[_Row]) -> list[list[str]]:
    """The report's duplex table: each leaderboard row that has duplex figures."""
    return [DUPLEX_HEAD] + [[r.model, r.benchmark, *duplex_cells(r.duplex)] for r in rows if r.duplex.any]


#: the CSV columns (run_results, model_summary: `tables.py`), docs/reports.md
DUPLEX_COLUMNS = [
    "duplex_cues", "yield_n", "yield_ms_p50", "yield_ms_p95", "interruptions_yielded", "interruptions_during_reply",
    "backchannels_talked_through", "backchannels_during_reply", "side_speech_answered", "side_speech_played",
    "agent_interrupted_turns", "agent_interruption_measured_turns",
    "early_start_turns", "early_start_measured_turns", "early_start_ms_p50", "answered_turns", "answer_counted_turns",
]  # fmt: skip


def duplex_columns(f: DuplexFigures) -> dict[str, Any]:
    d, e = f.yield_latency, f.early_lead
    values = [f.cues, d.n if d else 0, d.p50 if d else None, d.p95 if d else None,
              f.interruptions.passes, f.interruptions.n, f.backchannels.passes, f.backchannels.n,
              f.side_speech.passes, f.side_speech.n, f.agent_interrupted.passes, f.agent_interrupted.n,
              f.early.passes, f.early.n, e.p50 if e else None, f.answered.passes, f.answered.n]
    return dict(zip(DUPLEX_COLUMNS, values, strict=True))


def outcome_text(o: DuplexOutcome, speed: float | None = 1.0) -> str:
    """One cue as a turn's line says it: `interruption: stopped after 310 ms, answered`."""
    kind = o.kind.replace("_", " ")
    if o.played is None:
        return f"{kind}: not played (the reply never became audible)"
    if o.yielded is None:
        what = "bot not speaking"
    elif o.yielded:
        what = f"stopped after {latency_text(o.yield_ms, speed)}"
    else:
        what = "talked on"
    return f"{kind}: {what}" + (", answered" if o.answered else "")


def early_start_text(ms: float, speed: float | None = 1.0) -> str:
    """A turn whose reply began before the user finished, as its line says it: `early start 420 ms before the user finished`."""
    return f"early start {latency_text(ms, speed)} before the user finished"
#: `TurnResult.interrupted` on a turn with duplex cues: the user's scripted speech came over the reply, which
#: the duplex figures score; turn-taking's overlap (`overlap_ms`, the judge's "no overlap") is of the turn's own
#: speech only, so the two never read as one measure contradicting the other
CUE_OVER_REPLY = "user spoke over the reply (a duplex cue: not a turn-taking overlap)"


def interrupted_text(result: TurnResult) -> str | None:
    """What the turn's `interrupted` flag says, named as the measure it is (None: not interrupted):
    on a duplex turn the cue over the reply (`CUE_OVER_REPLY`), else the reply cut (`interrupted`)."""
    if not result.interrupted:
        return None
    return CUE_OVER_REPLY if result.duplex else "interrupted"


def duplex_line(results: Iterable[TurnResult], speed: float | None, untrusted: Collection[int] = ()) -> str | None:
    """A run's duplex figures in one line (the headless summary), its latency labelled when the
    run is sped up; None for a run with nothing to show."""
    f = duplex_figures(results, with_latency=True, untrusted=untrusted)
    if not f.any:
        return None
    parts = [f"agent interrupted the user in {rate_text(f.agent_interrupted)} turns",
             f"early start in {early_text(f)} turns", f"answered {rate_text(f.answered)} turns"]
    if f.cues:
        caveat = latency_caveat(speed)
        d = f.yield_latency
        parts = [f"{f.cues} cue(s)",
                 f"yield latency {yield_text(d)}" + (f" ({caveat})" if caveat and d else ""),
                 f"interruptions yielded {rate_text(f.interruptions)}",
                 f"backchannels talked through {rate_text(f.backchannels)}",
                 f"side speech answered {rate_text(f.side_speech)}", *parts]
    return "duplex (our timeline): " + "; ".join(parts)
