"""The leaderboard's columns, once for every surface: the leaderboard screen, the tables of
summary.md and report.html, and where model_summary.csv keeps the same figure.

A column says what it shows of a row as a `Figure` (a rate, a latency percentile, a subset's p50,
a count, or words); each surface draws a figure by its kind (`widgets/board_cells.py`: two-line
cells; `render.py`: one line of text), so a new column is one entry in `board_columns`. The CSVs
keep the reference's column names and order (`tables.py`, docs/reports.md); a column names the
model_summary.csv columns that hold its figure (`csv`), which a test holds to that table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..cost import NO_JUDGE_REQUEST, NO_USAGE, Estimate, money
from ..stats import Distribution, Rate
from ..timing import speed_text
from ..verdicts import APART, ORIGINAL, STRICT, named
from .judging import agreement_cell, row_agreement, row_judge
from .leaderboard import POOLED, BoardRow
from .tables import ORIGINAL as ORIGINAL_CSV
from .tables import STRICT as STRICT_CSV


@dataclass(frozen=True)
class RateFigure:
    """A pass rate over its Wilson interval; a row never judged has none ("not judged", never 0 %)."""

    rate: Rate | None
    judged: bool = True


@dataclass(frozen=True)
class Percentile:
    """A latency percentile over its bootstrap interval, or why there is none."""

    ms: float | None
    ci: tuple[float, float] | None
    why_not: str


@dataclass(frozen=True)
class Subset:
    """The p50 of a subset of turns (tool turns, leading silence) over its n, or why there is none."""

    dist: Distribution | None
    why_not: str


@dataclass(frozen=True)
class Count:
    """Turns of a kind (empty responses, sessions the model ended); grey when none."""

    n: int


@dataclass(frozen=True)
class Words:
    """Anything else: `main` over `detail` on screen; `whole` in the report's one line (default
    `main [detail]`). `tone`: muted | warn | label | italic | rate (coloured by `share`)."""

    main: str
    detail: str = ""
    tone: str = ""
    whole: str | None = None
    share: float | None = None

    @property
    def line(self) -> str:
        if self.whole is not None:
            return self.whole
        return f"{self.main} [{self.detail}]" if self.detail else self.main


Figure = RateFigure | Percentile | Subset | Count | Words


@dataclass(frozen=True)
class Column:
    """One leaderboard column: its header (`label` on screen, `title` in the report), its figure,
    its sort key (None sorts last), the first sort's direction (best first), whether the report's
    tables have it (they are per benchmark: no benchmark column), and the model_summary.csv
    columns that hold the same figure."""

    key: str
    label: str
    figure: Callable[[BoardRow], Figure]
    value: Callable[[BoardRow], Any]
    descending: bool = False
    title: str = ""  # the report's header ("" = the label)
    report: bool = True
    csv: tuple[str, ...] = ()

    @property
    def heading(self) -> str:
        return self.title or self.label


def no_latency(row: BoardRow) -> str:
    """Why a row has no voice-to-voice figure: the exclusions the data layer reports, else nothing measured."""
    reasons = sorted(set(row.latency_excluded.values()))
    return "; ".join(reasons) if reasons and not row.latency_runs else "none recorded"


def _p(d: Distribution | None, name: str) -> float | None:
    return getattr(d, name) if d is not None else None


def _rate(r: Rate | None, judged: bool) -> float | None:
    return r.rate if judged and r is not None else None


def _rate_csv(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_{s}" for s in ("passes", "applicable", "rate", "rate_ci_lower", "rate_ci_upper"))


def model_words(row: BoardRow) -> Words:
    """The model alias over its source labels (simulator, protocol fake, heuristic judge, …); the
    report says the row's whole name, marked `✎3 a person's` when 3 of the verdicts it counts are a
    person's (the screen marks its cell so: `widgets.board_cells.model_cell`)."""
    alias = row.runs[0].run.row.model if row.runs else row.model
    people = sum(f.run.tally.human_verdicts for f in row.runs)
    whole = row.model + (f" ✎{people} a person's" if people else "")
    return Words(alias, f"[{', '.join(row.labels)}]" if row.labels else "", "label", whole=whole)


def _runs(row: BoardRow) -> Words:
    """How many runs, and how many count for latency when some do not (`3 at 1×`)."""
    if not row.latency_excluded:
        return Words(str(len(row.runs)))
    return Words(str(len(row.runs)), f"{row.latency_runs} at {speed_text(1)}", "warn")


def _judge(row: BoardRow) -> Words:
    """The judge's kind over its model (the notes under the table name it whole, with the version
    of our rules; the report says it whole)."""
    label = row_judge(row)
    if "," in label:
        return Words("several", "see notes", whole=label)
    kind, _, model = label.split(" (", 1)[0].partition(":")
    return Words(kind, model, "muted" if kind == "none" else "", whole=label)


def _agreement(row: BoardRow) -> Words:
    fig = row_agreement(row)
    if fig.rate is None:
        return Words("–", "not repeated", "muted", whole=agreement_cell(fig))
    return Words(f"{100 * fig.rate:.0f}% {fig.agree}/{fig.verdicts}", fig.each, "rate", whole=agreement_cell(fig),
                 share=fig.rate)


def _overlap(row: BoardRow) -> Words:
    """Turns whose speech overlapped (`2/30`) over the longest overlap; without turns measured, why."""
    r = row.overlap
    if not r.n:
        return Words("–", no_latency(row), "muted", whole="–")
    longest = f"max {row.overlap_ms.max:,.0f} ms" if row.overlap_ms else ""
    return Words(f"{r.passes}/{r.n}", longest or "none", "warn" if r.passes else "",
                 whole=f"{r.passes}/{r.n} turns" + (f" [{longest}]" if longest else ""))


def _stages(row: BoardRow) -> Words:
    """A cascade's stage p50s, `stt/turn/llm/tts` in ms (they add up to about its pipeline TTFB)."""
    text = row.stages_p50()
    if text is None:
        return Words("–" if row.v2v is None else "no stages", tone="muted", whole="–")
    return Words(text, whole=f"{text} ms")


def _stages_total(row: BoardRow) -> float | None:
    return sum(d.p50 for d in row.stages.values()) if row.stages else None


def _apart(row: BoardRow) -> Words:
    """Its turns in no figure, one reason a line (`2 not played`, `1 stopped`); a third and more are
    summed on the second line (the notes under the table name them all)."""
    shown = row.apart_shown
    lines = [f"{n} {APART[k]}" for k, n in shown.items()]
    if not lines:
        return Words("none", tone="muted", whole="–")
    if len(lines) > 2:
        lines = [lines[0], f"+{sum(shown.values()) - next(iter(shown.values()))} more"]
    return Words(lines[0], lines[1] if len(lines) > 1 else "", "warn", whole=row.apart_text)


def cost_words(cost: Estimate, passes: int | None = None, judge: bool = False) -> Words:
    """A cost over its dollars per passed turn (`passes`: the turns that passed; None: not said),
    labelled in full in the report's line; "price unknown" or "not recorded", never 0 (`judge`: a
    judge's, which without a request is "no request": an offline judge, or none)."""
    if not cost.reports:
        none = NO_JUDGE_REQUEST if judge else NO_USAGE
        return Words("–", none.removeprefix("usage "), "muted", whole=none)
    if not cost.known:
        return Words(cost.short(), "", "muted", whole=cost.text())
    if passes is None:
        return Words(money(cost.usd), "est.", whole=cost.text())
    each = cost.per_pass_text(passes)
    per, said = (f"{each}/pass", f"{each} per passed turn") if passes else (each, each)
    return Words(money(cost.usd), per, whole=f"{money(cost.usd)} [{said}; {cost.label}]")


def cost_text(cost: Estimate, passes: int | None = None, judge: bool = False) -> str:
    """A cost in a plain-text cell, `cost_words`'s: `$0.0123 ($0.0041/pass)`, `$0.0005 (est.)`,
    `price unknown`; `-` when nothing was recorded (a judge's: no request was sent)."""
    if not cost.reports:
        return "-"
    words = cost_words(cost, passes, judge)
    return f"{words.main} ({words.detail})" if cost.known and words.detail else words.main


def costs_text(cost: Estimate, judge: Estimate, passes: int | None = None) -> str:
    """A run's (or a row's) cost and, apart, its judge's in one phrase: `cost $0.0123 ($0.0041/pass)
    · judge $0.0005 (est.)`; what no price covers named (`cost price unknown: m`), never $0."""
    main = cost_text(cost, passes) if cost.known else cost.text()
    return f"cost {main}" + (f" · judge {cost_text(judge, judge=True)}" if judge.reports else "")


def cost_columns() -> list[Column]:
    """What a row's runs cost (the model's side, over its dollars per passed turn) and, apart, what
    judging them cost: estimates by `arena_tui.cost` (the notes under the table say of which prices)."""
    return [
        Column("cost", "cost", lambda r: cost_words(r.cost, r.strict.passes), lambda r: r.cost.value,
               title="cost (estimate)", csv=("cost_usd_total", "cost_per_passed_turn_usd", "cost_note")),
        Column("judge_cost", "judge cost", lambda r: cost_words(r.judge_cost, judge=True), lambda r: r.judge_cost.value,
               title="judge cost (estimate)", csv=("judge_cost_usd_total", "judge_cost_note")),
    ]


def _duplex_rate(r: Rate, good_when_high: bool = True) -> Words:
    """`2/3` over its rate (`compare.duplex`'s figures); `–` with nothing heard."""
    if not r.n or r.rate is None:
        return Words("–", "none heard", "muted", whole="–")
    return Words(f"{r.passes}/{r.n}", f"{100 * r.rate:.0f}%", "rate", whole=f"{r.passes}/{r.n}",
                 share=r.rate if good_when_high else 1 - r.rate)


def duplex_columns() -> list[Column]:
    """What the bot did while the user spoke during its replies (`compare.duplex`): yield latency,
    interruptions yielded, backchannels talked through, side speech answered, the bot starting over
    the user, its reply starting before the user finished, and the turns it answered at all. The
    report has these in its own duplex table (`duplex.duplex_table`), not here."""
    return [
        Column("yield", "yield p50", lambda r: Subset(r.duplex.yield_latency,
                                                      no_latency(r) if r.duplex.interruptions.passes else "none yielded"),
               lambda r: _p(r.duplex.yield_latency, "p50"), report=False, csv=("yield_ms_p50",)),
        Column("yielded", "int yielded", lambda r: _duplex_rate(r.duplex.interruptions),
               lambda r: r.duplex.interruptions.rate, True, report=False, csv=("interruptions_yielded",)),
        Column("backchannel", "bc through", lambda r: _duplex_rate(r.duplex.backchannels),
               lambda r: r.duplex.backchannels.rate, True, report=False, csv=("backchannels_talked_through",)),
        Column("side", "side answered", lambda r: _duplex_rate(r.duplex.side_speech, good_when_high=False),
               lambda r: r.duplex.side_speech.rate, report=False, csv=("side_speech_answered",)),
        Column("agent", "bot over user", lambda r: _duplex_rate(r.duplex.agent_interrupted, good_when_high=False),
               lambda r: r.duplex.agent_interrupted.rate, report=False, csv=("agent_interrupted_turns",)),
        Column("early", "early start", _early, lambda r: r.duplex.early.rate, report=False,
               csv=("early_start_turns", "early_start_ms_p50")),
        Column("answered", "answered", lambda r: _duplex_rate(r.duplex.answered), lambda r: r.duplex.answered.rate, True,
               report=False, csv=("answered_turns",)),
    ]  # fmt: skip


def has_cost(rows: list[BoardRow]) -> bool:
    """Whether any row's runs recorded usage or a judge's request: the cost columns are shown."""
    return any(r.cost.reports or r.judge_cost.reports for r in rows)


def _early(row: BoardRow) -> Words:
    """Turns whose reply began before the user finished (`1/8`) over by how much (p50)."""
    r, d = row.duplex.early, row.duplex.early_lead
    if not r.n:
        return Words("–", "none measured", "muted", whole="–")
    return Words(f"{r.passes}/{r.n}", f"p50 {d.p50:,.0f} ms ahead" if d else "none early", "warn" if r.passes else "",
                 whole=f"{r.passes}/{r.n}" + (f" [p50 {d.p50:,.0f} ms ahead]" if d else ""))


def _dimension_column(d: str) -> Column:
    """The leaderboard's column of one judged dimension (a function of its own: each column's lambdas hold their own `d`)."""
    return Column(f"dim:{d}", named(d).label, lambda r: RateFigure(r.dimensions.get(d), r.judged),
                  lambda r: _rate(r.dimensions.get(d), r.judged), True, title=named(d).words, csv=_rate_csv(f"{d}_pooled"))


def board_columns(dimensions: list[str], stages: bool = False, duplex: bool = False, cost: bool = False) -> list[Column]:
    """model and benchmark (always in view), then by what a comparison reads first: both turn passes
    (ours, the original eval's), latency, how many runs, one per dimension, the judge and its
    agreement, the tool split, silence, overlap, a cascade's stage breakdown (when a row has one:
    `stages`), the duplex figures (when a row's runs had duplex cues or a full-duplex model: `duplex`),
    the cost and the judge's (when a row's runs recorded usage: `cost`, `has_cost`), counts."""
    v2v = "voice_to_voice_ms"
    cols = [
        Column("model", "model", model_words, lambda r: r.model),
        Column("benchmark", "benchmark", lambda r: Words(r.benchmark, tone="italic" if r.benchmark == POOLED else ""),
               lambda r: (r.benchmark == POOLED, r.benchmark), report=False, csv=("benchmark_name",)),
        Column("strict", STRICT, lambda r: RateFigure(r.strict, r.judged), lambda r: _rate(r.strict, r.judged), True,
               csv=_rate_csv(STRICT_CSV)),
        Column("original", ORIGINAL, lambda r: RateFigure(r.original, r.judged), lambda r: _rate(r.original, r.judged),
               True, csv=_rate_csv(ORIGINAL_CSV)),
        Column("p50", "v2v p50", lambda r: Percentile(_p(r.v2v, "p50"), r.v2v_p50_ci, no_latency(r)),
               lambda r: _p(r.v2v, "p50"), csv=(f"{v2v}_p50", f"{v2v}_p50_ci_lower", f"{v2v}_p50_ci_upper")),
        Column("p95", "v2v p95", lambda r: Percentile(_p(r.v2v, "p95"), r.v2v_p95_ci, no_latency(r)),
               lambda r: _p(r.v2v, "p95"), csv=(f"{v2v}_p95", f"{v2v}_p95_ci_lower", f"{v2v}_p95_ci_upper")),
        Column("runs", "runs", _runs, lambda r: len(r.runs), True, csv=("runs", "latency_runs")),
    ]  # fmt: skip
    cols += [_dimension_column(d) for d in dimensions]
    cols += [
        Column("judge", "judge", _judge, row_judge),
        Column("agreement", "judge agree", _agreement, lambda r: row_agreement(r).rate, True, title="judge agreement",
               csv=("judge_agreement_pooled",)),
        Column("tool", "tool p50", lambda r: Subset(r.v2v_tool, "no tool turn" if r.v2v else no_latency(r)),
               lambda r: _p(r.v2v_tool, "p50"), title="v2v tool p50", csv=("voice_to_voice_tool_ms_p50",)),
        Column("non_tool", "non-tool p50", lambda r: Subset(r.v2v_non_tool, no_latency(r)),
               lambda r: _p(r.v2v_non_tool, "p50"), title="v2v non-tool p50", csv=("voice_to_voice_non_tool_ms_p50",)),
        Column("silence", "lead sil p50", lambda r: Subset(r.leading_silence, no_latency(r)),
               lambda r: _p(r.leading_silence, "p50"), title="leading silence p50", csv=("leading_silence_ms_p50",)),
        Column("overlap", "overlap", _overlap, lambda r: r.overlap.rate,
               csv=("overlap_turns", "overlap_measured_turns", "overlap_ms_max")),
    ]  # fmt: skip
    if stages:
        cols.append(Column("stages", "stt/turn/llm/tts p50", _stages, _stages_total, title="stages p50 stt/turn/llm/tts",
                           csv=tuple(f"stage_{k}_ms_p50" for k in ("stt", "turn", "llm", "tts"))))  # fmt: skip
    if duplex:
        cols += duplex_columns()
    if cost:
        cols += cost_columns()
    cols += [
        Column("empty", "empty", lambda r: Count(r.empty_responses), lambda r: r.empty_responses, True,
               csv=("empty_response_total",)),
        Column("ended", "ended", lambda r: Count(r.ended_session), lambda r: r.ended_session, True,
               csv=("model_ended_session_total",)),
        Column("apart", "counted apart", _apart, lambda r: sum(r.apart_shown.values()), True,
               csv=tuple(f"turns_{why}_total" for why in APART)),
    ]  # fmt: skip
    return cols


def sort_rows(rows: list[BoardRow], column: Column, descending: bool) -> list[BoardRow]:
    """Rows by the column's value (model and benchmark break ties); rows without a value last, either way."""
    have = [r for r in rows if column.value(r) is not None]
    without = [r for r in rows if column.value(r) is None]
    have.sort(key=lambda r: (r.model, r.benchmark))
    have.sort(key=column.value, reverse=descending)
    return have + sorted(without, key=lambda r: (r.model, r.benchmark))
