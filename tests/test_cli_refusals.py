"""Small breakages a user meets at the command line, each refused or made to work in one line:
flag values no run can use (an empty `--turns`, `--workers 0`, `--judge-concurrency 0`,
`--judge-deadline nan`: one line naming the flag, not argparse's usage block), `resume` saying
it runs headless (and a resume playing an infra_error turn again), the `benchmarks` hint that
works as typed, `report` without `--data`, summary.md with a model name that is HTML, and the
Gemini fake's TLS leaving no key behind."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.events import RunEnded, RunStarted, TurnEnded, TurnResult
from arena_tui.store import Store

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo"


def cli() -> list[str]:
    exe = Path(sys.executable).with_name("arena-tui")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "arena_tui.cli"]


def one_line(capsys, code: int) -> str:
    got = capsys.readouterr()
    err = got.err.strip().splitlines()
    assert code == 2 and len(err) == 1, (code, got.err)
    assert "usage:" not in got.err and "Traceback" not in got.err
    return err[0]


@pytest.mark.parametrize("argv,says", [
    (["run", "demo_bench", "--model", "sim", "--headless", "--turns", ""], "argument --turns: '' selects no turns"),
    (["run", "demo_bench", "--model", "sim", "--headless", "--turns", " , "], "argument --turns: ' , ' selects no turns"),
    (["demo", "--turns", ""], "argument --turns: '' selects no turns"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--turns", ""], "argument --turns: '' selects no turns"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--workers", "0"], "argument --workers: must be 1 or more (got 0)"),
    (["run", "demo_bench", "--headless", "--judge-concurrency", "0"], "argument --judge-concurrency: must be 1 or more (got 0)"),
    (["judge", "x", "--judge-concurrency", "-2"], "argument --judge-concurrency: must be 1 or more (got -2)"),
    (["run", "demo_bench", "--headless", "--judge-deadline", "nan"], "argument --judge-deadline: 'nan' is not a positive"),
    (["runs", "--limit", "many"], "argument --limit: invalid int value: 'many'"),
    (["run", "demo_bench", "--headless", "--condition", ""], "argument --condition: '' names nothing"),
    (["run", "demo_bench", "--headless", "--effort", " "], "argument --effort: ' ' names nothing"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--condition", ","], "argument --condition: ',' names nothing"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--effort", ""], "argument --effort: '' names nothing"),
], ids=["turns_empty", "turns_commas", "demo_turns_empty", "campaign_turns_empty", "workers_0", "judge_concurrency_0",
        "judge_concurrency_negative", "judge_deadline_nan", "limit_not_a_number", "condition_empty", "effort_blank",
        "campaign_condition_commas", "campaign_effort_empty"])
def test_a_flag_no_run_can_use_is_one_line_naming_it(argv, says, tmp_path, capsys):
    db = tmp_path / "x.db"
    with pytest.raises(SystemExit) as e:
        main(["--db", str(db), *argv])
    line = one_line(capsys, e.value.code)
    assert says in line and line.startswith("arena-tui ") and "--help" in line, line
    assert not db.exists()  # refused before anything was opened


def test_a_campaign_spec_with_no_workers_or_empty_turns_is_one_line(tmp_path, capsys):
    for body, says in (('bench = ["demo_bench"]\nmodel = ["sim"]\nworkers = 0\n', "workers must be 1 or more (got 0)"),
                       ('bench = ["demo_bench"]\nmodel = ["sim"]\nturns = ""\n', "turns '' selects no turns"),
                       ('bench = ["demo_bench"]\nmodel = ["sim"]\neffort = ""\n', "effort: names nothing")):
        spec = tmp_path / "spec.toml"
        spec.write_text(body)
        code = main(["--db", str(tmp_path / "c.db"), "campaign", "run", str(spec)])
        assert says in one_line(capsys, code)


# ------------------------------------------------------------------------ counts a user types


@pytest.mark.parametrize("argv,says", [
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--repeats", "100000000"],
     "campaign: repeats must be a whole number from 1 to 1000 (got 100000000)"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim,sim2,sim3", "--repeats", "1000",
      "--condition", "clean,telephony,noise=10,loss=5", "--effort", "low,high"],
     "campaign: 4 conditions × 3 models × 2 efforts × 1000 repeats is 24,000 cells, more than the 10,000"),
    (["campaign", "run", "--bench", "demo_bench", "--model", "sim", "--turns", "0-100000000"],
     "turn 100000000 in --turns '0-100000000' is past the last turn any benchmark has"),
    (["run", "demo_bench", "--model", "sim", "--headless", "--turns", "0-100000000"],
     "turn 100000000 in --turns '0-100000000' is past the last turn any benchmark has"),
    (["run", "duplex_bench", "--model", "sim", "--headless", "--faults", "yield=1e300"],
     "value '1e300' in 'yield=1e300' is more than the 600000 ms it may be"),
    (["run", "duplex_bench", "--model", "sim", "--headless", "--faults", "0:yield=86400000"],
     "value '86400000' in '0:yield=86400000' is more than the 600000 ms it may be"),
], ids=["repeats_1e8", "cells_24000", "campaign_turns_1e8", "run_turns_1e8", "yield_1e300", "turn_yield_a_day"])
def test_a_count_past_its_bound_is_refused_before_anything_is_built(argv, says, tmp_path, capsys):
    """Issue 41 items 5 and 9: `--repeats 100000000` (flag or spec), a matrix of more cells than a campaign holds,
    a turn range of 100 million and a yield of 1e300 ms are refused in one line, from the counts as typed:
    a campaign that built its cells first grew ~110 MB/s and ignored SIGTERM while it did."""
    code = main(["--db", str(tmp_path / "x.db"), *argv])
    line = one_line(capsys, code)
    assert says in line, line


def test_a_campaign_spec_with_a_repeat_count_past_its_bound_is_one_line(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text('bench = ["demo_bench"]\nmodel = ["sim"]\nrepeats = 100000000\n')
    code = main(["--db", str(tmp_path / "c.db"), "campaign", "run", str(spec)])
    assert "campaign: repeats must be a whole number from 1 to 1000 (got 100000000)" in one_line(capsys, code)


# ---------------------------------------------------------------------------------------- resume


def stored_run(run_id: str, statuses: dict[int, str]) -> list:
    """A demo_bench run of the simulator (turns 0-1 at 20x) recorded with these turn statuses, failed."""
    from benchmarks.registry import load_benchmark
    from arena_tui.spine.settings import RunSettings

    bench = load_benchmark("demo_bench")
    config = RunSettings(model="sim", speed=20.0, turns=[0, 1], watchdog={"extra_ms": 4000.0}).public()
    evs: list = [RunStarted(run_id=run_id, t_ms=0.0, benchmark="demo_bench", model="sim", provider="sim", simulator=True,
                            turn_indices=[0, 1], config=config, speed=20.0, benchmark_snapshot=bench.snapshot())]
    for i, status in statuses.items():
        t = bench.turn(i)
        ok = status == "ok"
        evs.append(TurnEnded(run_id=run_id, t_ms=1000.0 * (i + 1), turn_index=i, result=TurnResult(
            turn_index=i, status=status, user_text=t.input, assistant_text=t.golden_text if ok else "",
            error=None if ok else "endpoint unreachable: ws://127.0.0.1:9/v1/realtime ([Errno 111] Connection refused)")))
    evs.append(RunEnded(run_id=run_id, t_ms=5000.0, status="failed", reason="turn 1: gave up after 5 reconnects"))
    return evs


async def record(db: Path, *runs: list) -> None:
    async with await Store.open(db) as store:
        for evs in runs:
            for ev in evs:
                store.submit(ev)
        await store.flush()


@pytest.mark.parametrize("headless", [True, False])
def test_resume_plays_an_infra_error_turn_again_and_says_it_runs_headless(tmp_path, capsys, headless):
    db = tmp_path / "r.db"
    asyncio.run(record(db, stored_run("lostturn1", {0: "ok", 1: "infra_error"})))
    code = main(["--db", str(db), "resume", "lostturn1", "--judge", "none", *(["--headless"] if headless else [])])
    got = capsys.readouterr()
    assert code == 0, got.out[-2000:] + got.err
    assert "resuming run lostturn1 at turn 1: 1 finished turn replayed (turn 0), 1 to play" in got.out, got.out
    note = "arena-tui: resume runs headless (progress and a summary on stdout; pass --headless to say so)"
    assert got.err.strip().splitlines() == ([] if headless else [note]), got.err

    async def read() -> tuple:
        async with await Store.open(db) as store:
            return [(r.turn_index, r.status) for r in await store.turn_results("lostturn1")], \
                (await store.get_run("lostturn1")).status

    assert asyncio.run(read()) == ([(0, "ok"), (1, "ok")], "completed")  # the latest row of turn 1 counts


# ------------------------------------------------------------------------------ benchmarks, report


def test_the_benchmarks_hint_works_as_typed(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(DEMO, data / "quiet_bench", ignore=shutil.ignore_patterns("audio"))
    (data / "quiet_bench" / "benchmark.json").write_text(
        (DEMO / "benchmark.json").read_text().replace('"demo_bench"', '"quiet_bench"'))
    monkeypatch.delenv("ARENA_TUI_DATA", raising=False)
    monkeypatch.setenv("ARENA_TUI_AUDIO_DIR", str(tmp_path / "overlay"))
    assert main(["benchmarks", "--data", str(data)]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("quiet_bench "))
    hint = row.split("`")[1]
    assert hint == f"arena-tui synthesize quiet_bench --data {shlex.quote(str(data))}", row
    code = main([*shlex.split(hint)[1:], "--turns", "0"])  # as typed (espeak may be missing: not "not found")
    got = capsys.readouterr()
    assert "not found" not in got.out + got.err, got
    assert code == 0 or "espeak" in got.err, (code, got)
    monkeypatch.setenv("ARENA_TUI_DATA", str(data))  # found by the environment: no --data to add
    assert main(["benchmarks"]) == 0
    assert "`arena-tui synthesize quiet_bench`" in capsys.readouterr().out


def test_report_without_data_uses_the_recorded_benchmark(tmp_path, capsys, monkeypatch):
    """A run of a --data benchmark, reported without --data: its recorded snapshot stands in
    (categories, dimensions), nothing said; a run recorded without one is said in one line."""
    from tests.compare_runs import events

    monkeypatch.delenv("ARENA_TUI_DATA", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    db = tmp_path / "rep.db"
    recorded = stored_run("withsnap", {0: "ok", 1: "ok"})
    recorded[0] = recorded[0].model_copy(update={"benchmark": "elsewhere_bench", "benchmark_snapshot": {
        **recorded[0].benchmark_snapshot, "meta": {**recorded[0].benchmark_snapshot["meta"], "name": "elsewhere_bench"}}})
    old = events("nosnap", "gpt-realtime", "gone_bench", [], config={"speed": 1.0})
    asyncio.run(record(db, recorded, old))
    assert main(["--db", str(db), "report", "withsnap", str(tmp_path / "out1")]) == 0
    out = capsys.readouterr().out
    assert "not found" not in out, out
    assert main(["--db", str(db), "report", "all", str(tmp_path / "out2")]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "not found" in ln]
    assert len(lines) == 1 and lines[0].startswith("benchmark data not found for gone_bench ("), lines


def test_summary_md_shows_an_html_model_name_as_text(tmp_path, capsys):
    from tests.compare_runs import T, all_pass, events, write_data

    evil = "<img src=x onerror=alert(1)>|x"
    db = tmp_path / "h.db"
    asyncio.run(record(db, events("evil1", evil, "mini_bench", [T(0, all_pass(0), 700)], config={"speed": 1.0})))
    out = tmp_path / "out"
    assert main(["--db", str(db), "--data", str(write_data(tmp_path / "data")), "report", "all", str(out)]) == 0
    md = (out / "summary.md").read_text()
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;\\|x" in md, md[:2000]
    assert "<img" not in (out / "report.html").read_text()


def test_summary_md_shows_a_markdown_link_in_a_model_name_as_text(tmp_path, capsys):
    """Issue 41 item 9: a model name read from an imported run is data: `[x](javascript:…)` in it was a
    live link in summary.md."""
    import re

    from tests.compare_runs import T, all_pass, events, write_data

    evil = "[click](javascript:alert(1))`code`"
    db = tmp_path / "l.db"
    asyncio.run(record(db, events("evil1", evil, "mini_bench", [T(0, all_pass(0), 700)], config={"speed": 1.0})))
    out = tmp_path / "out"
    assert main(["--db", str(db), "--data", str(write_data(tmp_path / "data")), "report", "all", str(out)]) == 0
    md = (out / "summary.md").read_text()
    assert "[click\\](javascript:alert(1))\\`code\\`" in md, md[:2000]
    assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", md), md[:2000]  # no unescaped [text]( anywhere


# ------------------------------------------------------------------------------------ TLS


def test_the_fakes_certificate_leaves_no_key_on_disk(tmp_path, monkeypatch):
    import ssl

    from runners.fakes.tls import self_signed_tls

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    tls = self_signed_tls()
    assert list(tmp_path.iterdir()) == []  # the key was on disk only while the context loaded it
    assert tls.client.verify_mode == ssl.CERT_REQUIRED and tls.server.check_hostname is False
    pem = tls.cert_pem  # written when asked for (SSL_CERT_FILE), and only the certificate
    assert pem.read_text().startswith("-----BEGIN CERTIFICATE-----") and "PRIVATE KEY" not in pem.read_text()
    tls.close()
    assert list(tmp_path.iterdir()) == []


def test_a_gemini_fake_run_leaves_nothing_in_tmpdir(tmp_path):
    """No key of the fake's TLS on disk; and (issue 41 item 9) nothing of onnxruntime's telemetry, which
    Silero VAD loads: a `.ses` file in TMPDIR, a device id and an event database under ~/.cache."""
    tmp, home = tmp_path / "tmp", tmp_path / "home"
    tmp.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}  # the engine itself turns it off
    env.update(TMPDIR=str(tmp), HOME=str(home))
    p = subprocess.run([*cli(), "--db", str(tmp_path / "g.db"), "run", "demo_bench", "--model", "gemini-native-audio",
                        "--fake", "--speed", "10", "--turns", "0", "--headless", "--judge", "none"],
                       capture_output=True, text=True, env=env, timeout=180, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    assert "turns 1/1 done: ok 1" in p.stdout, p.stdout[-2000:]
    left = [f for f in tmp.rglob("*") if f.name.startswith("arena-fake-tls-") or
            (f.is_file() and b"PRIVATE KEY" in f.read_bytes())]
    assert left == [], left
    assert [*tmp.rglob("*"), *home.rglob("*")] == []


# ---------------------------------------------------------------------------------- runs list


def test_arena_tui_runs_says_a_superseded_run_as_the_runs_list_does(tmp_path, capsys):
    """Issue 41 item 9: a run a campaign's re-run replaced counts nowhere; the runs list said so and
    `arena-tui runs` showed it as any completed run."""
    from arena_tui.spine.events import RunSuperseded
    from tests.counting_runs import ended, judged, started

    db = tmp_path / "s.db"
    old, new = [started("old", [0]), ended("old", 0), judged("old", 0)], [started("new", [0]), ended("new", 0), judged("new", 0)]
    asyncio.run(record(db, [*old, RunEnded(run_id="old", t_ms=2000.0, status="completed")],
                       [*new, RunEnded(run_id="new", t_ms=2000.0, status="completed")],
                       [RunSuperseded(run_id="old", t_ms=0.0, by="new", reason="re-run")]))
    assert main(["--db", str(db), "runs"]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.split() and ln.split()[0] in ("old", "new")}
    assert "completed superseded" in rows["old"] and "superseded" not in rows["new"], out
    assert "superseded: a campaign's re-run replaced it, it counts nowhere (old by new)" in out, out
