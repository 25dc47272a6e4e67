"""The notes under the leaderboard: what its figures leave out and why, one line each.

Most important first: the labelled rows, the figures resting on a person's verdict, the judge, what
the costs are (an estimate, of which prices), the runs the model never answered (counted: check the
setup), the runs not scored, latency exclusions, turns counted apart, skipped runs; past the lines the
terminal's height gives them, the last says how many more and of what (never a list that just stops).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

from arena_tui.spine.duplex import FULL_DUPLEX_TURN
from arena_tui.spine.ids import short_ids
from arena_tui.spine.source import FULL_DUPLEX_LABEL

from ..compare.costs import cost_note
from ..compare.judging import row_judge
from ..compare.leaderboard import POOLED, BoardRow
from ..compare.load import Loaded
from ..timing import UNTRUSTED
from ..verdicts import NEVER_ANSWERED, human_text
from .fit import fit_parts


def row_human(row: BoardRow) -> int:
    """How many of the verdicts the row's figures count are a person's (`verdicts.Tally.human`)."""
    return sum(f.run.tally.human_verdicts for f in row.runs)


def listed(head: str, items: list[str], count: str, width: int, style: str, sep: str = ", ",
           elsewhere: str = "") -> Text:
    """`head` then how many (`10 runs`) and the items in one line of `width`: as many whole as fit,
    then `+N more` (never one cut, never a list that just stops); none fitting, the count and where
    they are shown (`elsewhere`)."""
    for shown in range(len(items), 0, -1):
        rest = len(items) - shown
        body = sep.join(items[:shown]) + (f"{sep}+{rest} more" if rest else "")
        line = f"{head}{count}: {body}" if count and len(items) > 1 else f"{head}{body}"
        if len(line) <= width:
            return Text(line, style)
    return Text(f"{head}{count}" + (f" ({elsewhere})" if elsewhere else ""), style)


def board_notes(loaded: Loaded, rows: Sequence[BoardRow], width: int, room: int,
                more: str = "a taller terminal shows them", names: Mapping[str, str] | None = None) -> Text:
    """The notes on `rows` in lines of `width`, at most `room` of them (the last saying how many more
    and `more`: how to see them); a row named by `names` (its whole name -> its label among the rows
    shown, `spine.labels`), else by its whole name."""
    names = names or {}

    def name(row: BoardRow) -> str:
        return names.get(row.model, row.model)

    notes: list[tuple[str, Text]] = []  # (what it is, its line)
    labelled = sorted({r.model for r in rows if r.labels})
    if labelled:
        notes.append(("labelled rows", fit_parts([(
            "labelled rows are not real model scores (simulator / protocol fake / heuristic judge / never judged)",
            "labelled rows are not real model scores")], width, 1)))
    if any(FULL_DUPLEX_LABEL in r.labels for r in rows):  # how its turns were delimited, said where its figures are
        notes.append(("full duplex", fit_parts([(f"{FULL_DUPLEX_LABEL} rows: {FULL_DUPLEX_TURN}",
                                                 f"{FULL_DUPLEX_LABEL}: a turn's answer is what the model said and did "
                                                 "until the next turn started, which waited for it",
                                                 f"{FULL_DUPLEX_LABEL}: a turn = until the next began")], width, 1)))
    people = [f"{name(r)} on {r.benchmark} {n}" for r in rows if r.benchmark != POOLED and (n := row_human(r))]
    if people:  # figures resting on a person's verdict, not the judge's (`arena-tui review`, the turn detail's v)
        said = human_text(*loaded.board.human)
        notes.append(("person's verdicts", listed(f"✎ {said}: ", people, f"{len(people)} rows", width, "",
                                                  sep="; ", elsewhere="✎ in the model column")))
    judges = sorted({row_judge(r) for r in rows if r.judged})
    if judges:  # every figure says which judge made it (each row's is its `judge` column)
        notes.append(("judges", listed("judged by ", judges, "", width, "", sep="; ",
                                       elsewhere=f"{len(judges)} judges: the judge column")))
    if priced := cost_note([c for r in rows for c in (r.cost, r.judge_cost)]):  # what the cost columns are
        notes.append(("cost", fit_parts([(priced, priced.split(" (", 1)[0] + "; the judge's apart")], width, 1)))
    unscored = loaded.board.unscored
    ids = short_ids([*(f.run.run_id for f in loaded.board.runs), *unscored])
    mute = [ids[f.run.run_id] for r in rows if r.benchmark != POOLED for f in r.runs if f.run.tally.never_answered]
    if mute:  # counted in their rows, each turn the model's failure: most often a setup fault
        notes.append(("runs never answered", listed(f"{NEVER_ANSWERED}: ", mute, f"{len(mute)} runs", width, "bold red")))
    if unscored:
        notes.append(("runs not scored", listed("not scored: ", [f"{ids[k]} ({why})" for k, why in unscored.items()],
                                                f"{len(unscored)} runs", width, "", sep="; ",
                                                elsewhere="the model got no turn")))
    excluded = {k: why for r in rows if r.benchmark != POOLED for k, why in r.latency_excluded.items()}
    by_why: dict[str, list[str]] = {}
    for run_id, why in excluded.items():
        by_why.setdefault(why, []).append(ids[run_id])
    for why, runs in by_why.items():
        notes.append(("latency exclusions", listed(f"latency from speed-1 runs only; {why}: ", runs,
                                                   f"{len(runs)} runs", width, "")))
    if untrusted := sum(r.untrusted for r in rows if r.benchmark != POOLED):
        notes.append(("untrusted latencies", fit_parts([(
            f"{untrusted} turn(s) left out of latency: {UNTRUSTED} (the runs' other turns count)",
            f"{untrusted} turn(s) left out of latency: sent late")], width, 1)))
    apart = [f"{name(r)} on {r.benchmark}: {r.apart_text}" for r in rows if r.benchmark != POOLED and r.apart_text]
    if apart:
        notes.append(("turns counted apart", listed("counted apart (not the model's, in no figure): ", apart,
                                                    f"{len(apart)} rows", width, "", sep="; ",
                                                    elsewhere="their counted apart column")))
    for run_id, why in loaded.selection.skipped.items():
        notes.append(("skipped runs", Text(f"skipped {run_id}: {why}")))
    for bench, where in sorted(loaded.unloadable.items()):
        why = where.split(" (", 1)[0]  # the reason, not where it was looked for (`arena-tui benchmarks` says)
        notes.append(("benchmarks without data", Text(f"no benchmark data for {bench} ({why}): no categories")))
    if len(notes) > room:
        left = notes[room - 1:]
        kinds = ", ".join(dict.fromkeys(kind for kind, _ in left))
        count = f"+{len(left)} more notes" if room > 1 else f"{len(left)} notes"
        last = fit_parts([(f"{count} ({kinds}): {more}", f"{count}: {more}", f"{count} ({kinds})", count)], width, 1)
        notes = [*notes[:room - 1], ("", last)]
    style = {"labelled rows": "bold magenta", "person's verdicts": "cyan", "judges": "grey62", "cost": "grey62",
             "skipped runs": "grey62",
             "benchmarks without data": "grey62", "": "grey62"}  # fmt: skip
    lines = [line.copy() for _, line in notes]
    for (kind, _), line in zip(notes, lines, strict=True):
        line.stylize(style.get(kind, "yellow"))
    return Text("\n").join(lines)
