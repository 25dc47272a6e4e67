"""`--disable-vad`: the provider's server VAD off, the user's turn closed by our own commit.

As the reference's manual mode: the session goes out with `turn_detection: null`, and at the end
of the speech in each user WAV (our VAD, where the clip played) the client sends
`input_audio_buffer.commit` + `response.create`. Asserted at the server (the OpenAI Realtime
simulator; xAI's fake) through the real Pipecat services, and stored with the run and shown.
"""

from __future__ import annotations

import pytest

from arena_tui.cli import main
from arena_tui.run_view import RunState
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from runners.base import get_runner
from runners.engine import run_benchmark
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru

SPEED = 15.0


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def test_openai_realtime_manual_commit_at_our_speech_end(demo) -> None:
    runner = get_runner("gpt-realtime")
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model="gpt-realtime", fake=True, fake_timing="instant", speed=SPEED, turns=[0, 1, 5],
                       disable_vad=True)
    await run_benchmark(demo, config, bus, provider=runner)
    events = sub.drain()
    sim = runner.fake
    assert isinstance(sim, SimulatorServer)
    # the session asked for no server VAD: `turn_detection: null` arrived, and the simulator ran none
    for rec in sim.sessions:
        inputs = [(u.get("audio") or {}).get("input") or {} for u in rec.session_updates]
        assert any("turn_detection" in i and i["turn_detection"] is None for i in inputs), inputs
        assert rec.turn_detection is None
    # each turn: one commit, then a response.create, at our speech end (never the server's 800 ms later)
    kinds = [(e.session, e.type, e.audio_ms) for e in sim.log if e.type in ("input_audio_buffer.commit", "response.create")]
    commits = [k for k in kinds if k[1] == "input_audio_buffer.commit"]
    assert len(commits) == 3, kinds
    for c in commits:
        after = kinds[kinds.index(c) + 1]
        assert after[1] == "response.create" and after[0] == c[0], kinds
    turns = {t.turn_index: t for t in sim.truth_log if t.turn_index >= 0}
    assert sorted(turns) == [0, 1, 5], [(t.turn_index, t.identified_by, t.match_offset_ms, t.notes) for t in sim.truth_log]
    results = {e.result.turn_index: e.result for e in events if e.kind == "turn_ended" and e.turn_index >= 0}
    for i, t in turns.items():
        assert t.identified_by == "fingerprint+manual_commit", t  # each commit closed the turn it heard
        assert t.status == "answered", t
        # the commit came where our VAD put the end of the speech in the WAV (the time from the
        # speech's start, on the server's audio clock and on ours), not a server VAD's silence later
        ours = results[i].user_speech[-1].end_ms - results[i].user_speech[0].start_ms
        theirs = t.speech_stopped_ms - t.speech_start_ms
        assert abs(theirs - ours) < 120, (i, theirs, ours)
    # stored with the run and shown
    started = next(e for e in events if e.kind == "run_started")
    assert started.config["disable_vad"] is True
    state = RunState(started.run_id)
    for e in events:
        state.apply(e)
    assert "manual commit" in state.model_label
    assert all(r.status == "ok" for r in results.values()), results
    assert sorted((c.name, c.status) for c in results[5].tool_calls) == [("check_part_stock", "matched")] * 2


async def test_grok_manual_commit_sends_turn_detection_null(demo) -> None:
    runner = get_runner("grok")
    bus = EventBus()
    config = RunSettings(model="grok", fake=True, fake_timing="instant", speed=SPEED, turns=[0, 1], disable_vad=True)
    await run_benchmark(demo, config, bus, provider=runner)
    fake = runner.fake
    assert fake is not None
    conn = fake.connections[0]
    updates = [m["session"] for m in conn.messages if m.get("type") == "session.update"]
    # sent as null (Pipecat leaves None fields out: the server would keep its VAD on)
    assert updates and all("turn_detection" in u and u["turn_detection"] is None for u in updates), updates
    kinds = [m.get("type") for m in conn.messages if m.get("type") in ("input_audio_buffer.commit", "response.create")]
    # the greeting's response.create, then commit + response.create for each of the two turns
    assert kinds[-4:] == ["input_audio_buffer.commit", "response.create"] * 2, kinds
    assert conn.user_turns == 2


def test_disable_vad_refused_where_the_protocol_has_no_client_commit(tmp_path, capsys) -> None:
    runner = get_runner("gemini-native-audio")
    problems = runner.preflight(RunSettings(model="gemini-native-audio", fake=True, disable_vad=True))
    assert any("--disable-vad is not supported" in p for p in problems), problems
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "ultravox", "--fake", "--headless",
                 "--disable-vad", "--judge", "none"])
    err = capsys.readouterr().err
    assert code == 2 and "ultravox: --disable-vad is not supported" in err


def test_cli_manual_commit_run_says_so(tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "1",
                 "--no-greeting", "--headless", "--judge", "none", "--disable-vad"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "model sim [SIMULATOR] (manual commit)" in out


def test_campaign_disable_vad_refused_where_the_protocol_has_no_client_commit(tmp_path, capsys) -> None:
    """The run preflight's rule (`ProviderRunner.input_problems`), one line per cell it refuses;
    nothing is recorded."""
    import asyncio

    from arena_tui.campaign import records
    from arena_tui.store import Store

    db = tmp_path / "x.db"
    code = main(["--db", str(db), "campaign", "run", "--bench", "demo_bench", "--model", "sim,ultravox", "--fake",
                 "--disable-vad", "--judge", "none"])
    err = capsys.readouterr().err
    assert code == 2, err
    refused = [line for line in err.splitlines() if "--disable-vad" in line]
    assert refused == ["arena-tui: demo_bench × ultravox: ultravox: --disable-vad is not supported (its protocol has "
                       "no client commit of the user's turn; it applies to azure-realtime, azure-voice-live, grok, inworld, openai and sim)"], err
    assert "campaign not started: 1 problem(s) above" in err

    async def nothing_recorded() -> None:
        async with await Store.open(db) as store:
            assert await store.list_runs() == [] and await records.list_campaigns(store) == []

    asyncio.run(nothing_recorded())


def test_campaign_spec_disable_vad_from_toml_and_flag(tmp_path) -> None:
    from arena_tui.campaign.spec import CampaignSpec, SpecError, build_spec, load_toml

    f = tmp_path / "c.toml"
    f.write_text('bench = ["demo_bench"]\nmodel = ["sim", "grok"]\ndisable_vad = true\n')
    spec = build_spec(load_toml(f), {})
    assert spec.disable_vad and spec.run_settings("grok").disable_vad is True
    assert CampaignSpec.from_json(spec.to_json()) == spec
    plain = build_spec({}, {"benchmarks": "demo_bench", "models": "sim"})
    assert "disable_vad" not in plain.to_json() and plain.run_settings("sim").disable_vad is False
    assert build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "disable_vad": True}).disable_vad
    f.write_text('bench = ["demo_bench"]\nmodel = ["sim"]\ndisable_vad = "yes"\n')
    with pytest.raises(SpecError, match="disable_vad must be true or false"):
        build_spec(load_toml(f), {})
