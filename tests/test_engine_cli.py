"""`arena-tui run`, the engine's refusals (clear errors, nothing started) and replay selection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from benchmarks.registry import load_benchmark
from arena_tui.spine.settings import RunSettings, parse_turns
from runners.engine import RunError, run_benchmark
from runners.rotation import History, select_replay


@pytest.fixture(scope="module")
def conv(shared_data: Path):
    return load_benchmark(shared_data / "conversation_bench")


def test_parse_turns():
    assert parse_turns("0,5-7, 9") == [0, 5, 6, 7, 9]
    with pytest.raises(ValueError, match="bad turn range 'x'"):
        parse_turns("1,x")
    with pytest.raises(ValueError, match="'9-3'"):
        parse_turns("9-3")


@pytest.mark.parametrize(
    "cfg,env,message",
    [
        ({"model": "nope"}, {}, "unknown model 'nope'"),
        ({"model": "gpt-realtime"}, {"OPENAI_API_KEY": None}, "OPENAI_API_KEY is not set"),
        ({"model": "gpt-realtime", "speed": 4}, {"OPENAI_API_KEY": "sk-x"}, "--speed must be 1"),
        ({"model": "sim", "turns": [0, 99]}, {}, "no turn(s) 99"),
    ],
)
async def test_refusals_name_the_problem_and_publish_nothing(conv, monkeypatch, cfg, env, message):
    for k, v in env.items():
        if v is None:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    bus = EventBus()
    sub = bus.subscribe()
    with pytest.raises(RunError) as e:
        await run_benchmark(conv, RunSettings(**cfg), bus)
    assert message in str(e.value)
    assert sub.drain() == []


async def test_unreadable_user_audio_is_an_error_naming_turn_and_file(conv, tmp_path):
    bench = conv.model_copy(deep=True)
    root = tmp_path / "bench"
    (root / "audio").mkdir(parents=True)
    (root / "audio" / "turn_000.wav").write_bytes(b"RIFF not really")
    bench.root = root
    with pytest.raises(RunError, match=r"turn 0.*turn_000\.wav"):
        await run_benchmark(bench, RunSettings(model="sim", turns=[0]), EventBus())


def test_replay_keeps_tool_calls_first_then_recent_text():
    h = History()
    from arena_tui.spine.events import ToolCallRecord

    h.add_turn(0, "a" * 100, "b" * 100, [])
    h.add_turn(1, "c" * 100, "d" * 100, [ToolCallRecord(call_id="c1", name="f", args={"x": 1}, status="matched", response={"ok": True})])
    h.add_turn(2, "e" * 100, "f" * 100, [])
    items, s = select_replay(h.items, 10_000)
    assert s.strategy == "full_history" and s.messages == 6 and s.tool_calls == 1 and items == h.items
    items, s = select_replay(h.items, 250)
    assert s.strategy == "tool_priority" and s.tool_calls == 1
    assert [i.text[:1] for i in items if i.kind in ("user", "assistant")] == ["e", "f"]
    assert s.dropped_messages == 4
    items, s = select_replay(h.items, 5)
    assert s.strategy == "zero_context" and items == []


def test_cli_run_headless_against_the_simulator(shared_data, tmp_path, capsys):
    db = tmp_path / "cli.db"
    code = main(
        ["--db", str(db), "--data", str(shared_data), "run", "conversation_bench", "--model", "sim",
         "--speed", "15", "--turns", "13", "--headless"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1/1" in out and "SIMULATOR" in out
    assert "✓submit_d" in out and "tool calls expected 1: ✓1 matched, 0 missed, ✗0 unexpected" in out
    with sqlite3.connect(db) as c:
        (status,) = c.execute("select status from runs").fetchone()
        assert status == "completed"


def test_cli_run_says_what_is_missing(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["--db", str(tmp_path / "x.db"), "--data", str(shared_data), "run", "conversation_bench", "--model", "gpt-realtime", "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "OPENAI_API_KEY" in err and "Traceback" not in err
    code = main(["--db", str(tmp_path / "x.db"), "run", "conversation_bench", "--turns", "3-1"])
    assert code == 2 and "bad turn range" in capsys.readouterr().err
    code = main(["--db", str(tmp_path / "x.db"), "run", "conversation_bench", "--faults", "3:bogus"])
    assert code == 2 and "--faults" in capsys.readouterr().err


async def test_real_provider_path_keeps_the_key_out_of_store_and_logs(conv, tmp_path, monkeypatch):
    """`--model gpt-realtime --base-url` against a local server: the key goes on the wire only."""
    import io

    from loguru import logger

    from arena_tui.store import Store
    from runners.simulator import SimulatorServer

    secret = "sk-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    log = io.StringIO()
    handler = logger.add(log, level="DEBUG")
    sim = SimulatorServer(conv)
    url = await sim.start()
    db = tmp_path / "k.db"
    store = await Store.open(db)
    bus = EventBus()
    store.start_recording(bus)
    try:
        run_id = await run_benchmark(conv, RunSettings(model="gpt-realtime", base_url=url, turns=[12]), bus)
        await store.flush()
        results = await store.turn_results(run_id)
        assert [(r.turn_index, r.status) for r in results] == [(-1, "ok"), (12, "ok")]
        assert sim.sessions[0].auth_present and sim.sessions[0].model == "gpt-realtime"
    finally:
        logger.remove(handler)
        await sim.stop()
        await store.close()
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f
    assert secret not in log.getvalue()


def test_cli_models_lists_every_provider_and_what_it_needs(capsys, monkeypatch):
    for env in ("OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("XAI_API_KEY", "xai-secret-value-123")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    for alias in ("sim", "gpt-realtime", "gemini-native-audio", "gemini-3.1-flash", "nova-sonic", "glm-realtime-flash",
                  "glm-realtime-air", "grok-realtime", "ultravox", "gpt-4.1"):
        assert alias in lines, alias
    assert lines["sim"].endswith("ready")
    assert lines["gpt-realtime"].endswith("needs OPENAI_API_KEY")
    assert lines["grok-realtime"].endswith("key set") and "xai-secret-value-123" not in out  # presence only: not "ready"
    assert main(["models", "--fake"]) == 0
    assert "needs" not in capsys.readouterr().out  # no keys needed against the fakes


def test_headless_summary_counts_expected_matched_missed_and_unexpected_calls(tmp_path, capsys):
    """demo_bench turn 5 expects two calls (the fakes make both): the summary counts every
    expected call, not only the calls made."""
    db = tmp_path / "calls.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "5",
                 "--headless", "--judge", "none"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "tool calls expected 2: ✓2 matched, 0 missed, ✗0 unexpected" in out, out


def test_call_count_names_missed_and_unexpected_calls():
    from arena_tui.orchestration.headless import CallCount
    from arena_tui.spine.events import ToolCallRecord

    def call(status: str) -> ToolCallRecord:
        return ToolCallRecord(call_id="c", name="f", status=status)

    n = CallCount()
    n.add(2, [call("matched")])  # one of two expected made
    n.add(0, [call("not_available")])  # made where none was expected
    n.add(1, [call("matched"), call("duplicate_skipped")])
    n.add(1, [call("arg_mismatch")])  # the wrong args: missed and unexpected
    assert (n.expected, n.matched, n.missed, n.unexpected, n.duplicates) == (4, 2, 2, 2, 1)
    assert str(n) == "expected 4: ✓2 matched, 2 missed, ✗2 unexpected, 1 duplicate"
