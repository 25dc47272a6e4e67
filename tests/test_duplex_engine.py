"""Duplex turns end to end: duplex_bench against the real simulator on 127.0.0.1 through the real
Pipecat OpenAI Realtime service. The cues are played into the reply on our timeline, the
simulator stops (or does not stop) its reply as its yield behaviour says and records what it
did, and the engine's yield figures are checked against that record."""

from __future__ import annotations

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import SessionOpened, TurnEnded
from benchmarks.registry import DUPLEX_NAME, load_benchmark
from arena_tui.spine.settings import EndOfTurn, Greeting, RunSettings
from runners.engine import run_benchmark
from runners.simulator import SimulatorServer
from runners.simulator.duplex import yield_errors

from .provider_runs import quiet_loguru

FAST = 10.0  # runs whose figures are yes/no (did it stop, did it answer): any speed


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DUPLEX_NAME)


async def run(bench, faults: str, turns: list[int], speed: float):
    """(turn results, session origins, the simulator's duplex record, the run clock's t0)."""
    async with SimulatorServer(bench, faults=faults) as sim:
        bus = EventBus()
        sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)) or e.kind in ("duplex", "interruption"))
        t0: list[float] = []
        config = RunSettings(model="sim", base_url=sim.base_url, speed=speed, turns=turns,
                           greeting=Greeting(enabled=False), end_of_turn=EndOfTurn(quiet_ms=1000.0, drain_ms=200.0))
        await run_benchmark(bench, config, bus, on_session=lambda s: t0.append(s.run.clock.t0))
        events = sub.drain()
        truth = list(sim.duplex_truth)
    results = {e.result.turn_index: e.result for e in events if isinstance(e, TurnEnded)}
    origins = {e.session: e.t_ms for e in events if isinstance(e, SessionOpened)}
    played = [e for e in events if e.kind in ("duplex", "interruption")]
    return results, origins, truth, t0[0], played


def kept_pace(results, turns) -> None:
    lost = [t for t in turns if results[t].status == "lost_pace"]
    if lost:
        pytest.fail(f"turn(s) {lost} lost pace on this loaded machine: their timing is no measurement")


async def test_yield_latency_matches_what_the_simulator_did_within_20_ms(bench):
    """The done-criterion: three interruptions, each stopped for after another N (150, 400, 800 ms
    of audio after its onset). At 1x: the only error left is the time the simulator's stop takes
    to reach our speaker (wall time, counted `speed` times over in audio ms at higher speeds)."""
    turns = [1, 4, 6]
    results, origins, truth, t0, played = await run(bench, "1:yield=150,4:yield=800,6:yield=400", turns, 1.0)
    kept_pace(results, turns)
    assert [e.turn_index for e in played if e.kind == "duplex"] == turns
    pairs = yield_errors(results.values(), origins, truth, t0, 1.0)
    assert sorted(t.turn_index for t, _, _ in pairs) == turns, (truth, results)
    for t, measured, did in pairs:
        assert t.kind == "interruption" and t.reply_audible and t.answered
        assert did == pytest.approx(t.yield_after_ms, abs=40)  # N after the onset, to the simulator's 20 ms input chunks
    errors = sorted(abs(m - d) for _, m, d in pairs)
    p95 = errors[min(len(errors) - 1, round(0.95 * (len(errors) - 1)))]
    assert p95 <= 20.0, [(t.turn_index, t.yield_after_ms, round(m, 1), round(d, 1)) for t, m, d in pairs]
    for t in turns:
        r = results[t]
        (o,) = r.duplex
        assert o.kind == "interruption" and o.yielded and o.answered and r.agent_interruptions == 0
        assert r.interrupted  # the speaker dropped what the reply still had


async def test_a_selective_model_talks_through_backchannels_and_leaves_side_speech_unanswered(bench):
    results, _, truth, _, _ = await run(bench, "yield=300,backchannel=ignore,side_speech=ignore", [0, 2, 5], FAST)
    assert {(t.turn_index, t.cue): t.reacted for t in truth} == {(0, 0): False, (2, 0): False, (5, 0): False, (5, 1): False}
    for turn in (0, 2, 5):
        for o in results[turn].duplex:
            assert o.played is not None and o.bot_speaking, (turn, o)
            assert o.yielded is False and o.yield_ms is None and o.answered is False, (turn, o)
    assert [r.status for r in results.values()] == ["ok"] * 3
    assert all(r.agent_interruptions == 0 for r in results.values())


async def test_a_plain_server_vad_stops_for_a_backchannel_and_answers_side_speech(bench):
    """The simulator's default (a plain server VAD): every cue is a turn, stopped for at once."""
    results, _, truth, _, _ = await run(bench, "", [0, 2], FAST)
    assert all(t.reacted and t.yield_ms is not None and t.answered for t in truth), truth
    (back,), (side,) = results[0].duplex, results[2].duplex
    assert back.kind == "backchannel" and back.yielded and back.yield_ms is not None  # how soon: the 1x precision test
    assert side.kind == "side_speech" and side.yielded and side.answered


async def test_a_model_that_never_yields_talks_over_an_interruption(bench):
    results, _, truth, _, events = await run(bench, "yield=never", [1], FAST)
    (o,) = results[1].duplex
    assert o.bot_speaking and o.yielded is False and not o.answered
    assert [t.reacted for t in truth] == [False]
    # the interruption's speech, all of it over the reply: the user talked over the bot (reported
    # live), which is no overlap of the bot's in the turn's own figures (judged for turn_taking)
    (barge,) = [e for e in events if e.kind == "interruption" and e.cause == "user_barge_in"]
    assert barge.t_ms == pytest.approx(o.speech.start_ms, abs=1) and results[1].overlap_ms == 0


async def test_the_bot_starting_over_the_user_counts_as_an_agent_interruption(bench):
    results, *_ = await run(bench, "0:barge_in=400", [0], FAST)
    assert results[0].agent_interruptions == 1
