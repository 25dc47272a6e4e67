"""`arena-tui run --headless`: the first line, live verdicts per turn, the per-dimension summary,
the judge choice (auto, none, a judge without its key) and global options on either side."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena_tui.cli import build_parser, main

RUN = ["run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "0,2", "--headless"]


@pytest.fixture
def no_judge_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(k, raising=False)


@pytest.mark.parametrize("argv", [
    ["--db", "A", "--data", "D", "runs"],
    ["runs", "--db", "A", "--data", "D"],
    ["--db", "B", "runs", "--db", "A", "--data", "D"],  # after the command wins, as it was said last
    ["--data", "D", "db", "path", "--db", "A"],  # nested actions too
])
def test_global_options_before_or_after_the_command(argv: list[str]) -> None:
    args = build_parser(argv).parse_args(argv)
    assert (args.db, args.data) == ("A", "D")


def test_global_options_default_when_not_given() -> None:
    args = build_parser(["run", "demo_bench"]).parse_args(["run", "demo_bench"])
    assert args.db is None and args.data is None


def test_headless_run_shows_verdicts_as_they_arrive_and_a_summary(tmp_path: Path, capsys, no_judge_keys) -> None:
    db = tmp_path / "a.db"
    assert main([*RUN, "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = lines[0]
    assert first.startswith("run demo_bench (2 turns, audio at 20×)") and "model sim [SIMULATOR" in first
    assert "judge heuristic (offline word overlap, not an LLM; auto: no OPENAI_API_KEY, AWS credentials, ANTHROPIC_API_KEY or GOOGLE_API_KEY/GEMINI_API_KEY)" in first
    assert f"db {db}" in first
    # turn 0's verdicts arrive while the run goes on: after its progress line, before turn 2 ends
    at = {key: next(i for i, ln in enumerate(lines) if key in ln)
          for key in ("] 1/2  turn 0: ok", "    turn 0 r1 heuristic: ", "] 2/2  turn 2: ok", "    turn 2 r1 heuristic: ")}
    assert list(at.values()) == sorted(at.values()), lines
    assert any(ln.strip().startswith("turn 2 r1 heuristic: ") and "tool_use_correct=pass" in ln for ln in lines), lines
    summary = lines.index(next(ln for ln in lines if ln.startswith("demo_bench judged by heuristic")))
    dims = {ln.split()[0] for ln in lines[summary + 2:] if ln and not ln.startswith(("strict", " "))}
    assert {"kb_grounding", "instruction_following", "tool_use_correct", "turn_taking"} <= dims
    assert lines[-1].startswith("run ") and lines[-1].endswith(f"recorded in {db}")
    with sqlite3.connect(db) as c:  # the verdicts printed are the ones recorded
        judged = {t for (t,) in c.execute("SELECT DISTINCT turn_index FROM judgements")}
    assert judged == {0, 2, None}  # None: the whole-run judgement's own record (its request, its notes)
    assert "    whole run r1 heuristic: judged in one request (offline, no LLM)" in lines


def test_judge_none_records_no_verdicts(tmp_path: Path, capsys, no_judge_keys) -> None:
    db = tmp_path / "a.db"
    assert main([*RUN, "--db", str(db), "--judge", "none"]) == 0
    out = capsys.readouterr().out
    assert "· judge none ·" in out.splitlines()[0]
    assert "judged by" not in out and " r1 " not in out
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM judgements").fetchone() == (0,)
        assert c.execute("SELECT status FROM runs").fetchone() == ("completed",)


def test_a_judge_without_its_key_fails_before_the_run(tmp_path: Path, capsys, no_judge_keys) -> None:
    db = tmp_path / "a.db"
    assert main([*RUN, "--db", str(db), "--judge", "openai"]) == 2
    err = capsys.readouterr().err
    assert "--judge openai: OPENAI_API_KEY is not set" in err and "Traceback" not in err
    assert not db.exists() or sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_auto_picks_the_real_judge_when_its_key_is_set(monkeypatch: pytest.MonkeyPatch, no_judge_keys) -> None:
    import argparse

    from arena_tui.orchestration.live import choose_judge

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    choice = choose_judge(argparse.Namespace(judge="auto"))
    assert choice.kind == "openai" and choice.label == "openai (auto: OPENAI_API_KEY is set)"
    assert "sk-test" not in choice.label
    assert choose_judge(argparse.Namespace(judge="heuristic")).label == "heuristic (offline word overlap, not an LLM)"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena_tui.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=240, stdin=subprocess.DEVNULL)


def test_headless_says_where_the_run_is_and_keeps_pipecat_lines_in_the_log(tmp_path: Path) -> None:
    """A CI log shows each turn's start as it happens; a disconnect is told in our own line while
    Pipecat's (`| ERROR | … no close frame received or sent`, its import banner) go to the log file."""
    db = tmp_path / "a.db"
    done = _cli("run", "demo_bench", "--model", "sim", "--speed", "10", "--turns", "0-1", "--headless",
                "--judge", "none", "--faults", "1:disconnect", "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert done.stderr == "", done.stderr
    assert "ᓚᘏᗢ" not in done.stdout and "| ERROR" not in done.stdout
    starts = [ln.strip() for ln in out if ln.strip().endswith("started") or "started (retry" in ln]
    assert starts == ["greeting started", "turn 0 started", "turn 1 started", "turn 1 started (retry 1)"], out
    # the turn's start comes before its progress line; the disconnect is said before the turn ends
    at = {k: next(i for i, ln in enumerate(out) if k in ln)
          for k in ("turn 0 started", "] 1/2  turn 0", "turn 1 started", "turn 1: session 1→2 (disconnect", "] 2/2  turn 1")}
    assert list(at.values()) == sorted(at.values()), out
    log = (tmp_path / "arena-tui.log").read_text()
    assert "no close frame received or sent" in log


def test_campaign_run_prints_no_pipecat_line(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    done = _cli("campaign", "run", "--bench", "demo_bench", "--model", "sim", "--speed", "10", "--turns", "0",
                "--judge", "none", "--workers", "1", "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ᓚᘏᗢ" not in done.stdout + done.stderr and "| INFO" not in done.stdout + done.stderr, done.stderr
