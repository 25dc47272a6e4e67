"""The run engine end to end: real Pipecat OpenAI Realtime service, the real simulator on
127.0.0.1, the real store. Assertions are on what reached the wire (the simulator's
records), on the simulator's ground truth, and on what the store holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import GREETING_TURN, EMPTY_RESPONSE, MODEL_ENDED_SESSION, DimensionScore, Judgement
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from arena_tui.spine.settings import RunSettings
from runners.engine import RunError, run_benchmark
from runners.simulator import SimulatorServer

FAST = 15.0  # speed for the high-speed runs (AUDIO time / wall time)


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    """Pipecat logs every frame and the whole system prompt at DEBUG; keep warnings only here."""
    import sys

    from loguru import logger

    logger.remove()
    handler = logger.add(sys.stderr, level="WARNING")
    yield
    logger.remove(handler)
    logger.add(sys.stderr)


@pytest.fixture(scope="module")
def conv(shared_data: Path):
    return load_benchmark(shared_data / "conversation_bench")


class SimRun:
    def __init__(self, run_id: str, events: list, sim: SimulatorServer, store: Store, error: str | None = None) -> None:
        self.run_id = run_id
        self.events = events
        self.sim = sim
        self.store = store
        self.error = error  # the RunError a failed run raised

    def kinds(self, kind: str, turn: int | None = ...) -> list:  # type: ignore[assignment]
        return [e for e in self.events if e.kind == kind and (turn is ... or e.turn_index == turn)]

    def result(self, turn: int):
        ends = self.kinds("turn_ended", turn)
        assert ends, f"no turn_ended for turn {turn}"
        return ends[-1].result

    def kept_pace(self, *turns: int) -> None:
        """A turn the machine lost pace on is no measurement: fail so test.sh runs the test again."""
        lost = [t for t in turns if self.result(t).status == "lost_pace"]
        if lost:
            pytest.fail(f"turn(s) {lost} lost pace on this loaded machine: their timing is no measurement")

    def session_origin(self, session: int = 1) -> float:
        """Timeline ms of the session's audio time 0 (the simulator's clock)."""
        return next(e.t_ms for e in self.kinds("session_opened", ...) if e.session == session)


@pytest.fixture
async def sim_run(tmp_path: Path):
    opened: list[tuple[Store, SimulatorServer]] = []

    async def go(bench, *, turns=None, faults=None, speed=FAST, **cfg) -> SimRun:
        sim = SimulatorServer(bench, faults=faults)
        url = await sim.start()
        store = await Store.open(tmp_path / f"arena{len(opened)}.db")
        opened.append((store, sim))
        bus = EventBus()
        store.start_recording(bus)
        sub = bus.subscribe()
        config = RunSettings(model="sim", base_url=url, speed=speed, turns=turns, **cfg)
        error = None
        try:
            run_id = await run_benchmark(bench, config, bus, "simrun")
        except RunError as e:
            run_id, error = "simrun", str(e)
        finally:
            await store.flush()
        return SimRun(run_id, sub.drain(), sim, store, error)

    yield go
    for store, sim in opened:
        await sim.stop()
        await store.close()


def wire_outputs(sim: SimulatorServer) -> dict:
    return {cid: out for s in sim.sessions for cid, out in s.tool_outputs.items()}


# ---------------------------------------------------------------------------- the full run


async def test_all_75_turns_recorded_with_tool_payloads_checked_at_the_wire(conv, sim_run):
    run = await sim_run(conv, speed=FAST)
    store = run.store
    results = {r.turn_index: r for r in await store.turn_results(run.run_id)}
    greeting = results.pop(GREETING_TURN)  # the greeting ends like a turn, with its reply and audio
    assert greeting.status == "ok" and greeting.assistant_text and greeting.bot_speech
    assert await store.audio(run.run_id, GREETING_TURN, "bot") is not None
    assert sorted(results) == list(range(75))
    for i, r in results.items():
        expected = "ended_session" if i == 74 else "ok"
        assert r.status == expected, (i, r.status, r.error)
        assert r.user_audio is not None and r.user_speech, i
        assert r.bot_speech, f"turn {i}: no bot speech measured"
        assert r.latencies.pipeline_ttfb_ms is not None and r.latencies.pipeline_ttfb_ms > 0, i
        assert r.latencies.voice_to_voice_ms is not None and r.latencies.voice_to_voice_ms > 0, i
        assert r.assistant_text and r.reconnects == 0, (i, run.kinds("retry", i), run.kinds("error", i))
        # user audio starts on the input's 20 ms grid, after the previous turn's end
        offset = r.user_audio.start_ms - run.session_origin()
        assert abs(offset / 20.0 - round(offset / 20.0)) < 1e-6, (i, offset)
        assert await store.audio(run.run_id, i, "user") is not None, i
        assert await store.audio(run.run_id, i, "bot") is not None, i
    assert results[74].sentinel == MODEL_ENDED_SESSION
    # a starved machine (wall-clock compute behind sped-up audio) may cost a turn one retry; the
    # turn then still ends ok with its reply (above), and the retry says why
    retries = run.kinds("retry")
    assert sum(r.retries for r in results.values()) == len(retries) <= 3, retries
    assert all(e.reason in ("empty", "no_response") for e in retries), retries
    # turn order on the timeline: each turn's audio starts after the previous bot speech ended
    for i in range(1, 75):
        assert results[i].user_audio.start_ms >= results[i - 1].bot_speech[-1].end_ms, i

    # every expected call was made and matched; every payload the model got is THIS call's
    for t in conv.turns:
        calls = results[t.turn_index].tool_calls
        assert [c.status for c in calls] == ["matched"] * len(t.expected_calls), (t.turn_index, calls)
    answered = run.kinds("tool_result")
    outputs = wire_outputs(run.sim)
    sim_calls = {c.call_id: c for s in run.sim.sessions for c in s.calls}
    assert len(answered) == len(outputs) == len(sim_calls) == sum(len(t.expected_calls) for t in conv.turns)
    for ev in answered:
        out = outputs[ev.call_id]
        assert out.parsed == ev.response, ev.call_id
        assert sim_calls[ev.call_id].turn_index == ev.turn_index
        scripted = conv.turn(ev.turn_index).expected_responses
        assert ev.response in scripted or ev.response == {"status": "success"}

    conv_audio = await store.conversation_audio(run.run_id)
    assert conv_audio is not None and conv_audio.channels == 2
    ended = run.kinds("run_ended")
    assert len(ended) == 1 and ended[0].status == "completed"
    assert len(run.kinds("turn_started", ...)) == 76  # greeting + 75
    assert run.kinds("level", 10) and run.kinds("transcript_delta", 10)


# ---------------------------------------------------------------------------- timeline truth


async def test_measured_latencies_match_simulator_truth_at_1x(conv, sim_run):
    run = await sim_run(conv, turns=[2, 13], speed=1.0)
    # The simulator's audio clock counts audio RECEIVED: it reads T when the chunk ending at T
    # arrives, and that chunk left us at its start, T - 20 ms after the session's chunk 0.
    origin = run.session_origin() - 20.0
    for t in (2, 13):
        r = run.result(t)
        truth = run.sim.truth[t]
        assert truth.status == "answered"
        first_frame = r.user_speech[-1].end_ms + r.latencies.pipeline_ttfb_ms
        # we play what the simulator sent no earlier than it sent it, and only transit later
        # (a few ms on an idle machine; the bound is loose for a loaded one)
        lag = first_frame - (origin + truth.first_audio_ms)
        assert -5 <= lag <= 60, (t, lag)
        audible = origin + truth.first_audio_ms + truth.leading_silence_ms
        assert -5 <= r.bot_speech[0].start_ms - audible <= 60, t
        assert r.latencies.leading_silence_ms == pytest.approx(truth.leading_silence_ms, abs=20), t
        # the injected delay is what the simulator waited after its VAD stop (same clock as above)
        if not conv.turn(t).expected_calls:
            assert truth.first_audio_after_stop_ms == truth.injected_delay_ms
        # voice-to-voice: our user-speech end comes from our own VAD on the WAV, the
        # simulator's from its streaming VAD; the two VADs may place the end differently
        truth_v2v = truth.first_audio_ms + truth.leading_silence_ms - truth.speech_end_ms
        assert r.latencies.voice_to_voice_ms == pytest.approx(truth_v2v, abs=80), t
        assert r.latencies.provider_ttfb_ms is not None


# ---------------------------------------------------------------------------- faults


async def test_a_turn_the_machine_lost_pace_on_is_invalid_counted_nowhere_and_resumed(conv, sim_run, monkeypatch):
    """A process holding more sessions × speed than it can pace (or a busy machine) sends user
    audio late: a fact about our machine, not the model. The turn says so (wall ms, not fatal),
    is recorded `lost_pace` with what the model did kept, is due no verdict and no latency, and
    a resume plays it again with the turns before it replayed."""
    import time

    from arena_tui.compare.stored import load_runs
    from arena_tui.spine.events import PACE_LOST
    from runners.transports import PacedInput

    take, stalled = PacedInput._take_chunk, []

    def stall_once(self, t_ms):
        pcm = take(self, t_ms)
        if self._clips and self._clips[0].start_ms is not None and not stalled:  # mid user clip
            stalled.append(t_ms)
            time.sleep(0.7)  # the loop is held: the next chunks go out ~700 ms late
        return pcm

    monkeypatch.setattr(PacedInput, "_take_chunk", stall_once)
    # at 5x, not FAST: on a busy machine a 15x turn 1 lost pace of its own (the truth, but not this test's)
    run = await sim_run(conv, turns=[0, 1], speed=5.0)
    lost = [e for e in run.kinds("error") if e.where == PACE_LOST]
    assert [e.turn_index for e in lost] == [0] and not lost[0].fatal, [(e.turn_index, e.message) for e in lost]
    assert "ms (wall clock) behind its schedule" in lost[0].message
    lost_turn = run.result(0)
    assert [run.result(t).status for t in (0, 1)] == ["lost_pace", "ok"]  # the run goes on; turn 0 is invalid
    assert lost_turn.assistant_text and "machine lost pace" in lost_turn.error and "ended ok" in lost_turn.error
    (stored,) = await load_runs(run.store, [run.run_id])
    assert stored.untrusted == {0} and stored.tally.uncounted == {"lost_pace": [0]}
    at_1x = stored.__class__(stored.row.model_copy(update={"speed": 1.0}), stored.results, stored.revisions,
                             stored.benchmark, stored.untrusted)
    from arena_tui.compare.leaderboard import run_figures

    # the run's latency counts, the lost turn's does not (`timing.latency_counts`): turn 1's alone
    assert at_1x.latency_excluded is None and len(run_figures(at_1x).v2v) == 1
    from arena_tui.judge.summary import summarize
    from arena_tui.orchestration.resume import plan_resume

    fake_judged = [Judgement(run_id=run.run_id, t_ms=0.0, turn_index=t, judge="heuristic", heuristic=True,
                             scores={"turn_taking": DimensionScore(verdict="pass")}) for t in (0, 1)]
    assert summarize(conv, [run.result(t) for t in (0, 1)], fake_judged).apart == {"lost_pace": [0]}
    assert summarize(conv, [run.result(t) for t in (0, 1)], fake_judged).strict.denominator == 1
    figures = run_figures(stored.__class__(stored.row, stored.results, fake_judged, conv, stored.untrusted))
    assert figures.strict.n == 1 and figures.verdicts[0] == {} and figures.apart == {0: "lost_pace"}
    plan = await plan_resume(run.store, run.run_id, conv)
    assert plan.from_turn == 0 and plan.turns == [0, 1] and plan.done == []


async def test_a_stall_outside_the_users_audio_flags_timing_but_keeps_the_turn(conv, sim_run, monkeypatch):
    """Late silence (the loop held while the model answers, or while a session opens) delays only
    silence: the user's speech went out as recorded. The turn's timing is flagged (`pacing`), the
    turn itself stays a measurement: lost_pace is for late user audio only."""
    import time

    from arena_tui.spine.events import PACE_LOST
    from runners.transports import PacedInput

    take, seen, stalled = PacedInput._take_chunk, [], []

    def stall_after_the_clip(self, t_ms):
        pcm = take(self, t_ms)
        if self._clips:
            seen.append(t_ms)
        elif seen and not stalled:  # the first silence after turn 0's audio
            stalled.append(t_ms)
            time.sleep(0.7)
        return pcm

    monkeypatch.setattr(PacedInput, "_take_chunk", stall_after_the_clip)
    run = await sim_run(conv, turns=[0, 1])
    assert stalled
    lost = [e for e in run.kinds("error") if e.where == PACE_LOST]
    assert [e.turn_index for e in lost] == [0], [(e.turn_index, e.message) for e in lost]
    assert [run.result(t).status for t in (0, 1)] == ["ok", "ok"]


@pytest.mark.parametrize("sticky", [False, True])
async def test_no_response_retries_then_sentinel(conv, sim_run, sticky):
    fault = "1:no_response*" if sticky else "1:no_response"
    # a short watchdog (the simulator will not answer the silent attempts anyway)
    run = await sim_run(conv, turns=[0, 1], faults=fault, watchdog={"extra_ms": 4000, "min_wall_ms": 3000})
    r = run.result(1)
    retries = run.kinds("retry", 1)
    if sticky:
        assert r.status == "no_response" and r.sentinel == EMPTY_RESPONSE and r.assistant_text == EMPTY_RESPONSE
        assert r.retries == 3 and len(retries) == 3
        assert len([x for x in run.sim.truth_log if x.turn_index == 1]) == 4
    else:
        assert r.status == "ok" and r.retries == 1 and retries[0].reason == "no_response"
    assert run.result(0).status == "ok"
    # Each retry plays into a fresh session (the finished turns replayed), never a second copy
    # into the session that heard the turn: a real server has transcribed it already.
    heard = [x.session for x in run.sim.truth_log if x.turn_index == 1]
    assert len(heard) == len(set(heard)) == r.retries + 1, heard
    assert [e.session for e in retries] == heard[1:]
    rotations = [e for e in run.kinds("session_rotated", 1) if e.reason == "retry"]
    assert len(rotations) == r.retries and all(e.replayed.messages >= 2 for e in rotations)  # turn 0's exchange


async def test_empty_response_is_retried_and_recorded(conv, sim_run):
    run = await sim_run(conv, turns=[0], faults="0:empty_response=ctrl46*", watchdog={"extra_ms": 4000, "min_wall_ms": 3000})
    r = run.result(0)
    assert r.status == "empty_response" and r.sentinel == EMPTY_RESPONSE, ([e.reason for e in run.kinds("retry", 0)], [(t.status, t.attempt) for t in run.sim.truth_log])
    assert [e.reason for e in run.kinds("retry", 0)] == ["empty"] * 3
    # its one turn got no answer: the run failed, saying so
    assert run.error is not None and run.error.startswith("no turn got an answer: turn 0 ended empty_response 1")
    assert [(e.status, e.reason) for e in run.kinds("run_ended")] == [("failed", run.error)]


async def test_barge_in_is_an_overlap(conv, sim_run):
    # at 1x: the simulator's reply costs wall-clock time (synthesis) while the user's audio plays
    # on; sped up on a busy machine that delay can outlast the user's whole utterance
    run = await sim_run(conv, turns=[0], faults="0:barge_in=500", speed=1.0)
    run.kept_pace(0)
    r = run.result(0)
    assert r.overlap_ms >= 100
    overlaps = run.kinds("overlap", 0)
    assert overlaps and overlaps[0].end_ms - overlaps[0].start_ms >= 100
    assert sum(o.end_ms - o.start_ms for o in overlaps) == pytest.approx(r.overlap_ms)  # live report = turn measure
    assert r.latencies.voice_to_voice_ms is not None and r.latencies.voice_to_voice_ms < 0
    # the bot talked over the user: an interruption on our timeline, reported before the turn ended
    barge = [e for e in run.kinds("interruption", 0) if e.cause == "bot_barge_in"]
    assert barge and r.interrupted
    assert barge[0].t_ms == pytest.approx(overlaps[0].start_ms)
    # live: known when the user stopped, while the bot was still speaking
    bot_stops = run.kinds("bot_speech_stopped", 0)
    assert bot_stops and run.events.index(overlaps[0]) < run.events.index(bot_stops[-1])


async def test_barge_in_fault_names_the_bot_when_the_user_speaks_in_phrases(sim_run):
    """demo_bench turn 0 is two phrases; the fault makes the bot start in the pause between them.
    Every overlap of that turn is the bot talking over the user, never "user barged in"."""
    from benchmarks.registry import load_benchmark

    run = await sim_run(load_benchmark("demo_bench"), turns=[0], faults="0:barge_in=500", speed=2.0)  # a 500 ms pause: timing a busy machine must not blur
    run.kept_pace(0)
    assert len(run.kinds("user_speech_started", 0)) >= 2  # the case this guards: a pause in the user's turn
    causes = [e.cause for e in run.kinds("interruption", 0) if e.cause != "bot_truncated"]
    said = [(e.kind, round(e.t_ms)) for e in run.events
            if e.kind.endswith(("speech_started", "speech_stopped")) or e.kind in ("interruption", "overlap")]
    truth = [(t.status, t.response_due_ms, t.speech_start_ms, t.notes) for t in run.sim.truth_log]
    assert causes and set(causes) == {"bot_barge_in"}, (causes, said, truth)


async def test_truncated_reply_is_an_interruption(conv, sim_run):
    run = await sim_run(conv, turns=[0], faults="0:truncated=0.3")
    assert run.sim.sessions[0].instructions == conv.system_prompt  # verbatim: nothing appended by Pipecat
    r = run.result(0)
    assert r.status == "ok" and r.interrupted
    assert any(e.cause == "bot_truncated" for e in run.kinds("interruption", 0))
    assert run.sim.truth[0].status == "truncated"


async def test_slow_first_audio_shows_in_latency(conv, sim_run):
    run = await sim_run(conv, turns=[0], faults="0:slow_first_audio=2500")
    r = run.result(0)
    truth = run.sim.truth[0]
    assert truth.injected_delay_ms == 2500
    assert r.latencies.voice_to_voice_ms > 2500 + 800 - 50  # VAD silence + injected delay
    assert r.status == "ok"


@pytest.mark.parametrize("kind,turn,expect_turn,expect_status", [
    ("wrong_call", 13, 13, {"arg_mismatch", "unexpected_tool_call"}),
    ("early_call", 12, 12, {"not_available"}),  # turn 13's call, made on turn 12
    ("late_call", 13, 14, {"not_available"}),
])
async def test_call_faults_are_resolved_per_turn(conv, sim_run, kind, turn, expect_turn, expect_status):
    run = await sim_run(conv, turns=[12, 13, 14], faults=f"{turn}:{kind}")
    calls = run.result(expect_turn).tool_calls
    assert calls, ([(t, run.result(t).tool_calls) for t in (12, 13, 14)], [c for s in run.sim.sessions for c in s.calls])
    assert {c.status for c in calls} <= expect_status, calls
    outputs = wire_outputs(run.sim)
    for c in calls:
        assert outputs[c.call_id].parsed == c.response


async def test_disconnect_rotates_replays_history_and_completes(conv, sim_run):
    run = await sim_run(conv, turns=[12, 13, 14, 15], faults="14:disconnect=0.4")
    rot = run.kinds("session_rotated")
    # (noticed as a closed socket, or as the send error it causes first: either is a drop)
    assert rot and all(r.reason in ("disconnect", "error") and r.turn_index == 14 for r in rot), rot
    assert rot[0].from_session == 1 and rot[0].to_session == 2
    assert len(run.kinds("reconnected", 14)) == len(rot)
    r14 = run.result(14)
    last = rot[-1].to_session
    assert r14.status == "ok" and r14.reconnects == len(rot) and r14.retries >= 1 and r14.session == last
    assert run.result(15).status == "ok" and run.result(15).session == last
    # the replayed history is at the server: turns 12 and 13 as text, 13's call and its output
    s2 = run.sim.sessions[last - 1]
    texts = s2.item_texts()
    for t in (12, 13):
        assert conv.turn(t).input in texts
        assert run.result(t).assistant_text in texts
    call13 = run.result(13).tool_calls[0]
    fc = [i for i in s2.items if i.get("type") == "function_call"]
    fo = [i for i in s2.items if i.get("type") == "function_call_output"]
    assert [i["call_id"] for i in fc] == [call13.call_id] and fc[0]["name"] == call13.name
    assert fo[0]["call_id"] == call13.call_id
    import json

    assert json.loads(fo[0]["output"]) == call13.response
    assert all(r.replayed.messages == 4 and r.replayed.tool_calls == 1 for r in rot)
    assert run.kinds("run_ended")[0].status == "completed"


async def test_session_expiry_rotates(conv, sim_run):
    run = await sim_run(conv, turns=[0, 1, 2], faults="expire=40")
    rot = run.kinds("session_rotated")
    assert rot and rot[0].reason in ("error", "disconnect")
    assert all(run.result(t).status == "ok" for t in (0, 1, 2))
    # the provider's own error (session_expired) is on the record, not just the reconnect
    assert any(e.where == "provider" and "maximum duration" in e.message for e in run.kinds("error", ...))


async def test_rotation_by_age_replays_tool_history(conv, sim_run):
    run = await sim_run(conv, turns=[13, 14], rotation={"max_age_s": 5})
    rot = run.kinds("session_rotated", 14)
    assert len(rot) == 1 and rot[0].reason == "age" and rot[0].replayed.tool_calls == 1
    assert all(r.reason == "age" for r in run.kinds("session_rotated")), run.kinds("session_rotated")
    s2 = run.sim.sessions[rot[0].to_session - 1]
    assert any(i.get("type") == "function_call" and i.get("name") == "submit_dietary_request" for i in s2.items)
    assert run.result(14).status == "ok"


# ---------------------------------------------------------------------------- stop and errors


async def test_cancel_records_interrupted_and_keeps_finished_turns(conv, tmp_path):
    sim = SimulatorServer(conv)
    url = await sim.start()
    store = await Store.open(tmp_path / "a.db")
    bus = EventBus()
    store.start_recording(bus)
    sub = bus.subscribe(lambda e: e.kind == "turn_started" and e.turn_index == 1)
    task = asyncio.create_task(run_benchmark(conv, RunSettings(model="sim", base_url=url, speed=FAST, turns=[0, 1, 2]), bus, run_id="r1"))
    try:
        await asyncio.wait_for(anext(aiter(sub)), 120)
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await store.flush()
        results = {r.turn_index: r for r in await store.turn_results("r1")}
        assert results[0].status == "ok"
        assert results[1].status == "interrupted"
        assert 2 not in results
        run = await store.get_run("r1")
        assert run is not None and run.status == "interrupted"
        assert await store.audio("r1", 0, "bot") is not None
    finally:
        await sim.stop()
        await store.close()
