"""Bad input end to end: a corpus of broken and odd benchmarks, built at test time from the shared
data and the demo, each put through `arena-tui benchmarks` and `arena-tui run --model sim` as a
real subprocess with a time limit.

A refused case must end in one clear line naming benchmark/file/turn/field, exit non-zero, print
no traceback and record nothing; an odd-but-usable case (stereo, 8 kHz, float WAVs, shuffled lines)
must be listed `ready` and run to completion. Memory is bounded: a 200 MB line and a 2-hour WAV
are refused without being read whole (the children's peak RSS stays near a tiny benchmark's).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "benchmarks" / "demo"
TIME_LIMIT_S = 120.0  # a hang, not a slow machine: a normal 2-turn run takes a few seconds
RSS_HEADROOM_KB = 150 * 1024  # a 200 MB line or a 2-hour WAV read whole would blow well past this


def _cli() -> list[str]:
    exe = Path(sys.executable).with_name("arena-tui")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "arena_tui.cli"]


@dataclass
class Result:
    code: int
    out: str
    err: str
    maxrss_kb: int
    timed_out: bool

    @property
    def text(self) -> str:
        return self.out + self.err


def arena(args: list[str], env: dict[str, str], tmp: Path) -> Result:
    """Run the CLI as a child with a time limit, and measure its peak RSS (wait4's rusage)."""
    out_p, err_p = tmp / "stdout.txt", tmp / "stderr.txt"
    with open(out_p, "wb") as fo, open(err_p, "wb") as fe:
        p = subprocess.Popen(_cli() + args, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=env,
                             cwd=tmp, start_new_session=True)
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            os.killpg(p.pid, signal.SIGKILL)

        timer = threading.Timer(TIME_LIMIT_S, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    return Result(p.returncode, out_p.read_text(errors="replace"), err_p.read_text(errors="replace"),
                  usage.ru_maxrss, fired.is_set())


# -- building the corpus ------------------------------------------------------------------------

def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "turns.jsonl").read_text().splitlines() if line.strip()]


def _write_rows(folder: Path, rows: list[dict]) -> None:
    (folder / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _edit_row(index: int, **changes) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        rows = _rows(folder)
        for k, v in changes.items():
            if v is _DROP:
                rows[index].pop(k)
            else:
                rows[index][k] = v
        _write_rows(folder, rows)
    return build


_DROP = object()


def _edit_line(index: int, text: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        lines = (folder / "turns.jsonl").read_text().splitlines()
        lines[index] = text
        (folder / "turns.jsonl").write_text("\n".join(lines) + "\n")
    return build


def _write(name: str, data: bytes | str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        p = folder / name
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return build


def _edit_tools(change: Callable[[list], None]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        tools = json.loads((folder / "tools.json").read_text())
        change(tools)
        (folder / "tools.json").write_text(json.dumps(tools, indent=1))
    return build


def _set_param(tool: int, path: list[str], value) -> Callable[[list], None]:
    def change(tools: list) -> None:
        node = tools[tool]["parameters"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _pcm_header(data_bytes: int, rate: int = 24_000, channels: int = 1, bits: int = 16, tag: int = 1) -> bytes:
    align = channels * bits // 8
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)
    return (b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
            + b"data" + struct.pack("<I", data_bytes))


def _wav_bytes(turn: int, data: Callable[[Path], bytes]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        p = folder / "audio" / f"turn_{turn:03d}.wav"
        p.write_bytes(data(p))
    return build


def _long_wav(turn: int, seconds: float) -> Callable[[Path], None]:
    """A WAV whose header says `seconds` long, as a sparse file (no disk, no time to write it)."""
    def build(folder: Path) -> None:
        p = folder / "audio" / f"turn_{turn:03d}.wav"
        n = int(seconds * 24_000) * 2
        with open(p, "wb") as f:
            f.write(_pcm_header(n))
            f.truncate(44 + n)
    return build


def _recode(turn: int, rate: int | None = None, channels: int = 1, subtype: str = "PCM_16") -> Callable[[Path], None]:
    """Rewrite a turn's WAV in another (valid) format: the content must survive resampling."""
    def build(folder: Path) -> None:
        p = folder / "audio" / f"turn_{turn:03d}.wav"
        data, sr = sf.read(str(p), dtype="float32", always_2d=True)
        mono = data[:, 0]
        if rate is not None and rate != sr:
            import soxr

            mono, sr = soxr.resample(mono, sr, rate), rate
        frames = np.stack([mono] * channels, axis=1) if channels > 1 else mono
        sf.write(str(p), frames, sr, subtype=subtype)
    return build


def _huge_line(folder: Path) -> None:
    """Turn 1's golden_text is 200 MB (written in chunks: the test does not hold it either)."""
    lines = (folder / "turns.jsonl").read_text().splitlines()
    with open(folder / "turns.jsonl", "w") as f:
        for i, line in enumerate(lines):
            if i == 1:
                row = json.loads(line)
                head = json.dumps({k: v for k, v in row.items() if k != "golden_text"})[:-1]
                f.write(head + ', "golden_text": "')
                chunk = "a" * (1 << 20)
                for _ in range(200):
                    f.write(chunk)
                f.write('"}\n')
            else:
                f.write(line + "\n")


def _recorded(folder: Path) -> None:
    """Mark the demo's WAVs as recorded: a missing one is then a broken copy, not "synthesise the rest"."""
    (folder / "audio" / "sources.json").unlink()


def _drop_turn(index: int) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        _write_rows(folder, [r for r in _rows(folder) if r["turn_index"] != index])
    return build


def _chain(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        for s in steps:
            s(folder)
    return build


def _wav_loop(turn: int) -> Callable[[Path], None]:
    """The turn's WAV is a symlink to a symlink back to it (the demo's audio is synthesised: a WAV
    that is merely missing there is one still to make)."""
    def build(folder: Path) -> None:
        wav = folder / "audio" / f"turn_{turn:03d}.wav"
        wav.unlink()
        wav.symlink_to(f"turn_{turn:03d}_b.wav")
        (folder / "audio" / f"turn_{turn:03d}_b.wav").symlink_to(wav.name)
    return build


def _outside_wav(folder: Path) -> None:
    outside = folder.parent.parent / "elsewhere.wav"
    shutil.copy(folder / "audio" / "turn_000.wav", outside)
    _edit_row(0, audio_file=str(outside))(folder)


@dataclass
class Case:
    name: str
    base: str  # demo | conv3 (conversation_bench turns 0-2, recorded audio) | appointment (no audio)
    build: Callable[[Path], None]
    expect: str | None  # fragment of the one refusal line; None = merely odd, must run correctly
    field: str | None = None  # what the line must name besides the benchmark (file, turn, field)


CASES = [
    Case("empty_turns", "demo", _write("turns.jsonl", ""), "no turns in the file", "turns.jsonl"),
    Case("blank_turns", "demo", _write("turns.jsonl", "\n  \n\n"), "no turns in the file", "turns.jsonl"),
    Case("negative_turn", "demo", _edit_row(0, turn_index=-1), "turn -1 is the greeting", "field 'turn_index'"),
    Case("string_turn_index", "demo", _edit_row(3, turn_index="3"), "valid integer", "field 'turn_index'"),
    Case("bad_json_line", "demo", _edit_line(3, '{"turn_index": 3, "input": "x",'), "bad JSON line",
         "turns.jsonl:4"),
    Case("array_line", "demo", _edit_line(2, "[1, 2]"), "expected a JSON object", "turns.jsonl:3"),
    Case("unknown_field", "demo", _edit_row(4, golden_txt="typo"), "unknown field", "field 'golden_txt'"),
    Case("missing_field", "demo", _edit_row(4, golden_text=_DROP), "missing (required)", "field 'golden_text'"),
    Case("empty_input", "demo", _edit_row(1, input="  "), "empty", "field 'input'"),
    Case("duplicate_turn", "demo", _edit_row(5, turn_index=4), "duplicate turn_index", "turns.jsonl:6"),
    Case("gap_in_turns", "demo", _drop_turn(5), "missing 5", "field 'turn_index'"),
    Case("huge_golden_text", "demo", _huge_line, "line is 200.0 MiB", "turns.jsonl:2"),
    Case("bad_call_shape", "demo", _edit_row(2, required_function_call="check_repair_slots"),
         "must be null, an object", "field 'required_function_call'"),
    Case("call_unknown_tool", "demo", _edit_row(2, required_function_call={"name": "order_pizza", "args": {}}),
         "'order_pizza', which is not in tools.json", "turn 2"),
    Case("call_unknown_arg", "demo",
         _edit_row(2, required_function_call={"name": "check_repair_slots", "args": {"day": "2025-05-06"}}),
         "argument 'day' is not a parameter", "turn 2"),
    Case("prompt_latin1", "demo", _write("system_prompt.txt", "Vous êtes l'assistant du café.".encode("latin-1")),
         "not UTF-8", "system_prompt.txt"),
    Case("prompt_empty", "demo", _write("system_prompt.txt", "\n"), "empty", "system_prompt.txt"),
    Case("prompt_huge", "demo", _write("system_prompt.txt", "a" * (17 << 20)), "more than the 16.0 MiB",
         "system_prompt.txt"),
    Case("benchmark_json_bad", "demo", _write("benchmark.json", "{name: demo}"), "bad JSON", "benchmark.json"),
    Case("turn_count_wrong", "demo",
         lambda f: _write("benchmark.json", json.dumps({**json.loads((f / "benchmark.json").read_text()),
                                                        "turn_count": 12}))(f),
         "turn_count is 12 but 10 turns", "benchmark.json"),
    Case("tools_missing", "appointment", lambda f: (f / "tools.json").unlink(), "missing", "tools.json"),
    Case("tools_bad_json", "appointment", _write("tools.json", "[{"), "bad JSON", "tools.json"),
    Case("tools_not_array", "appointment", _write("tools.json", '{"name": "x"}'), "expected a JSON array",
         "tools.json"),
    Case("tools_required_string", "appointment", _edit_tools(_set_param(1, ["required"], "date")),
         "'date' is not of type 'array'", "parameters.required"),
    Case("tools_type_typo", "appointment", _edit_tools(_set_param(1, ["properties", "date", "type"], "strng")),
         "not a JSON Schema type", "parameters.properties.date.type"),
    Case("tools_type_number", "appointment", _edit_tools(_set_param(1, ["properties", "date", "type"], 5)),
         "not a JSON Schema type", "parameters.properties.date.type"),
    Case("tools_duplicate", "appointment", _edit_tools(lambda t: t.append(dict(t[1]))), "duplicate tool name",
         "tools.json"),
    Case("audio_absolute_outside", "demo", _outside_wav, "outside the benchmark folder", "field 'audio_file'"),
    Case("audio_dotdot", "demo", _edit_row(1, audio_file="../demo/audio/turn_001.wav"),
         "outside the benchmark folder", "field 'audio_file'"),
    Case("wav_missing", "conv3", lambda f: (f / "audio" / "turn_001.wav").unlink(), "WAV missing", "turn 1"),
    Case("wav_missing_demo", "demo", _chain(_recorded, lambda f: (f / "audio" / "turn_003.wav").unlink()),
         "WAV missing", "turn 3"),
    Case("wav_truncated", "conv3", _wav_bytes(1, lambda p: _pcm_header(96_000) + p.read_bytes()[44:1044]),
         "truncated", "turn 1"),
    Case("wav_zero_samples", "conv3", _wav_bytes(0, lambda p: _pcm_header(0)), "no audio samples", "turn 0"),
    Case("wav_riff_garbage", "conv3",
         _wav_bytes(2, lambda p: b"RIFF\xff\xff\xff\xffWAVE" + np.random.default_rng(7).bytes(4000)),
         "unusable WAV", "turn 2"),
    Case("wav_text_file", "demo", _wav_bytes(4, lambda p: b"not a wav at all"), "not a WAV file", "turn 4"),
    Case("wav_two_hours", "conv3", _long_wav(1, 2 * 3600), "2:00:00 long", "turn 1"),
    Case("wav_silent", "demo", _wav_bytes(1, lambda p: _pcm_header(96_000) + bytes(96_000)), "silent", "turn 1"),
    Case("wav_unsupported", "demo", _wav_bytes(0, lambda p: _pcm_header(8000, tag=0x55) + bytes(8000)), "unsupported encoding",
         "turn 0"),
    # merely odd: must run correctly
    Case("tools_nan", "appointment", _edit_tools(_set_param(1, ["properties", "date", "maxLength"], float("nan"))),
         "NaN is not JSON", "field 'tools[1] (check_availability).parameters.properties.date.maxLength'"),
    Case("call_args_infinity", "demo",
         _edit_row(2, required_function_call={"name": "check_repair_slots", "args": {"date": float("-inf")}}),
         "-Infinity is not JSON", "turn 2: field 'required_function_call.args.date'"),
    Case("tools_ref", "appointment", _edit_tools(_set_param(1, ["properties", "date"], {"$ref": "#/$defs/date"})),
         "'$ref' is not taken by every provider", "field 'tools[1] (check_availability).parameters.properties.date.$ref'"),
    Case("wav_symlink_loop", "demo", _wav_loop(1), "WAV is a symlink loop", "turn 1"),
    Case("odd_stereo_wav", "demo", _chain(_recode(0, channels=2), _recode(1, channels=2)), None),
    Case("odd_8khz_wav", "demo", _chain(_recode(0, rate=8000), _recode(1, rate=8000)), None),
    Case("odd_float_48k_wav", "conv3", _chain(_recode(0, rate=48_000, subtype="FLOAT"),
                                              _recode(1, rate=48_000, subtype="FLOAT")), None),
    Case("odd_shuffled_lines", "demo", lambda f: _write_rows(f, list(reversed(_rows(f)))), None),
]


def _base(kind: str, shared: Path, dest: Path) -> None:
    if kind == "demo":
        shutil.copytree(DEMO, dest)
    elif kind == "appointment":
        shutil.copytree(shared / "appointment_bench", dest)
    elif kind == "conv3":  # the shared conversation_bench cut to its first three turns and their WAVs
        src = shared / "conversation_bench"
        dest.mkdir()
        (dest / "audio").mkdir()
        for name in ("system_prompt.txt", "knowledge_base.txt", "tools.json"):
            shutil.copy(src / name, dest / name)
        meta = json.loads((src / "benchmark.json").read_text())
        (dest / "benchmark.json").write_text(json.dumps({**meta, "turn_count": 3}))
        _write_rows(dest, _rows(src)[:3])
        for i in range(3):
            shutil.copy(src / "audio" / f"turn_{i:03d}.wav", dest / "audio" / f"turn_{i:03d}.wav")
    for p in [dest, *dest.rglob("*")]:  # copies of read-only data must be ours to edit
        p.chmod(0o755 if p.is_dir() else 0o644)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("bad_input")
    data = root / "data"
    data.mkdir()
    for case in CASES:
        _base(case.base, shared_data, data / case.name)
        case.build(data / case.name)
    (root / "small").mkdir()  # the baseline for memory: one tiny, healthy benchmark
    _base("demo", shared_data, root / "small" / "ok_demo")
    return root


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("env")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_TUI_", "HF_", "OPENAI_"))}
    e.update(ARENA_TUI_AUDIO_DIR=str(home / "overlay"), HF_HOME=str(home / "hf"), HF_HUB_OFFLINE="1",
             ARENA_TUI_DB=str(home / "default.db"))
    return e


@pytest.fixture(scope="module")
def listing(corpus: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Result:
    """`arena-tui benchmarks` once over the whole corpus."""
    return arena(["benchmarks", "--data", str(corpus / "data")], env, tmp_path_factory.mktemp("listing"))


@pytest.fixture(scope="module")
def baseline(corpus: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Result:
    return arena(["benchmarks", "--data", str(corpus / "small")], env, tmp_path_factory.mktemp("baseline"))


def _no_crash(r: Result) -> None:
    assert not r.timed_out, f"hung (killed after {TIME_LIMIT_S:.0f} s):\n{r.text[-2000:]}"
    assert "Traceback" not in r.text, r.text[-3000:]


def _runs_in(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        has = con.execute("select count(*) from sqlite_master where name='runs'").fetchone()[0]
        return con.execute("select count(*) from runs").fetchone()[0] if has else 0
    finally:
        con.close()


def _row(listing: Result, name: str) -> str:
    rows = [line for line in listing.out.splitlines() if line.split("  ")[0] == name]
    assert len(rows) == 1, f"{name} not listed once:\n{listing.out}"
    return rows[0]


def test_listing_survives_the_whole_corpus(listing: Result, baseline: Result) -> None:
    _no_crash(listing)
    assert listing.code != 0  # broken benchmarks are an error, named at the end
    assert listing.err.strip().splitlines()[-1].startswith("arena-tui: ")
    # a 200 MB line and a 2-hour WAV were not read whole
    assert listing.maxrss_kb < baseline.maxrss_kb + RSS_HEADROOM_KB, (listing.maxrss_kb, baseline.maxrss_kb)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, corpus: Path, listing: Result, baseline: Result, env: dict[str, str],
              tmp_path: Path) -> None:
    row = _row(listing, case.name)
    mine = [line for line in listing.err.splitlines() if line.startswith(f"error: {case.name}: ")]
    db = tmp_path / "runs.db"
    r = arena(["--db", str(db), "run", case.name, "--data", str(corpus / "data"), "--model", "sim",
               "--speed", "20", "--headless", "--turns", "0-1"], env, tmp_path)
    _no_crash(r)
    if case.expect is None:
        assert row.endswith("ready") and not mine, (row, mine)
        assert r.code == 0, r.text[-3000:]
        assert "turns 2/2 done: ok 2" in r.out and "run completed" in r.out, r.out[-2000:]
        assert _runs_in(db) == 1
        return
    # `benchmarks` says what `run` will refuse
    assert "BROKEN" in row, row
    assert any(case.expect in line and case.field in line for line in mine), "\n".join(mine) or listing.err
    # `run` refuses with the same clear line, records nothing
    assert r.code != 0, r.text[-2000:]
    last = r.err.strip().splitlines()[-1]
    assert last.startswith("arena-tui: ") and case.name in last and case.expect in last and case.field in last, r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert _runs_in(db) == 0
    assert r.maxrss_kb < baseline.maxrss_kb + 2 * RSS_HEADROOM_KB + 200 * 1024, r.maxrss_kb  # run imports Pipecat


OPTION_CASES = [
    ("speed_inf", ["--speed", "inf"], "--speed: input should be a finite number"),
    ("speed_1e9", ["--speed", "1e9"], "--speed: input should be less than or equal to 50"),
    ("speed_1000", ["--speed", "1000"], "--speed: input should be less than or equal to 50"),
    ("speed_nan", ["--speed", "nan"], "--speed: input should be a finite number"),
    ("speed_zero", ["--speed", "0"], "--speed: input should be greater than 0"),
    ("rotate_negative", ["--rotate-after", "-5"], "--rotate-after: input should be greater than 0"),
    ("rotate_nan", ["--rotate-after", "nan"], "--rotate-after: input should be a finite number"),
    ("faults_past_the_end", ["--faults", "99:no_response"], "--faults: demo_bench has no turn 99"),
    ("faults_garbage", ["--faults", "3:explode"], "--faults: unknown fault 'explode'"),
    ("faults_not_sim", ["--faults", "3:no_response", "--model", "gpt-realtime", "--fake"],
     "--faults only applies to --model sim"),
    ("turns_past_the_end", ["--turns", "8-12"], "no turn(s) 10, 11, 12"),
    ("turns_garbage", ["--turns", "1,x"], "bad turn range 'x'"),
    ("data_nonexistent", ["--data", "/nonexistent/arena-data"], "--data /nonexistent/arena-data: no such folder"),
    ("turns_empty", ["--turns", ""], "argument --turns: '' selects no turns"),
    ("judge_concurrency_zero", ["--judge-concurrency", "0"], "argument --judge-concurrency: must be 1 or more (got 0)"),
    ("judge_deadline_nan", ["--judge-deadline", "nan"], "argument --judge-deadline: 'nan' is not a positive, finite"),
]


@pytest.mark.parametrize("args,expect", [c[1:] for c in OPTION_CASES], ids=[c[0] for c in OPTION_CASES])
def test_run_option(args: list[str], expect: str, env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    r = arena(["--db", str(db), "run", "demo_bench", "--model", "sim", "--headless", *args], env, tmp_path)
    _no_crash(r)
    assert r.code != 0
    assert r.err.strip().splitlines() == [r.err.strip().splitlines()[-1]] and expect in r.err, r.err
    assert _runs_in(db) == 0


@pytest.mark.parametrize("args,expect", [
    (["benchmarks", "--data", "/nonexistent/arena-data"], "--data /nonexistent/arena-data: no such folder"),
    (["benchmarks", "demo_bench", "--data", "/nonexistent/arena-data"], "no such folder"),
    (["runs", "--limit", "-1"], "--limit must be 0 or more (got -1)"),
], ids=["benchmarks_data_nonexistent", "show_data_nonexistent", "runs_limit_negative"])
def test_other_commands(args: list[str], expect: str, env: dict[str, str], tmp_path: Path) -> None:
    r = arena(["--db", str(tmp_path / "x.db"), *args], env, tmp_path)
    _no_crash(r)
    assert r.code != 0
    assert len(r.err.strip().splitlines()) == 1 and expect in r.err, r.err
