"""Find turns across stored runs: by what the user said, what the model answered (its words and its
calls), the judge's reasons and the causes of a failure; narrowed to a run, to turns failing a
dimension, to turns with a cause. `arena-tui search` prints it; the screens' `/` finds a turn by the
same texts and the same match (`fields`, `matched_in`).

What a turn shows is what counts for it (`verdicts.standing`: a person's verdict over the judge's),
its causes `judge.causes` (through `StoredRun`, as the leaderboard reads them), and a turn counted
apart shows why (`verdicts.APART`), with no verdict. Search reads an index in SQLite
(`search_turns`, one row per turn: the texts, casefolded once, and what filters read), which it
keeps itself: a run whose turns or judgements changed since its rows were built (its mark in
`search_marks`) is read again, one run at a time, before the query. A database this process may
not write is searched all the same, from rows built in memory. A hit in a run a re-run replaced
(`RunRow.superseded_by`) says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena_tui.spine.causes import ordered as ordered_causes
from arena_tui.spine.events import Judgement, SessionRotated, TurnResult
from ..store import RunRow, Store, StoreWriteError
from ..verdicts import APART, JUDGE_ERROR, Standing
from .stored import StoredRun

INDEX_VERSION = 1  # of what an index row holds and how it is read (causes, reasons): a change re-reads every run
WHERE = ("user", "answer", "reasons", "causes")  # where a turn can match, as a hit names it
_MARKS = """SELECT r.run_id, ? || '|' ||
    (SELECT COUNT(*) || ':' || COALESCE(MAX(seq), 0) FROM turns t WHERE t.run_id = r.run_id) || '|' ||
    (SELECT COUNT(*) || ':' || COALESCE(MAX(seq), 0) FROM judgements j WHERE j.run_id = r.run_id),
    m.mark FROM runs r LEFT JOIN search_marks m ON m.run_id = r.run_id"""
_COLUMNS = ("run_id", "turn_index", "verdict", "failed", "causes", "human", "user_text", "answer_text", "reasons", "folded")
_SQL_ROW = f"INSERT OR REPLACE INTO search_turns({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
_SQL_MARK = "INSERT OR REPLACE INTO search_marks(run_id, mark) VALUES (?, ?)"
Row = tuple[Any, ...]  # one search_turns row, in `_COLUMNS` order


@dataclass(frozen=True)
class Hit:
    """One turn that matches: where it matched, what counts for it, and a snippet of the match."""

    run_id: str
    turn_index: int
    model: str
    benchmark: str
    verdict: str  # pass | fail | na, or why the turn counts apart (a `verdicts.APART` key)
    where: tuple[str, ...]  # of `WHERE`; () for an empty search text (every turn the filters keep)
    causes: tuple[str, ...]
    failed: tuple[str, ...]  # the dimensions that fail
    human: tuple[str, ...]  # the dimensions a person's verdict decides
    snippet: str
    superseded_by: str | None = None  # its run was replaced by a re-run (a campaign's): it counts nowhere
    source: str | None = None  # `simulator` / `protocol fake` / None (the real service): `RunRow.source`
    variants: tuple[str, ...] = ()  # how its input differed (`RunRow.variants`: a condition, an effort, …)

    @property
    def verdict_text(self) -> str:
        return APART.get(self.verdict, self.verdict)


def user_of(result: TurnResult) -> str:
    """What the user said on a turn: the benchmark's words, and what the provider heard when it differs."""
    heard = result.user_transcript
    return result.user_text + (f"\n{heard}" if heard and heard != result.user_text else "")


def answer_of(result: TurnResult) -> str:
    """What the model answered: its words (or the sentinel a turn without them got), then its calls."""
    calls = [f"{c.name}({json.dumps(c.args, ensure_ascii=False, sort_keys=True)})" for c in result.tool_calls]
    return "\n".join([result.sentinel or result.assistant_text, *calls]).strip()


def fields(user: str, answer: str, reasons: str, causes: Sequence[str]) -> dict[str, str]:
    """A turn's searchable texts by `WHERE` (a cause by its name and as it reads: `missed_call missed call`)."""
    named = " ".join(causes)
    return {"user": user, "answer": answer, "reasons": reasons, "causes": f"{named} {named.replace('_', ' ')}".strip()}


def matched_in(texts: dict[str, str], text: str) -> tuple[str, ...]:
    """Where (of `WHERE`) `text` is found, case-insensitively; () for an empty text."""
    needle = text.casefold().strip()
    return tuple(w for w in WHERE if needle and needle in texts[w].casefold())


def turn_rows(run: StoredRun) -> list[Row]:
    """The index rows of a run's turns (with a recorded result: a turn never played has no text)."""
    counted, rows = run.tally, []
    apart = {t: why for why, turns in counted.apart.items() for t in turns}
    for t, r in sorted(run.results.items()):
        st = run.standing.get(t) if t in counted.rows else None
        scores = st.scores if st is not None else {}
        failed = [d for d, v in scores.items() if v == "fail"]
        user, answer = user_of(r), answer_of(r)
        reasons = reasons_text(run.standing.get(t)) if t in counted.rows or apart.get(t) == JUDGE_ERROR else ""
        causes = run.causes.get(t, ())
        verdict = st.verdict if st is not None else apart.get(t, "unjudged")
        human = " ".join(st.human if st is not None else ())
        folded = "\n".join(fields(user, answer, reasons, causes).values()).casefold()
        rows.append((run.run_id, t, verdict, " ".join(failed), " ".join(causes), human, user, answer, reasons, folded))
    return rows


def reasons_text(st: Standing[Judgement] | None) -> str:
    """`dimension: reasoning` of the verdict that counts (its error when none does), each text once."""
    if st is None:
        return ""
    j = st.shown
    if st.judgement is None:
        return f"judge error: {j.error}" if j.error else ""
    seen: dict[str, list[str]] = {}
    for d, s in j.scores.items():
        if s.reasoning:
            seen.setdefault(s.reasoning, []).append(d)
    return "\n".join(f"{', '.join(dims)}: {text}" for text, dims in seen.items())


async def _stored_run(store: Store, run_id: str) -> StoredRun | None:
    """A run as the leaderboard reads it, with the benchmark it ran (its stored snapshot)."""
    row = await store.get_run(run_id)
    if row is None:
        return None
    try:
        benchmark = await store.stored_benchmark(run_id)
    except Exception:  # noqa: BLE001 - a damaged snapshot: the run is still searched, without call causes
        benchmark = None
    results = {r.turn_index: r for r in await store.turn_results(run_id) if r.turn_index >= 0}
    revisions = [j for j in await store.judgements(run_id) if j.turn_index is not None and j.turn_index >= 0]
    rotations = [ev for _, ev in await store.events(run_id, kinds=["session_rotated"]) if isinstance(ev, SessionRotated)]
    return StoredRun(row, results, revisions, benchmark, rotations=rotations)


async def refresh(store: Store, run_ids: Sequence[str] | None = None) -> list[Row] | None:
    """Bring the index up to date for these runs (all without), one stale run read at a time.
    Returns None when the index is up to date; when the database refuses the write, every row of
    the runs asked for, built in memory, to be searched instead."""
    marks = [(run_id, mark, stored) for run_id, mark, stored in await store.read_rows(_MARKS, (str(INDEX_VERSION),))
             if run_ids is None or run_id in run_ids]
    for run_id, mark, stored in marks:
        if mark == stored:
            continue
        rows = await _rows_of(store, run_id)
        try:
            await store.write_rows(_SQL_ROW, rows)
            await store.write_rows(_SQL_MARK, [(run_id, mark)])  # after its rows: a failure between reads it again
        except StoreWriteError:  # a file we may not write: searched from memory
            return [r for run_id, _, _ in marks for r in await _rows_of(store, run_id)]
    return None


async def _rows_of(store: Store, run_id: str) -> list[Row]:
    run = await _stored_run(store, run_id)
    return turn_rows(run) if run is not None else []


async def search(store: Store, text: str, *, run_ids: Sequence[str] | None = None, dimension: str | None = None,
                 cause: str | None = None, limit: int | None = None) -> list[Hit]:
    """The turns matching `text` (case-insensitive, anywhere in `WHERE`; "" matches every turn), newest
    run first, then by turn. `dimension`: only turns failing it, and of the judge's reasons only its
    own; `cause`: only turns given it."""
    needle = text.casefold().strip()
    memory = await refresh(store, run_ids)
    runs = {r.run_id: r for r in await store.list_runs()}
    if memory is None:
        sql, params = f"SELECT {', '.join(_COLUMNS)} FROM search_turns WHERE instr(folded, ?) > 0", [needle]
        if run_ids is not None:
            sql += f" AND run_id IN ({', '.join('?' * len(run_ids))})"
            params += list(run_ids)
        for column, value in (("failed", dimension), ("causes", cause)):
            if value is not None:
                sql += f" AND instr(' ' || {column} || ' ', ?) > 0"
                params.append(f" {value} ")
        rows: Iterable[Row] = await store.read_rows(sql, tuple(params))
    else:
        rows = (r for r in memory if needle in r[-1] and (dimension is None or dimension in r[3].split())
                and (cause is None or cause in r[4].split()))
    order = {run_id: i for i, run_id in enumerate(runs)}  # list_runs: newest first
    hits = [h for r in rows if r[0] in runs and (h := _hit(r, needle, runs[r[0]], dimension)) is not None]
    hits.sort(key=lambda h: (order[h.run_id], h.turn_index))
    return hits[:limit] if limit is not None else hits


def _hit(row: Row, needle: str, run: RunRow, dimension: str | None) -> Hit | None:
    run_id, turn, verdict, failed, causes, human, user, answer, reasons, _ = row
    if dimension is not None:  # its own reasons only
        reasons = "\n".join(ln for ln in reasons.splitlines() if dimension in ln.partition(":")[0].split(", "))
    texts = fields(user, answer, reasons, causes.split())
    where = matched_in(texts, needle)
    if needle and not where:
        return None  # it matched only another dimension's reasons
    # a match in the causes alone: the line names the causes already; the snippet is what was answered
    said = [w for w in where if w != "causes"]
    snippet = _snippet(texts[said[0]], needle) if said else _snippet(answer or user, "", width=72)
    return Hit(run_id, turn, run.model, run.benchmark, verdict, where, ordered_causes(causes.split()),
               tuple(failed.split()), tuple(human.split()), snippet, run.superseded_by, run.source, run.variants)


def _snippet(text: str, needle: str, width: int = 36) -> str:
    """The first match with `width` characters of context each side, on one line."""
    flat = " ".join(text.split())
    i = flat.casefold().find(needle) if needle else 0
    i = max(i, 0)
    start, end = max(0, i - width), min(len(flat), i + len(needle) + width)
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
