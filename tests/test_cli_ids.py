"""Every command takes a run or campaign id the same way: the id, or a unique prefix of one; an
unknown or ambiguous one is one line on stderr naming the candidates, exit 2, no traceback.

Through the real CLI (`arena_tui.cli.main`) on a real database written by the real store.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.campaign.spec import build_spec
from arena_tui.cli import main
from arena_tui.spine.events import RunEnded, RunStarted, TurnEnded, TurnResult
from arena_tui.store import Store
from benchmarks.registry import load_benchmark

RUNS = ("abc111", "abc222", "xyz999")
CAMPAIGNS = ("camp-aa1", "camp-aa2", "other1")


async def _fill(db: Path) -> None:
    """Three complete one-turn demo_bench runs, and three campaigns (one cell each) whose model
    needs OPENAI_API_KEY (so a resume is refused at preflight, after its id was resolved)."""
    bench = load_benchmark("demo_bench")
    async with await Store.open(db) as store:
        for run_id in RUNS:
            store.submit(RunStarted(run_id=run_id, t_ms=0.0, benchmark="demo_bench", model="sim", provider="sim",
                                    simulator=True, turn_indices=[0], config={"model": "sim"}))
            store.submit(TurnEnded(run_id=run_id, t_ms=10.0, turn_index=0,
                                   result=TurnResult(turn_index=0, status="ok", user_text=bench.turns[0].input)))
            store.submit(RunEnded(run_id=run_id, t_ms=20.0, status="completed"))
        await store.flush()
        for i, cid in enumerate(CAMPAIGNS):
            spec = build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", "repeats": i + 1, "turns": "0"})
            await records.create(store, cid, spec)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "arena.db"
    asyncio.run(_fill(path))
    return path


def run(db: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--db", str(db), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(code: int, err: str) -> str:
    """The one line a refused id gives (exit 2, no traceback)."""
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv", [
    ("judge", "abc", "--judge", "heuristic"),
    ("export", "abc", "{tmp}"),
    ("resume", "abc", "--judge", "none"),
    ("report", "abc", "{tmp}"),
    ("ui", "--open", "abc"),
])
def test_an_ambiguous_run_prefix_names_the_candidates(db: Path, tmp_path: Path, capsys, argv) -> None:
    code, _, err = run(db, capsys, *(a.format(tmp=tmp_path / "out") for a in argv))
    line = refused(code, err)
    assert "ambiguous" in line and "abc111" in line and "abc222" in line and "xyz999" not in line


@pytest.mark.parametrize("argv", [
    ("judge", "nope", "--judge", "heuristic"),
    ("export", "nope", "{tmp}"),
    ("resume", "nope", "--judge", "none"),
    ("ui", "--open", "nope"),
])
def test_an_unknown_run_id_is_one_line(db: Path, tmp_path: Path, capsys, argv) -> None:
    code, _, err = run(db, capsys, *(a.format(tmp=tmp_path / "out") for a in argv))
    assert "no run 'nope'" in refused(code, err)


def test_a_unique_run_prefix_is_the_run(db: Path, tmp_path: Path, capsys) -> None:
    code, out, err = run(db, capsys, "judge", "xyz", "--judge", "heuristic", "--no-phase2")
    assert code == 0, err
    assert "demo_bench judged by heuristic" in out
    code, out, err = run(db, capsys, "export", "xyz", str(tmp_path / "exported"))
    assert code == 0, err
    assert json.loads((Path(out.strip()) / "runtime.json").read_text())["arena_tui"]["run_id"] == "xyz999"
    # resume resolves the prefix to the run, then finds nothing to play: it names the full id
    code, _, err = run(db, capsys, "resume", "xyz", "--judge", "none")
    assert "run xyz999 is complete" in refused(code, err)


def test_campaign_ids_take_a_unique_prefix_too(db: Path, capsys) -> None:
    code, out, err = run(db, capsys, "campaign", "show", "oth")
    assert code == 0, err
    assert out.startswith("campaign other1: ")

    for action in ("show", "resume"):
        code, _, err = run(db, capsys, "campaign", action, "camp-aa")
        line = refused(code, err)
        assert "ambiguous" in line and "camp-aa1" in line and "camp-aa2" in line and "other1" not in line
        code, _, err = run(db, capsys, "campaign", action, "nope")
        assert "no campaign 'nope'" in refused(code, err)

    # resolved, the resumption goes as far as the preflight (no key for gpt-realtime here)
    code, _, err = run(db, capsys, "campaign", "resume", "oth")
    assert code == 2 and "campaign not started" in err and "OPENAI_API_KEY" in err
