"""How sure the judge is: `arena-tui judge RUN --repeat N`, the majority verdict that counts, the
agreement stored with it (event and SQL), and the figure over a run."""

from __future__ import annotations

import asyncio
import csv
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena_tui.cli import main
from arena_tui.judge import HeuristicJudge
from arena_tui.judge.rubric import JUDGE_VERSION
from arena_tui.judge.agreement import MAJORITY, agreement_of, majority, majority_judgement, run_agreement
from arena_tui.spine.events import DimensionScore, Judgement
from arena_tui.store import Store
from arena_tui.verdicts import standing

from .fakes.anthropic_messages import FakeAnthropic
from .fakes.judge_answers import RUN_HEADER, all_pass, run_blocks, target_turn
from .test_judge_worker import RUN, record_run
from .test_judge_worker import conv as conv  # noqa: F401 - the module's benchmark fixture

KEY = "sk-ant-test-not-a-secret"


def j(revision: int, **verdicts: str) -> Judgement:
    return Judgement(run_id="r", t_ms=0, turn_index=3, judge="anthropic:m", revision=revision,
                     judge_version="arena-judge/1",
                     scores={d: DimensionScore(verdict=v, reasoning=f"rev {revision}") for d, v in verdicts.items()})  # type: ignore[arg-type]


def test_majority_and_its_ties():
    assert majority(["pass", "pass", "fail"]) == ("pass", 2)
    assert majority(["pass", "fail"]) == ("fail", 1)  # a pass needs more judgings for it than against
    assert majority(["pass", "na"]) == ("pass", 1) and majority(["na", "na", "fail"]) == ("na", 2)
    assert majority(["pass", "fail", "na"]) == ("fail", 1)


def test_majority_judgement_keeps_the_majority_and_says_how_many_gave_it():
    judgings = [j(2, kb_grounding="pass", instruction_following="fail", tool_use_correct="na"),
                j(5, kb_grounding="pass", instruction_following="pass", tool_use_correct="na"),
                j(8, kb_grounding="fail", instruction_following="pass", tool_use_correct="na")]
    m = majority_judgement(judgings, asked=3, revision=9)
    assert m.rule == MAJORITY and m.revision == 9 and m.phase == 1 and m.error is None
    assert {d: s.verdict for d, s in m.scores.items()} == {"kb_grounding": "pass", "instruction_following": "pass",
                                                          "tool_use_correct": "na"}  # fmt: skip
    assert m.scores["kb_grounding"].reasoning == "rev 5"  # the latest judging that gave the majority verdict
    assert m.agreement is not None and m.agreement.revisions == [2, 5, 8] and m.agreement.asked == 3
    assert m.agreement.agree == {"kb_grounding": 2, "instruction_following": 2, "tool_use_correct": 3}
    assert m.agreement.share("kb_grounding") == pytest.approx(2 / 3)
    fig = agreement_of([m])
    # tool_use_correct: every judging said na, it was never judged: not in the figure
    assert (fig.agree, fig.verdicts, fig.turns, fig.unanimous) == (4, 6, 1, 0)
    assert fig.text() == "66.7% (4/6 verdicts; 1 turns, 3 judgings each)"
    assert agreement_of([judgings[0]]).text() == "–"  # no repeated judgings: no figure, never 100 %
    # the majority revision is the newest valid one: it is what counts
    assert standing([*judgings, m])[3].judgement is m


def answers_by_judging(flip: dict[int, list[str]]) -> Any:
    """The judge's answer, per time it is asked: `flip[turn][k]` is kb_grounding's verdict on that turn
    the k-th time (pass otherwise); a whole-run request answers every turn at once."""
    asked: Counter[int] = Counter()

    def verdicts_now(turns: list[int]) -> dict[int, dict[str, Any]]:
        out = {}
        for turn in turns:
            k = asked[turn]
            asked[turn] += 1
            verdicts = flip.get(turn)
            if verdicts and k < len(verdicts):
                out[turn] = {"scores": {"kb_grounding": {"verdict": verdicts[k], "reasoning": f"judging {k + 1}"}}}
        return out

    def answer(text: str) -> dict[str, Any]:
        if text.startswith(RUN_HEADER):
            return all_pass(text, verdicts_now(sorted(run_blocks(text))))
        return all_pass(text, verdicts_now([target_turn(text)]))

    return answer


def judge_cli(db: Path, data: Path, server: FakeAnthropic, *extra: str) -> int:
    return main(["--db", str(db), "--data", str(data), "judge", RUN, "--judge", "anthropic",
                 "--judge-base-url", server.base_url, "--judge-model", "claude-test", *extra])


def judged_three_times(conv: Any, db: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, int]:
    """RUN recorded, then judged 3 times by Claude (its fake): kb_grounding 2 of 3 on turns 9
    (pass) and 10 (fail), unanimous elsewhere. (exit status, output, requests the judge got)"""
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = FakeAnthropic(answers_by_judging({9: ["pass", "fail", "pass"], 10: ["fail", "fail", "pass"]})).start()
    try:
        code = judge_cli(db, shared_data, server, "--repeat", "3", "--no-phase2")
    finally:
        server.stop()
    return code, "", len(server.message_requests)


def test_judge_repeat_stores_the_majority_and_its_agreement(conv, tmp_path, shared_data, capsys, monkeypatch):  # noqa: F811
    db = tmp_path / "r.db"
    code, _, requests = judged_three_times(conv, db, shared_data, monkeypatch)
    out = capsys.readouterr().out
    assert code == 0, out
    assert requests == 3  # the whole run in one request, 3 judgings, the same prompt each time
    assert "judge agreement 94.4% (34/36 verdicts; 4 turns, 3 judgings each)" in out, out
    assert "turn 9 r" in out and "(majority) anthropic:claude-test" in out and "kb_grounding=pass(2/3)" in out
    assert "kb_grounding=fail(2/3)" in out  # turn 10
    # every judging is kept, the majority is one more revision, and it counts
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT turn_index, revision, rule, judgings, judge_version FROM judgements "
                           "WHERE rule = 'majority' ORDER BY turn_index").fetchall()
        agree = con.execute("SELECT s.dimension, s.verdict, s.agree FROM judgement_scores s JOIN judgements j "
                            "ON j.run_id = s.run_id AND j.seq = s.seq WHERE j.rule = 'majority' AND j.turn_index = 10 "
                            "ORDER BY s.dimension").fetchall()
    assert [(t, rule, n) for t, _, rule, n, _ in rows] == [(t, "majority", 3) for t in (8, 9, 10, 11)]
    assert all(v == JUDGE_VERSION for *_, v in rows)
    assert ("kb_grounding", "fail", 2) in agree and ("turn_taking", "pass", 3) in agree

    async def stored() -> list[Judgement]:
        async with await Store.open(db) as store:
            return await store.judgements(RUN)

    judgements = asyncio.run(stored())
    now = standing(judgements)
    assert now[10].judgement.rule == MAJORITY and now[10].scores["kb_grounding"] == "fail"
    a = now[9].judgement.agreement
    assert a is not None and a.judgings == 3 and a.agree["kb_grounding"] == 2
    assert [r.rule for r in judgements if r.turn_index == 9 and r.revision in a.revisions] == [None, None, None]
    assert run_agreement(judgements).agree == 34
    # the report says it: report.html beside the judge, and a CSV column
    assert main(["--db", str(db), "--data", str(shared_data), "report", RUN, str(tmp_path / "rep")]) == 0
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "judge agreement" in html and "94.4% (34/36)" in html and f"anthropic:claude-test ({JUDGE_VERSION})" in html
    with (tmp_path / "rep" / "run_results.csv").open(newline="") as fh:
        row = next(csv.DictReader(fh))
    assert float(row["judge_agreement"]) == pytest.approx(34 / 36) and row["judge_version"] == JUDGE_VERSION
    # and an export carries both: the judge's rules version, each majority's agreement
    assert main(["--db", str(db), "--data", str(shared_data), "export", RUN, str(tmp_path / "exp")]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    summary = json.loads(next(folder.glob("anthropic*_summary.json")).read_text())
    assert summary["judge_model"] == "anthropic:claude-test" and summary["judge_version"] == JUDGE_VERSION
    rows = [json.loads(line) for line in next(folder.glob("anthropic*_judged.jsonl")).read_text().splitlines()]
    assert {r["turn"]: r["arena_tui"]["judgement"]["agreement"]["agree"]["kb_grounding"] for r in rows} == {
        8: 3, 9: 2, 10: 2, 11: 3}


def test_a_failed_judging_is_no_verdict_and_json_carries_the_figure(conv, tmp_path, shared_data, capsys, monkeypatch):  # noqa: F811
    db = tmp_path / "f.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    calls = Counter[str]()

    def answer(text: str) -> dict[str, Any]:  # the second judging's reply leaves turn 8 out: no verdict there
        calls["n"] += 1
        out = all_pass(text)
        if calls["n"] == 2:
            out["final_judgments"] = [j for j in out["final_judgments"] if j["turn"] != 8]
        return out

    server = FakeAnthropic(answer).start()
    try:
        code = judge_cli(db, shared_data, server, "--repeat", "2", "--no-phase2", "--json", "--judge-concurrency", "1")
        out = capsys.readouterr().out
    finally:
        server.stop()
    doc = json.loads(out)
    assert code == 1, out  # a judging that failed is said, even where a verdict stands
    assert doc["judge_agreement"]["turns"] == 3 and doc["judge_agreement"]["rate"] == 1.0 and doc["rejudge_errors"] == [8]

    async def stored() -> list[Judgement]:
        async with await Store.open(db) as store:
            return await store.judgements(RUN)

    now = standing(asyncio.run(stored()))
    assert now[8].judgement.rule is None  # one verdict only: no majority revision, the one judging stands
    assert sum(st.judgement.rule == MAJORITY for st in now.values()) == 3


def test_repeat_needs_an_llm_judge_and_a_sane_count(conv, tmp_path, shared_data, capsys):  # noqa: F811
    db = tmp_path / "h.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    base = ["--db", str(db), "--data", str(shared_data), "judge", RUN]
    assert main([*base, "--judge", "heuristic", "--repeat", "3"]) == 2
    assert "--repeat needs an LLM judge" in capsys.readouterr().err
    for bad in ("0", "21", "many"):
        with pytest.raises(SystemExit):
            main([*base, "--repeat", bad])
        assert "is not a number of judgings from 1 to 20" in capsys.readouterr().err
