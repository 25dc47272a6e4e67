"""Where the user aggregator sits in an audio session's pipeline: before the paced input when its
turns are the service's (the user's chunks then go straight to the service, one hop), after it
when the run brackets the user's turns itself (the aggregator must see the brackets). Both run a
turn end to end through the real Pipecat OpenAI Realtime service against the simulator."""

from __future__ import annotations

from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregator
from pipecat.services.llm_service import LLMService

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import TurnEnded
from arena_tui.spine.settings import Greeting, RunSettings
from runners.engine import run_benchmark
from runners.simulator import SimulatorServer
from runners.transports import PacedInput


async def session_order(bench, **settings) -> tuple[list[type], str]:
    """(the classes around the paced input: before, itself, after), and turn 0's status."""
    async with SimulatorServer(bench) as sim:
        bus = EventBus()
        sub = bus.subscribe(lambda e: isinstance(e, TurnEnded))
        seen: list[PacedInput] = []
        config = RunSettings(model="sim", base_url=sim.base_url, speed=10.0, turns=[0],
                             greeting=Greeting(enabled=False), **settings)
        await run_benchmark(bench, config, bus, on_session=lambda s: seen.append(s.input))
        ended = sub.drain()
    paced = seen[0]
    assert paced.previous is not None and paced.next is not None
    return [type(paced.previous), type(paced), type(paced.next)], ended[0].result.status


async def test_server_turns_put_the_user_aggregator_first_and_the_chunks_reach_the_service_directly(demo):
    order, status = await session_order(demo)
    assert issubclass(order[0], LLMUserAggregator) and order[1] is PacedInput and issubclass(order[2], LLMService)
    assert status == "ok"


async def test_turns_the_run_brackets_itself_go_through_the_user_aggregator(demo):
    order, status = await session_order(demo, disable_vad=True)  # the engine closes the user's turn: client-side brackets
    assert order[1] is PacedInput and issubclass(order[2], LLMUserAggregator)
    assert status == "ok"
