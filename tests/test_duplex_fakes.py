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
from runners.engine import run_benchmark
from arena_tui.spine.faults import DuplexBehaviour
from arena_tui.spine.settings import EndOfTurn, Greeting, RunSettings
from runners.fakes.timing import INSTANT

from .provider_runs import quiet_loguru

SPEED = 2.0  # the fakes' clocks are the wall clock × speed: a modest speed keeps transit small in audio ms
TOLERANCE_MS = 60.0  # a fake's clock is the wall clock: its stop takes transit (× speed) to reach our speaker
ALIASES = ["grok", "ultravox", "gemini-3.1-flash", "nova-sonic", "glm", "azure-voice-live", "inworld-realtime", "vertex-gemini-live",
           "gpt-live-1"]


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
    config = RunSettings(model=alias, fake=True, speed=SPEED, turns=turns, greeting=Greeting(enabled=False),
                       end_of_turn=EndOfTurn(quiet_ms=1000.0, drain_ms=200.0))
    await run_benchmark(bench, config, bus, provider=runner, on_session=lambda s: t0.append(s.run.clock.t0))
    heard = [c for rec in runner.fake.connections for c in rec.duplex]
    results = {e.result.turn_index: e.result for e in sub.drain() if isinstance(e, TurnEnded)}
    return results, heard, t0[0]


@pytest.mark.parametrize("alias", ALIASES)
async def test_a_fake_talks_through_a_backchannel_yields_to_an_interruption_and_the_engine_measures_it(bench, alias):
    behaviour = DuplexBehaviour(yield_after_ms=500.0, backchannels="ignore")
    results, heard, t0 = await run(bench, alias, behaviour, [0, 1])
    back, cue = heard
    assert (back.kind, back.reacted, back.yield_mono) == ("backchannel", False, None)
    (o,) = results[0].duplex
    assert o.bot_speaking and o.yielded is False and not o.answered, o
    assert cue.kind == "interruption" and cue.reacted and cue.yield_mono is not None and cue.answered
    (o,) = results[1].duplex
    assert o.yielded and o.answered
    # where the fake stopped, on our timeline (its clock is this machine's, × speed), from the cue's onset
    stopped = (cue.yield_mono - t0) * 1000.0 * SPEED
    assert o.bot_stop_ms == pytest.approx(stopped, abs=TOLERANCE_MS)
    # never sooner than its setting: it hears the onset no earlier than it came (GLM's client sends
    # audio in batches, and GLM cannot flush what it already sent: its stop is later still)
    assert o.yield_ms >= 500.0 - TOLERANCE_MS
