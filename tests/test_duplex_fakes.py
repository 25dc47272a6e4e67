"""The provider fakes meet the user speaking over their replies as their timing profile's duplex
behaviour says (`runners/fakes/duplex.py`), each through its provider's own barge-in signal and
the real Pipecat service, and the engine's duplex figures read what each did: the yield latency
against the fake's own record of when it stopped, a backchannel talked through, side speech left
unanswered."""

from __future__ import annotations

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import SessionOpened, TurnEnded
from benchmarks.registry import DUPLEX_NAME, load_benchmark
from runners.base import get_runner
from runners.config import EndOfTurn, Greeting, RunConfig
from runners.engine import run_benchmark
from runners.fakes.duplex import DuplexBehaviour
from runners.fakes.timing import INSTANT

from .provider_runs import quiet_loguru

SPEED = 2.0  # the fakes' clocks are the wall clock × speed: a modest speed keeps transit small in audio ms
TOLERANCE_MS = 60.0  # the fakes hear speech by 20 ms chunks of wall-clock arrival, and their stop takes transit
ALIASES = ["grok", "ultravox", "gemini-3.1-flash", "nova-sonic"]


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DUPLEX_NAME)


async def run(bench, alias: str, behaviour: DuplexBehaviour, turns: list[int]):
    runner = get_runner(alias)
    runner.timing = INSTANT.replace(duplex=behaviour)
    bus = EventBus()
    sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)))
    t0: list[float] = []
    config = RunConfig(model=alias, fake=True, speed=SPEED, turns=turns, greeting=Greeting(enabled=False),
                       end_of_turn=EndOfTurn(quiet_ms=1000.0, drain_ms=200.0))
    await run_benchmark(bench, config, bus, provider=runner, on_session=lambda s: t0.append(s.run.clock.t0))
    heard = [c for rec in runner.fake.connections for c in rec.duplex]
    results = {e.result.turn_index: e.result for e in sub.drain() if isinstance(e, TurnEnded)}
    return results, heard, t0[0]


@pytest.mark.parametrize("alias", ALIASES)
async def test_a_fake_yields_after_its_setting_and_the_engine_measures_it(bench, alias):
    results, heard, t0 = await run(bench, alias, DuplexBehaviour(yield_after_ms=500.0), [1])
    (cue,) = heard
    assert cue.kind == "interruption" and cue.reacted and cue.yield_mono is not None and cue.answered
    (o,) = results[1].duplex
    assert o.yielded and o.answered
    # where the fake stopped, on our timeline (its clock is this machine's, × speed), from the cue's onset
    stopped = (cue.yield_mono - t0) * 1000.0 * SPEED
    assert o.bot_stop_ms == pytest.approx(stopped, abs=TOLERANCE_MS)
    assert o.yield_ms == pytest.approx(500.0, abs=TOLERANCE_MS + 40.0)  # + the endpointer's onset, to its chunk


@pytest.mark.parametrize("alias", ALIASES)
async def test_a_fake_that_ignores_backchannels_and_side_speech_talks_on(bench, alias):
    behaviour = DuplexBehaviour(yield_after_ms=300.0, backchannels="ignore", side_speech="ignore")
    results, heard, _ = await run(bench, alias, behaviour, [0, 2])
    assert [(c.kind, c.reacted) for c in heard] == [("backchannel", False), ("side_speech", False)]
    for turn in (0, 2):
        (o,) = results[turn].duplex
        assert o.bot_speaking and o.yielded is False and not o.answered, (turn, o)
