"""How a turn's judgement reads in its detail: the verdict that counts per dimension (a person's
marked `✎`, with who, why, when and what the judge said of it before), each revision and what it
changed of what counts (`verdicts.standing`), and who named each cause of a failure."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from arena_tui.spine.events import PROVISIONAL_NOTE, SCOPE_TEXT, Judgement
from arena_tui.spine.times import when_text
from ..compare.failure_mix import PERSON, named_by
from ..run_view import TurnRow
from ..verdicts import ANY, JudgeId, Standing, in_order, judge_id, named, standing_of
from .turn_table import HUMAN, VERDICT_CELL


def cause_source(cause: str, st: Standing[Judgement] | None) -> str:
    """Who named a cause: a person (their verdict named it), else code, the judge, the heuristic (`named_by`)."""
    by = named_by(cause, st)
    if by == PERSON:
        return "named by a person"
    return {"none": "nobody named one"}.get(by, f"decided by {'the ' if by != 'code' else ''}{by}")


def human_text(row: TurnRow) -> Text:
    """Each person's verdict that stands on the turn: on what, by whom, when and why, and what the
    judge said of those dimensions before (its verdict no longer counts there until withdrawn)."""
    st = row.standing
    t = Text()
    if st is None or not st.reviews:
        return t
    machine = st.machine.scores if st.machine is not None else {}
    for r in st.reviews:
        review = r.review
        if review is None:
            continue
        t.append("\n" if t else "")
        verdicts = ", ".join(f"{named(d).words} {sc.verdict}" for d, sc in r.scores.items())
        t.append(f"{HUMAN} a person's verdict ({verdicts})", "bold cyan")
        t.append(f" by {review.by}" + (f", {when_text(review.at)}" if review.at else "") + f": “{review.reason}”")
        for d in r.scores:
            was = machine.get(d)
            t.append(f"\n   the judge said of {named(d).words}: ", "grey62")
            t.append(f"{was.verdict}" + (f" — {was.reasoning}" if was.reasoning else "") if was else "nothing (not scored)",
                     "grey62")
    t.append("\n   v: change or withdraw it (the judge's verdict counts again once withdrawn)", "grey50")
    return t


def judgement_renderable(row: TurnRow) -> Group:
    latest = row.latest
    if latest is None:
        return Group(Text("judgement  ", "bold underline") + Text("not judged yet", "grey50"))
    head = Text("judgement  ", "bold underline")
    head.append(latest.judge)
    if latest.judge_version:
        head.append(f" ({latest.judge_version})", "grey62")
    head.append(f" rev {latest.revision} phase {latest.phase}{', ' + latest.rule if latest.rule else ''}")
    if latest.scope:
        head.append(f" ({SCOPE_TEXT[latest.scope]})")
    agreed = latest.agreement
    if agreed is not None:
        asked = f" of {agreed.asked} asked" if agreed.asked != agreed.judgings else ""
        head.append(f"\nthe majority of {agreed.judgings} judgings{asked} (revisions "
                    f"{', '.join(map(str, agreed.revisions))}): agree = judgings that gave this verdict", "cyan")
    if latest.heuristic:
        head.append("  HEURISTIC (offline rules, not an LLM)", "bold yellow")
    if row.provisional:
        head.append(f"\n{PROVISIONAL_NOTE}", "bold yellow")
    if latest.error:
        head.append(f"\njudge error: {latest.error}", "bold red")
    elif row.judge_error:
        head.append(f"\nre-judge failed: {row.judge_error} (the verdict below stands)", "bold red")
    if who := human_text(row):
        head.append("\n").append_text(who)
    t = Table(expand=True, show_header=True)
    t.add_column("dimension")
    t.add_column("", width=2)
    if agreed is not None:
        t.add_column("agree", width=5)
    t.add_column("reasoning", ratio=3)
    for dim, s in latest.scores.items():
        name = Text.assemble((f"{HUMAN} ", "bold cyan"), dim) if s.by else Text(dim)
        reason = Text.assemble((f"{s.by}: ", "bold cyan"), s.reasoning) if s.by else Text(s.reasoning)
        if agreed is None:
            t.add_row(name, VERDICT_CELL[s.verdict], reason)
            continue
        n = agreed.agree.get(dim)
        share = Text("–" if n is None else f"{n}/{agreed.judgings}",
                     "grey62" if n is None else "green" if n == agreed.judgings else "yellow")
        t.add_row(name, VERDICT_CELL[s.verdict], share, reason)
    parts: list[Any] = [head, t]
    if latest.root_cause:
        parts.append(Text(f"root cause: {latest.root_cause}", "italic"))
    if len(row.judgements) > 1:
        parts.append(Text("history", "bold underline"))
        parts.append(history_text(row.judgements, row.judge))
    return Group(*parts)


def history_text(judgements: list[Judgement], judge: JudgeId | None = ANY) -> Text:
    """Each revision and what it changed of what counts (`verdicts.standing`: the run's `judge`'s and a
    person's verdict over it; an errored revision never replaces a valid one), relative to what
    counted before it. Another judge's revision is listed and said to count nowhere."""
    t = Text()
    revs = in_order(judgements)
    before: dict[str, str] | None = None
    for i, j in enumerate(revs):
        scope = f", {SCOPE_TEXT[j.scope]}" if j.scope else ""
        t.append(f"rev {j.revision} ({j.judge}, phase {j.phase}{', ' + j.rule if j.rule else ''}{scope}): ")
        st = standing_of(revs[: i + 1], judge)
        now = st.scores if st is not None and st.judgement is not None else None
        if judge is not ANY and judge_id(j) not in (None, judge):  # not the run's judge: no verdict of its counts
            what = f"error: {j.error}" if j.error else ", ".join(f"{d}={s.verdict}" for d, s in j.scores.items())
            t.append(f"{what} — not the run's judge: counts nowhere\n", "grey50")
            continue
        if j.error:
            t.append(f"error: {j.error}", "red")
        elif before is None:
            t.append(", ".join(f"{d}={v}" for d, v in (now or {}).items()) or "no scores")
        else:
            changes = [f"{d}: {before.get(d, '–')}→{v}" for d, v in (now or {}).items() if before.get(d) != v]
            t.append(", ".join(changes) if changes else "no change", "bold" if changes else "grey50")
        if j.review is not None:
            t.append(f" — {'withdrawn' if j.review.withdraw else 'by'} {j.review.by}: “{j.review.reason}”", "cyan")
        t.append("\n")
        if now is not None:
            before = now
    return t
