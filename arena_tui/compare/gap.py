"""The gap between two rows (or two runs), paired: which turns pair, B − A on them for the strict
pass and each dimension, and how a surface says it. Every surface that compares two rows (compare,
the leaderboard's gap, the report's pairwise.csv and report.html, a campaign's gaps) calls
`pair_gap`, so none can tell another number for the same pair.

What pairs (`pairing`): a turn of the benchmark both sides have a verdict on, by the one counting
rule (`StoredRun.tally`: the turns the model played and the judge judged), judged by the same judge
(its kind:model and rules version) on both sides; a person's verdict over it counts as every figure
counts it. Every other turn is left out and named (`Pairing.left_out`: "not played on B", "judged
by different judges"). Rows of different benchmarks pair nothing. The statistics are
`arena_tui.stats.paired`: one run a side, McNemar's exact test and Newcombe's interval on effective
turns (the paired turns discounted for their lag-1 correlation along turn order); repeats on either
side, the two-stage paired bootstrap over turn blocks and runs. Their words are made here alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from arena_tui.spine.labels import Labels, label_rows

from ..stats.paired import BOOTSTRAP, MCNEMAR, Gap, Verdict, holm, paired_gap
from ..verdicts import APART, STRICT, named, ordered
from .leaderboard import POOLED, BoardRow
from .stored import StoredRun

STRICT_KEY = "strict"  # the figure key of the strict row rule; a dimension's key is its name
PERSON = "a person"  # the judge of a turn only a person's verdict decides


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its name (the row's group, or a run's) and its runs, in repeat order;
    a row's model and label parts, as `spine.labels` names it beside the others (`side_labels`)."""

    name: str
    benchmark: str
    runs: tuple[StoredRun, ...]
    model: str = ""
    parts: tuple[str, ...] = ()

    @property
    def naming(self) -> tuple[str, tuple[str, ...]]:
        return (self.model, self.parts) if self.model else (self.name, ())


def row_side(row: BoardRow) -> Side:
    return Side(row.model, row.benchmark, tuple(f.run for f in row.runs), row.alias, row.parts)


def side_labels(sides: Sequence[Side]) -> tuple[Labels, dict[str, str]]:
    """The sides shown together named by the one rule of row labels (`spine.labels`): what they all
    share (its header), and each side's name -> its label (what tells it apart, whole)."""
    unique = list({s.name: s for s in sides}.values())
    labels = label_rows([s.naming for s in unique])
    return labels, {s.name: label.text() for s, label in zip(unique, labels.rows, strict=True)}


def run_side(run: StoredRun) -> Side:
    return Side(f"{run.group} · {run.run_id}", run.row.benchmark, (run,))


def judge_of(run: StoredRun, turn: int) -> str:
    """Who judged the turn's verdict that counts: the judge's kind:model (rules version), or a person alone."""
    st = run.standing.get(turn)
    j = st.machine if st is not None else None
    if j is None:
        return PERSON
    return f"{j.judge} ({j.judge_version})" if j.judge_version else j.judge


def _why_not(side: Side, turn: int, letter: str) -> str:
    """Why no run of the side counts the turn: the reason most of its runs give."""
    reasons = Counter(APART[why] if (why := r.apart(turn)) else f"not in {letter}'s plan"
                      for r in side.runs if turn not in r.tally.rows)  # fmt: skip
    return f"{reasons.most_common(1)[0][0] if reasons else 'no verdict'} on {letter}"


@dataclass(frozen=True)
class Pairing:
    """The turns two sides pair on, each side's verdicts there (run × turn), and the turns left out."""

    turns: tuple[int, ...]
    a: tuple[tuple[dict[str, str] | None, ...], ...]  # per run of A, per paired turn: the verdicts that count
    b: tuple[tuple[dict[str, str] | None, ...], ...]
    left_out: dict[int, str] = field(default_factory=dict)  # turn -> why it pairs nothing
    other_judge: int = 0  # verdicts on paired turns left out: a judge the other side's runs never had there

    @property
    def left_out_text(self) -> str:
        """`3 turns left out: 2 not played on B · 1 judged by different judges` ('' when none)."""
        if not self.left_out:
            return ""
        counts = Counter(self.left_out.values())
        s = "s" * (len(self.left_out) != 1)
        text = f"{len(self.left_out)} turn{s} left out: " + " · ".join(f"{n} {why}" for why, n in counts.most_common())
        return text + (f"; {self.other_judge} verdict(s) by another judge left out" if self.other_judge else "")

    def verdicts(self, key: str) -> tuple[list[list[Verdict]], list[list[Verdict]]]:
        """Each side's runs × paired turns on one figure (`STRICT_KEY` or a dimension): pass, fail or None."""
        def one(v: dict[str, str] | None) -> Verdict:
            if v is None:
                return None
            if key == STRICT_KEY:
                return "fail" not in v.values()
            return {"pass": True, "fail": False}.get(v.get(key, "na"))

        return [[one(v) for v in run] for run in self.a], [[one(v) for v in run] for run in self.b]


Counted = dict[int, tuple[str, dict[str, str]]]  # turn -> (its judge, its verdicts), for the turns a run's figures count


def counted(run: StoredRun, cache: dict[str, Counted] | None = None) -> Counted:
    """The run's counted turns with their judge and verdicts (`cache`: by run id, for a family of pairs)."""
    if cache is not None and run.run_id in cache:
        return cache[run.run_id]
    out = {t: (judge_of(run, t), run.verdicts(t)) for t in run.tally.rows}
    if cache is not None:
        cache[run.run_id] = out
    return out


def pairing(a: Side, b: Side, cache: dict[str, Counted] | None = None) -> Pairing:
    """Which turns pair (module docstring), and each side's verdicts on them."""
    turns = sorted({t for side in (a, b) for r in side.runs for t in r.expected_turns})
    if a.benchmark != b.benchmark:
        return Pairing((), (), (), {t: "different benchmarks" for t in turns})
    seen = {r.run_id: counted(r, cache) for side in (a, b) for r in side.runs}
    paired: list[int] = []
    left_out: dict[int, str] = {}
    keep: dict[tuple[str, int], bool] = {}  # (run id, turn) -> its verdict counts in the pair
    other = 0
    for t in turns:
        judges = [{seen[r.run_id][t][0] for r in side.runs if t in seen[r.run_id]} for side in (a, b)]
        if not judges[0] or not judges[1]:
            left_out[t] = _why_not(a, t, "A") if not judges[0] else _why_not(b, t, "B")
            continue
        common = judges[0] & judges[1]
        if not common:
            left_out[t] = "judged by different judges"
            continue
        paired.append(t)
        for side in (a, b):
            for r in side.runs:
                if t in seen[r.run_id]:
                    keep[(r.run_id, t)] = seen[r.run_id][t][0] in common
                    other += not keep[(r.run_id, t)]

    def rows(side: Side) -> tuple[tuple[dict[str, str] | None, ...], ...]:
        return tuple(tuple(seen[r.run_id][t][1] if keep.get((r.run_id, t)) else None for t in paired) for r in side.runs)

    return Pairing(tuple(paired), rows(a), rows(b), left_out, other)


def figure_gap(p: Pairing, key: str) -> Gap | None:
    """B − A on one figure over the paired turns: one run a side by McNemar on effective turns, else the paired bootstrap."""
    return paired_gap(*p.verdicts(key))


@dataclass(frozen=True)
class Deciding:
    """A turn on which the sides' strict verdicts differ: what decides the gap."""

    turn: int
    a: tuple[int, int]  # (passes, verdicts) over A's runs
    b: tuple[int, int]

    @property
    def shift(self) -> float:
        return self.b[0] / self.b[1] - self.a[0] / self.a[1]

    @staticmethod
    def share(x: tuple[int, int]) -> str:
        return f"{x[0]}/{x[1]}"


@dataclass(frozen=True)
class PairGap:
    """Two sides compared: B − A per figure (strict first, then each dimension either side scored)."""

    a: Side
    b: Side
    pairing: Pairing

    @cached_property
    def figures(self) -> dict[str, Gap | None]:
        """strict pass (always, None when no turn pairs), then each dimension some paired turn scored on both sides."""
        dims = ordered({d for run in (*self.pairing.a, *self.pairing.b) for v in run if v for d in v})
        out = {STRICT_KEY: figure_gap(self.pairing, STRICT_KEY)}
        return out | {d: g for d in dims if (g := figure_gap(self.pairing, d)) is not None}

    @property
    def strict(self) -> Gap | None:
        return self.figures[STRICT_KEY]

    @cached_property
    def deciding(self) -> list[Deciding]:
        """The turns whose strict verdicts differ between the sides, the largest shift in pass share first."""
        a, b = self.pairing.verdicts(STRICT_KEY)
        out = []
        for i, t in enumerate(self.pairing.turns):
            xa, xb = [x for run in a if (x := run[i]) is not None], [x for run in b if (x := run[i]) is not None]
            if xa and xb and sum(xa) * len(xb) != sum(xb) * len(xa):
                out.append(Deciding(t, (sum(xa), len(xa)), (sum(xb), len(xb))))
        return sorted(out, key=lambda d: (-abs(d.shift), d.turn))


def pair_gap(a: Side, b: Side, cache: dict[str, Counted] | None = None) -> PairGap:
    return PairGap(a, b, pairing(a, b, cache))


def figure_name(key: str) -> str:
    """How a figure reads in a gap's line: `strict pass`, or the dimension's words."""
    return STRICT if key == STRICT_KEY else named(key).words


# --- words ------------------------------------------------------------------------------------


def points(x: float) -> str:
    """`+5.0` / `−3.1` percentage points (a true minus sign)."""
    return f"{100 * x:+.1f}".replace("-", "−")


def p_text(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p {p:.3f}" if p < 0.01 else f"p {p:.2f}"


def verdict_word(distinguishable: bool) -> str:
    return "distinguishable" if distinguishable else "not distinguishable"


def gap_core(g: Gap) -> str:
    """`B − A = +5.0 pts [−3.1, +13.2]: not distinguishable`: the words every surface shows for a pair."""
    lo, hi = g.ci
    return f"B − A = {points(g.difference)} pts [{points(lo)}, {points(hi)}]: {verdict_word(g.distinguishable())}"


def correlation_text(g: Gap) -> str:
    """What the turns' correlation did to the method: `, counted as 14.5, their lag-1 correlation +0.35`,
    ` drawn in blocks of 3, …`, or that there was none to discount ('' when too few turns to estimate it:
    the caveat says so)."""
    if g.serial is None:
        return ""
    r = "their lag-1 correlation " + f"{g.serial:+.2f}".replace("-", "−")
    if g.method == MCNEMAR:
        seen = g.effective is not None and g.effective < g.turns
        return f" counted as {g.effective:.1f}, {r}" if seen else f", {r}: none to discount"
    return f" drawn in blocks of {g.block}, {r}" if g.block > 1 else f" drawn one at a time, {r}"


def gap_detail(g: Gap) -> str:
    """How it was reached: `p 0.31, exact McNemar, Newcombe interval on effective turns, 30 turns counted as
    14.5, their lag-1 correlation +0.35; one run a side: …`."""
    runs = f", {g.runs[0]}+{g.runs[1]} runs" if g.method == BOOTSTRAP else ""
    caveat = f"; {g.caveat}" if g.caveat else ""
    return f"{p_text(g.p)}, {g.method}, {g.turns} turn{'s' * (g.turns != 1)}{correlation_text(g)}{runs}{caveat}"


def gap_text(g: Gap | None, adjusted: float | None = None, family: int = 1) -> str:
    """The whole line: the core, then how, then (in a family of pairs) Holm's verdict over them."""
    if g is None:
        return "no turn both sides have a verdict on, by the same judge: no gap to tell"
    text = f"{gap_core(g)} ({gap_detail(g)})"
    if adjusted is not None and family > 1:
        text += f" · Holm over {family} pairs: {verdict_word(g.distinguishable(adjusted))} ({p_text(adjusted)})"
    return text


# --- many pairs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """Every pair of a set of rows compared on one surface, with Holm's adjusted p per figure over
    the pairs (each figure its own family: the strict pass over the pairs, each dimension over them)."""

    pairs: list[PairGap]
    adjusted: dict[tuple[int, str], float]  # (pair index, figure key) -> Holm-adjusted p

    def p(self, index: int, key: str) -> float | None:
        return self.adjusted.get((index, key))

    def text(self, index: int, key: str = STRICT_KEY) -> str:
        """A pair's line on a figure, with Holm's verdict over the family."""
        pair = self.pairs[index]
        return gap_text(pair.figures.get(key), self.p(index, key), len(self.pairs))

    @cached_property
    def labels(self) -> tuple[Labels, dict[str, str]]:
        """Its rows named beside each other (`side_labels`): what they share, each row's label."""
        return side_labels([side for pair in self.pairs for side in (pair.a, pair.b)])


def family(pairs: Sequence[PairGap]) -> Family:
    pairs = list(pairs)
    adjusted: dict[tuple[int, str], float] = {}
    for key in dict.fromkeys(k for pair in pairs for k in pair.figures):
        have = [(i, g) for i, pair in enumerate(pairs) if (g := pair.figures.get(key)) is not None]
        for (i, _), p in zip(have, holm([g.p for _, g in have]), strict=True):
            adjusted[(i, key)] = p
    return Family(pairs, adjusted)


def row_pairs(rows: Sequence[BoardRow], baseline: str | None = None) -> list[tuple[BoardRow, BoardRow]]:
    """The pairs of rows to compare, benchmark by benchmark (pooled rows pair no turns): every two
    rows of one benchmark in the order given (A before B), or each row against `baseline` (A)."""
    out = []
    benches = dict.fromkeys(r.benchmark for r in rows if r.runs)
    for bench in benches:
        mine = [r for r in rows if r.benchmark == bench and r.runs]
        if bench == POOLED:
            continue
        if baseline is not None:
            base = next((r for r in mine if r.model == baseline), None)
            out += [(base, r) for r in mine if base is not None and r is not base]
        else:
            out += [(x, y) for i, x in enumerate(mine) for y in mine[i + 1:]]
    return out


def row_family(rows: Sequence[BoardRow], baseline: str | None = None) -> dict[str, Family]:
    """benchmark -> the family of its row pairs (`row_pairs`), each pair's gap by `pair_gap`."""
    out: dict[str, list[PairGap]] = {}
    cache: dict[str, Counted] = {}  # each run's counted turns read once, however many pairs it is in
    for a, b in row_pairs(rows, baseline):
        out.setdefault(a.benchmark, []).append(pair_gap(row_side(a), row_side(b), cache))
    return {bench: family(pairs) for bench, pairs in out.items()}
