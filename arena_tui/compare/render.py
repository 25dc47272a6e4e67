"""summary.md and report.html from one list of sections, so both always say the same thing.

report.html is one self-contained file: inline CSS and inline SVG (`svg.py`), no script, nothing
fetched when it is opened. summary.md carries the same tables and lists without the plots.

A benchmark's section names its rows by the one rule of row labels (`spine.labels`): what they all
share said once (`all rows: simulator · heuristic judge`), each row what tells it apart, whole in the
tables, whole parts dropped and named in a plot's narrow label. The CSVs keep every row's whole name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from html import escape

from arena_tui.spine.duplex import FULL_DUPLEX_TURN
from arena_tui.spine.labels import Label, label_rows
from arena_tui.spine.source import FULL_DUPLEX_LABEL
from arena_tui.spine.times import duration_text

from .columns import Count, Figure, Percentile, RateFigure, Subset, Words, board_columns, cost_words, has_cost
from .costs import cost_note
from .duplex import duplex_table
from .judging import agreement_cell, run_judge, stored_agreement
from .gap import Family
from .leaderboard import POOLED, BoardRow, Leaderboard
from .pairwise import family_note, gap_families, gap_tables
from .repeats import row_repeats
from .selection import Selection
from ..stats import Rate
from ..timing import UNTRUSTED, speed_text
from ..verdicts import NEVER_ANSWERED, NOT_JUDGED, ORIGINAL, STRICT, human_text, named
from .svg import Bar, Series, Strip, latency_strips, rate_bars, turn_latency_chart
from .turn_latency import turn_latencies

TITLE = "Audio Arena model comparison"
DEFINITIONS = [
    f"{STRICT} (ours): every dimension scored on the turn passes, turn_taking included; over the judged turns "
    "the model played. A turn never played, stopped, lost to this machine's pace or to an infrastructure failure, "
    "or that the judge could not score is no verdict on the model: it counts in no rate and is listed apart "
    "(counted apart). A run the judge never saw at all has no rates: not judged, never 0 %. A run in which the model "
    "got no turn (every one lost to the infrastructure, stopped or never played) has no row: it is listed under Not "
    f"scored. A run the model heard and never answered counts, each turn its failure, and is said: {NEVER_ANSWERED}.",
    f"{ORIGINAL} (the original eval's turn pass): tool use, instruction following and KB grounding, none failing; "
    "same turns.",
    "[a–b]: Wilson 95 % interval for rates; percentile-bootstrap 95 % interval (2000 resamples, fixed seed) "
    "for latency percentiles.",
    "v2v: voice-to-voice on our own timeline (user speech end → audible bot speech). Only runs at speed 1 count; "
    "sped-up runs and runs whose speed was not recorded are listed as excluded. A turn whose user audio this "
    f"machine sent late is left out of every latency figure on its own ({UNTRUSTED}); the run's other turns count.",
    "tool turn: the model made at least one call on the turn. leading silence: first bot audio frame → audible speech. "
    "overlap: turns where the user's and the bot's speech overlapped (>= 100 ms), of the turns measured.",
    "stages (a cascade's, when a row has them): p50 of each stage on our clock, each from the one before: user speech "
    "end → STT final transcript → the user turn's end → LLM first token → TTS first audio played; runs at speed 1.",
    "Rows labelled imported come from the reference harness (`arena-tui import`): its judge's verdicts; latencies "
    "derived on import from its conversation.wav by our rules, at speed 1 (its audio plays in real time).",
    "judge: the judge whose verdicts the figures count (kind:model) and the version of our rules it was asked by: "
    "one per row (runs judged by two judges are two rows, named with their judge where they share a model). "
    "judge agreement: of the verdicts of turns judged more than once (`arena-tui judge RUN --repeat N`), the share "
    "that agree with their turn's majority, which is the verdict that counts; – where no turn was (docs/judging.md).",
    "Rows labelled simulator / protocol fake / heuristic judge come from the local simulator, a protocol fake scripted from "
    "the golden answers, or the offline word-overlap judge: not real model scores.",
    "duplex (user speech scripted into the bot's replies, our timeline): yield latency = the user's onset → the bot's "
    "audio stopped, over the interruptions it yielded to (runs at speed 1); interruptions yielded and backchannels "
    "talked through, of those that came while it spoke; side speech answered, of that played; agent interrupted: "
    "turns where the bot began speaking while the user spoke; early start: turns whose reply began before the user "
    "had finished, and by how much (p50); answered: turns the model answered at all, of those that count (a paced "
    "model's unanswered turn was asked again first). Rules: docs/benchmarks.md (duplex turns).",
    "B − A (gaps between rows): the difference in pass rate on the turns both rows have a verdict on, judged by the "
    "same judge (the rest are listed per pair). Turns of a run lean on each other (a missed call can fail the next), "
    "so both methods read the lag-1 correlation of B − A along the turns and widen for it. One run a side: exact "
    "McNemar test and Newcombe's interval on effective turns (the turns discounted for that correlation; a swing "
    "lasting the whole run is not seen); repeats on either side: paired bootstrap over blocks of turns and runs "
    "(2000 resamples, fixed seed). Not distinguishable: p >= 0.05 (Holm's over a benchmark's pairs when it has several). "
    "pass^k / pass@k: every / at least one of k repeats passes (unbiased estimators); docs/reports.md.",
    "CSV columns ending _mean/_std are over runs (as the reference); pooled columns are over all turns of a row's "
    "runs. ttfb_ms is the service's own report (= provider_ttfb_ms); latency_ms is the reference's: a turn's "
    "wall-clock length, not a response latency. docs/reports.md lists every column.",
]


@dataclass
class Section:
    title: str
    items: list[str] = field(default_factory=list)  # bullet points
    table: list[list[str]] = field(default_factory=list)  # header row first
    plots: list[str] = field(default_factory=list)  # SVG, HTML only
    notes: list[str] = field(default_factory=list)  # after the table


def pct(r: Rate | None, judged: bool = True) -> str:
    """`81.3% [72–88] (13/16)`: rate, Wilson interval, counts; `– (not judged)` for runs never judged."""
    if not judged:
        return f"– ({NOT_JUDGED})"
    if r is None or not r.n:
        return "–"
    lo, hi = r.ci95 or (0.0, 0.0)
    return f"{100 * (r.rate or 0):.1f}% [{100 * lo:.0f}–{100 * hi:.0f}] ({r.passes}/{r.n})"


def ms(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f} ms" + (f" [{ci[0]:,.0f}–{ci[1]:,.0f}]" if ci else "")


def text(figure: Figure) -> str:
    """A column's figure (`columns.py`) as the report's one-line cell."""
    match figure:
        case RateFigure(rate, judged):
            return pct(rate, judged)
        case Percentile(value, ci, _):
            return ms(value, ci)
        case Subset(dist, _):
            return ms(dist.p50 if dist else None)
        case Count(n):
            return str(n)
        case Words():
            return figure.line
    raise TypeError(f"no text for {figure!r}")


Names = Mapping[str, Label]  # a row's whole name -> its label among its section's rows (`spine.labels`)
BAR_LABEL, STRIP_LABEL, SERIES_LABEL = 52, 48, 26  # characters a plot's row label has (`svg.py`)


def _leaderboard_table(board: Leaderboard, rows: list[BoardRow], names: Names) -> list[list[str]]:
    """The leaderboard screen's columns (`columns.board_columns`), best strict pass first; the model
    column says the row's label (what tells it apart from the section's other rows)."""
    cols = [c for c in board_columns(board.dimensions, stages=any(r.stages for r in rows), cost=has_cost(rows)) if c.report]
    table = [[c.heading for c in cols]]
    for r in sorted(rows, key=lambda r: (-(r.strict.rate or 0), r.model)):
        cells = [text(c.figure(r)) for c in cols]
        if cols and cols[0].key == "model":
            cells[0] = names[r.model].text() + cells[0][len(r.model):]  # (a person's verdicts marked after it)
        table.append(cells)
    return table


def _rate_in(rates: Callable[[BoardRow], Mapping[str, Rate]], key: str) -> Callable[[BoardRow], Rate | None]:
    """A row's rate of one dimension or category (a function of its own: each holds its own key)."""
    return lambda r: rates(r).get(key)


def _bars(rows: list[BoardRow], colours: Mapping[str, int], rate_of: Callable[[BoardRow], Rate | None],
          names: Names) -> list[Bar]:
    out = []
    for r in rows:
        x: Rate = rate_of(r) or Rate(0, 0)
        note = f"{x.passes}/{x.n}" if x.n else ("" if r.judged else NOT_JUDGED)
        out.append(Bar(colours[r.model], names[r.model].text(BAR_LABEL), x.rate, x.ci95, note))
    return out


def _plots(board: Leaderboard, bench: str, rows: list[BoardRow], colours: Mapping[str, int], names: Names) -> list[str]:
    strips = []
    for r in rows:
        values = [v for f in r.runs for v in f.v2v]
        note = "" if not r.latency_excluded else f"{r.latency_runs}/{len(r.runs)} runs at {speed_text(1)}"
        if not values:
            note = "; ".join(sorted(set(r.latency_excluded.values()))) or "no voice-to-voice recorded"
        strips.append(Strip(colours[r.model], names[r.model].text(STRIP_LABEL), values, r.v2v.p50 if r.v2v else None,
                            r.v2v_p50_ci, r.v2v.p95 if r.v2v else None, r.v2v_p95_ci, note))  # fmt: skip
    out = [latency_strips(f"Voice-to-voice per turn — {bench} (◆ p50, ▲ p95, bars: 95 % bootstrap)", strips)]
    if bench != POOLED:  # turn numbers are a benchmark's own
        out.append(_over_turns(bench, rows, colours, names))
    groups = [(STRICT, _bars(rows, colours, lambda r: r.strict, names)),
              (ORIGINAL, _bars(rows, colours, lambda r: r.original, names))]
    groups += [(named(d).words, _bars(rows, colours, _rate_in(lambda r: r.dimensions, d), names))
               for d in board.dimensions if any(d in r.dimensions for r in rows)]  # fmt: skip
    out.append(rate_bars(f"Pass rate per dimension — {bench}", groups))
    cats = sorted({c for r in rows for c in r.categories})
    if cats:
        cgroups = [(c, _bars(rows, colours, _rate_in(lambda r: r.categories, c), names)) for c in cats]
        out.append(rate_bars(f"{STRICT.capitalize()} per category — {bench}", cgroups))
    return out


def _over_turns(bench: str, rows: list[BoardRow], colours: Mapping[str, int], names: Names) -> str:
    """Each speed-1 run's voice-to-voice over its turns (the others are on a compressed clock: named)."""
    series, left_out = [], []
    for r in rows:
        for f in r.runs:
            if f.run.latency_excluded:
                left_out.append(f"{f.run.run_id} ({f.run.latency_excluded})")
                continue
            points = turn_latencies(f.run.results.values(), f.run.untrusted)
            series.append(Series(colours[r.model], f"{names[r.model].text(SERIES_LABEL)} #{f.run_index}", points))
    note = f"not drawn: {', '.join(left_out)}" if left_out else ""
    return turn_latency_chart(f"Voice-to-voice over each run's turns — {bench}", series, note)


def sections(board: Leaderboard, sel: Selection, gaps: Mapping[str, Family] | None = None) -> list[Section]:
    """Everything a report says, in order: one section per benchmark (+ pooled), the gaps between
    rows (`gaps`, default every pair's: `pairwise.gap_families`), consistency, runs."""
    gaps = gap_families(board) if gaps is None else gaps
    colours = {m: i for i, m in enumerate(board.models)}
    out = []
    for bench in [*board.benchmarks, POOLED]:
        rows = [r for r in board.rows if r.benchmark == bench]
        if not rows:
            continue
        labels = label_rows([r.naming for r in rows])
        names = {r.model: label for r, label in zip(rows, labels.rows, strict=True)}
        notes = [f"{names[r.model].text()}: latency excluded for " + ", ".join(f"{k} ({v})" for k, v in r.latency_excluded.items())
                 for r in rows if r.latency_excluded]  # fmt: skip
        if (priced := cost_note([c for r in rows for c in (r.cost, r.judge_cost)])) is not None:
            notes.append(priced)
        out.append(Section(bench if bench != POOLED else "All benchmarks (pooled)", items=[labels.header()] if labels.shared else [],
                           table=_leaderboard_table(board, rows, names), plots=_plots(board, bench, rows, colours, names),
                           notes=notes))  # fmt: skip
    for bench, table, notes in gap_tables(gaps):
        out.append(Section(f"Gaps between rows (paired) — {bench}", items=[family_note(gaps)], table=table, notes=notes))
    if any(r.duplex.any for r in board.rows):
        rule = [f"Rows labelled {FULL_DUPLEX_LABEL}: {FULL_DUPLEX_TURN}."] if any(FULL_DUPLEX_LABEL in r.labels
                                                                                 for r in board.rows) else []
        out.append(Section("Duplex: the user speaking during the bot's replies", table=duplex_table(board.rows), notes=rule))
    consistency = Section("Consistency across repeats")
    flips = [["model", "benchmark", "turn", "pattern (run_index:verdict)", "changes", "dimensions that flip", "always fails"]]
    for r in board.rows:
        if r.benchmark == POOLED or len(r.runs) < 2:
            continue
        always = [str(c.turn_index) for c in r.consistency if c.always_fails]
        repeats = row_repeats(r)
        consistency.items.append(
            f"{r.model} on {r.benchmark}: {sum(c.unstable for c in r.consistency)}/{len(r.consistency)} turns flip "
            f"across {len(r.runs)} repeats; always failing: {', '.join(always) or 'none'}"
            + (f"; {repeats.text}" if repeats is not None and repeats.text else "")
        )
        for c in sorted(r.consistency, key=lambda c: (-c.flips, c.turn_index)):
            if c.unstable or c.always_fails:
                dims = ", ".join(f"{d}×{n}" for d, n in c.metric_flips.items())
                flips.append([r.model, r.benchmark, str(c.turn_index), c.pattern, str(c.flips), dims,
                              "yes" if c.always_fails else ""])  # fmt: skip
    if not consistency.items:
        consistency.items.append("no model has two or more runs of one benchmark in this selection")
    if len(flips) > 1:
        consistency.table = flips
    out.append(consistency)
    runs = [["model", "benchmark", "run_index", "run", "status", "duration", "speed", STRICT, ORIGINAL, "counted apart",
             "judge", "judge agreement", "latency", "cost", "judge cost"]]  # fmt: skip
    for f in board.runs:
        latency = f.run.latency_excluded or "counted" + (f" ({f.untrusted} untrusted turn(s) left out)" if f.untrusted else "")
        people = f.run.tally.human_verdicts  # a person's verdicts it counts, marked as the rows are
        runs.append([f.name + (f" ✎{people} a person's" if people else ""), f.run.row.benchmark, str(f.run_index),
                     f.run.run_id, f.run.row.status, duration_text(f.run.row.active_s() * 1000), speed_text(f.run.speed),
                     pct(f.strict, f.run.judged), pct(f.original, f.run.judged), f.run.tally.apart_text() or "–",
                     run_judge(f.run), agreement_cell(stored_agreement(f.run)), latency,
                     cost_words(f.run.cost, f.strict.passes).line, cost_words(f.run.judge_cost, judge=True).line])  # fmt: skip
    items = [f"not scored {k}: {v}" for k, v in board.unscored.items()] + [f"skipped {k}: {v}" for k, v in sel.skipped.items()]
    items += [f"{k}: {NEVER_ANSWERED} (the model heard every turn and answered none: each its failure)"
              for k in board.never_answered]
    out.append(Section("Runs", table=runs, items=items))
    out.append(Section("Definitions", items=list(DEFINITIONS)))
    return out


def _header(board: Leaderboard, sel: Selection, generated_at: datetime) -> list[str]:
    unscored = f" ({len(board.unscored)} more not scored: the model got no turn)" if board.unscored else ""
    mute = f"; {len(board.never_answered)} {NEVER_ANSWERED}" if board.never_answered else ""
    human = human_text(*board.human)  # a person's verdicts over the judge's (`arena-tui review`)
    return [f"generated {generated_at.isoformat(timespec='seconds')}", f"selection: {sel.description}",
            f"{len(board.runs)} runs{unscored}{mute}, models: {', '.join(board.models)}",
            f"benchmarks: {', '.join(board.benchmarks)}", *([f"{human} (arena-tui review)"] if human else [])]  # fmt: skip


_MD_CODE = str.maketrans({"\\": "\\\\", "`": "\\`"})
_MD_LINK = re.compile(r"\](?=[(\[:])")  # `[x](url)`, `[x][ref]`, `[ref]: url`: a link only with this `]`


def _md(text: str) -> str:
    """Text as Markdown shows it and nothing more: a renderer passes raw HTML through, so `<`, `>`
    and `&` (in a model name, a run id, a benchmark's) are entities; a `]` that would close a link
    and every backtick and backslash are escaped, so a name read from an imported file never
    becomes a link (`[x](javascript:…)`) or code, while an interval's `[40–89]` reads as it is;
    a line break would end a row."""
    return _MD_LINK.sub(r"\\]", escape(" ".join(text.splitlines()), quote=False).translate(_MD_CODE))


def _md_cell(text: str) -> str:
    return _md(text).replace("|", "\\|")


def summary_markdown(board: Leaderboard, sel: Selection, generated_at: datetime,
                     gaps: Mapping[str, Family] | None = None) -> str:
    lines = [f"# {TITLE}", ""] + [f"- {_md(h)}" for h in _header(board, sel, generated_at)]
    for s in sections(board, sel, gaps):
        lines += ["", f"## {_md(s.title)}", ""]
        lines += [f"- {_md(i)}" for i in s.items]
        if s.table:
            if s.items:
                lines.append("")
            lines.append("| " + " | ".join(map(_md_cell, s.table[0])) + " |")
            lines.append("|" + "---|" * len(s.table[0]))
            lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in s.table[1:]]
        lines += [f"- {_md(n)}" for n in s.notes]
    return "\n".join(lines) + "\n"


# Tables fit a 1280 px window: cells and headers wrap between words (never inside one; a figure
# keeps its unit), a row's long name anywhere; the scroller stays only for a table wider than any window.
_CSS = """body{font-family:system-ui,sans-serif;margin:16px;color:#111827;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #e5e7eb}
table{border-collapse:collapse;font-size:11px;margin:8px 0;width:100%}
th,td{border:1px solid #e5e7eb;padding:2px 4px;text-align:left;vertical-align:top;overflow-wrap:normal;hyphens:manual}
th{background:#f3f4f6;font-weight:600}td:first-child{overflow-wrap:anywhere;min-width:9em}
td small{color:#6b7280}.wide{overflow-x:auto}.lab{color:#b45309;font-weight:bold}
.note{color:#6b7280;font-size:12px}.plots{display:flex;flex-wrap:wrap;gap:18px}"""


def _cell_html(text: str) -> str:
    """`value [detail]` as the value over a small second line, so wide tables stay readable; a
    figure and its unit (`1,200 ms`) never part."""
    i = text.find(" [")
    if i <= 0:
        return _keep_units(escape(text))
    return f"{_keep_units(escape(text[:i]))}<br><small>{escape(text[i + 1 :])}</small>"


def _keep_units(html: str) -> str:
    return html.replace(" ms", "&nbsp;ms")


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(c.replace('_', ' '))}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_cell_html(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def report_html(board: Leaderboard, sel: Selection, generated_at: datetime, gaps: Mapping[str, Family] | None = None) -> str:
    parts = [f"<h1>{TITLE}</h1>", f'<p class="note">{escape(" · ".join(_header(board, sel, generated_at)))}</p>']
    labelled = sorted({r.model for r in board.rows if r.labels})
    if labelled:
        parts.append(f'<p class="lab">Labelled rows are not real model scores: {escape("; ".join(labelled))}</p>')
    for s in sections(board, sel, gaps):
        parts.append(f"<h2>{escape(s.title)}</h2>")
        if s.items:
            parts.append("<ul>" + "".join(f"<li>{escape(i)}</li>" for i in s.items) + "</ul>")
        if s.table:
            parts.append(_html_table(s.table))
        parts += [f'<p class="note">{escape(n)}</p>' for n in s.notes]
        if s.plots:
            parts.append('<div class="plots">' + "".join(s.plots) + "</div>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{TITLE}</title>'
            f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n")  # fmt: skip
