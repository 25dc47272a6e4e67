"""Finding turns across stored runs (`arena-tui search`, `arena_tui.compare.search`): what the user
said, the answer (words and calls), the judge's reasons for the verdict that counts, the causes;
narrowed by run, failing dimension and cause; an index SQLite keeps, brought up to date whenever a
run changes. The runs are recorded through the real Store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.compare.stored import load_runs
from arena_tui.compare.search import search
from arena_tui.judge.human import record_verdict
from arena_tui.spine.events import DimensionScore, Judgement, RunEnded, ToolCallRecord
from arena_tui.store import Store, StoreWriteError
from benchmarks.registry import load_benchmark

from .counting_runs import LLM, PASSING, ended, judged, record, started

KB = "kb_grounding"


def run_a(run_id: str = "aaa1") -> list:
    """Turn 0 passes; turn 1's answer says 'booked' and its call, and fails KB for a price; turn 2
    fails IF for the total; turn 3 is stopped (its text kept, no verdict)."""
    evs: list = [started(run_id, [0, 1, 2, 3])]
    for t in range(3):
        e = ended(run_id, t)
        if t == 1:
            calls = [ToolCallRecord(call_id="c1", name="book_repair", args={"time": "10:00"}, status="matched")]
            e = e.model_copy(update={"result": e.result.model_copy(update={"assistant_text": "You're Booked for ten.",
                                                                           "tool_calls": calls})})
        evs.append(e)
    evs += [judged(run_id, 0),
            Judgement(run_id=run_id, t_ms=3000.0, turn_index=1, judge=LLM, causes=["kb_contradiction"],
                      scores={**{d: DimensionScore(verdict=v, reasoning="fine") for d, v in PASSING.items()},
                              KB: DimensionScore(verdict="fail", reasoning="the price quoted is 40 dollars, not 35")}),
            Judgement(run_id=run_id, t_ms=3000.0, turn_index=2, judge=LLM, causes=["partial_answer"],
                      scores={**{d: DimensionScore(verdict=v, reasoning="fine") for d, v in PASSING.items()},
                              "instruction_following": DimensionScore(verdict="fail", reasoning="no total price")}),
            ended(run_id, 3, "interrupted").model_copy(update={"result": ended(run_id, 3).result.model_copy(
                update={"status": "interrupted", "assistant_text": "Booked as well"})}),
            RunEnded(run_id=run_id, t_ms=9000.0, status="interrupted")]
    return evs


async def hits(db: Path, *args, **kw) -> list:
    async with await Store.open(db) as store:
        return await search(store, *args, **kw)


async def test_search_finds_by_text_where_and_filters(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record(db, run_a("aaa1"), run_a("bbb2"))
    got = await hits(db, "booked", run_ids=["aaa1"])
    # case-insensitive; the stopped turn is found, counted apart (no verdict)
    assert [(h.turn_index, h.where, h.verdict) for h in got] == [(1, ("answer",), "fail"), (3, ("answer",), "interrupted")]
    assert got[1].verdict_text == "stopped" and got[0].causes == ("kb_contradiction",) and got[0].failed == (KB,)
    assert "You're Booked for ten." in got[0].snippet
    assert [h.where for h in await hits(db, "book_repair", run_ids=["aaa1"])] == [("answer",)]  # its calls
    assert [h.turn_index for h in await hits(db, "price")] == [1, 2, 1, 2]  # two runs, newest (list order) first
    # a dimension: turns failing it, and of the judge's reasons only its own
    assert [h.turn_index for h in await hits(db, "price", run_ids=["aaa1"], dimension=KB)] == [1]
    assert await hits(db, "total", run_ids=["aaa1"], dimension=KB) == []
    assert [(h.turn_index, h.where) for h in await hits(db, "partial answer", run_ids=["aaa1"])] == [(2, ("causes",))]
    assert [h.turn_index for h in await hits(db, "", run_ids=["aaa1"], cause="partial_answer")] == [2]
    assert len(await hits(db, "", run_ids=["aaa1"])) == 4 and len(await hits(db, "", limit=3)) == 3
    async with await Store.open(db) as store:
        [run] = await load_runs(store, ["aaa1"], lambda name: load_benchmark(name))
    assert {h.turn_index: h.causes for h in await hits(db, "", run_ids=["aaa1"]) if h.causes} == run.causes


async def test_the_index_follows_every_change_to_a_run(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record(db, run_a("aaa1"))
    assert [h.turn_index for h in await hits(db, "price")] == [1, 2]
    async with await Store.open(db) as store:  # a person passes turn 1: it no longer fails KB, its reason is theirs
        await record_verdict(store, "aaa1", 1, {KB: "pass"}, "35 is the member price", "ann")
    [h] = await hits(db, "member price")
    assert (h.turn_index, h.verdict, h.human, h.causes) == (1, "pass", (KB,), ())
    assert await hits(db, "", dimension=KB) == []
    await record(db, [judged("aaa1", 0, {**PASSING, KB: "fail"}).model_copy(update={"revision": 2})])  # a re-judge
    assert [h.turn_index for h in await hits(db, "", dimension=KB)] == [0]
    async with await Store.open(db) as store:
        await store.delete_run("aaa1")
        assert await store.read_rows("SELECT COUNT(*) FROM search_turns") == [(0,)]  # gone with its run
        assert await search(store, "") == []


async def test_a_database_that_refuses_the_index_is_searched_from_memory(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "arena.db"
    await record(db, run_a("aaa1"))

    async def refused(self, sql, rows):
        raise StoreWriteError(f"{db}: attempt to write a readonly database")

    monkeypatch.setattr(Store, "write_rows", refused)
    assert [(h.turn_index, h.where) for h in await hits(db, "price", dimension=KB)] == [(1, ("reasons",))]
    async with await Store.open(db) as store:
        assert await store.read_rows("SELECT COUNT(*) FROM search_turns") == [(0,)]


def test_search_command(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    asyncio.run(record(db, run_a("aaa1"), run_a("bbb2")))
    assert main(["--db", str(db), "search", "booked", "--run", "aaa", "--cause", "kb_contradiction"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("aaa1") and "turn 1" in out[0] and "fail" in out[0] and "matched in: answer" in out[0]
    assert "causes: kb contradiction" in out[0] and "Booked for ten" in out[1]
    assert out[-1] == "1 turn in 1 run (searched 1 run)"
    assert main(["--db", str(db), "search", "nothing like this"]) == 0
    assert capsys.readouterr().out.strip() == "0 turns in 0 runs (searched 2 runs)"
    assert main(["--db", str(db), "search", "price", "--json"]) == 0
    assert [(h["run_id"], h["turn_index"]) for h in json.loads(capsys.readouterr().out)][:2] == [("aaa1", 1), ("aaa1", 2)]
    for bad, says in ((["--cause", "nope"], "unknown cause 'nope'"), (["--dimension", "kb"], "unknown dimension 'kb'")):
        with pytest.raises(SystemExit) as refused:  # argparse's refusal: one line, status 2
            main(["--db", str(db), "search", "x", *bad])
        assert refused.value.code == 2 and says in capsys.readouterr().err
    assert main(["--db", str(db), "search", "x", "--run", "zzz"]) == 2
    assert "no run" in capsys.readouterr().err
