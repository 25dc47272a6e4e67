"""Rehydrated runs (the reference's `--rehydrate --parallel N`): every target turn is played in
a fresh session seeded with the GOLDEN conversation before it (inputs, golden replies, expected
calls with their scripted results), up to `config.parallel` turns at once.

A turn is then scored on its own, never on what the model did earlier: each turn is one
instance of the run's turn loop (`AudioRun` or `TextRun`) holding one `Seed`, playing that one
turn through the same opening, replay path, retries and rotations as a sequential run. They
share the run id, the provider (started once, so its fake sees every session), one timeline
and one session numbering; the run's start and end are published here, once.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import ErrorEvent, RunEnded, TurnResult
from arena_tui.spine.benchmark import Benchmark, Turn
from arena_tui.spine.settings import RunSettings

from ..base import ProviderRunner, RunError
from .base import RunBase
from .history import Seed, golden_history
from .outcome import unanswered_run
from .infra import InfraError

Loop = Callable[..., RunBase[Any, Any]]


class RehydratedRun:
    """Drives one rehydrated run: one turn-loop instance per target turn, `parallel` at a time."""

    def __init__(
        self,
        loop: Loop,
        benchmark: Benchmark,
        config: RunSettings,
        bus: EventBus,
        run_id: str,
        provider: ProviderRunner,
        on_session: Callable[[Any], None] | None = None,
    ) -> None:
        self.loop, self.benchmark, self.config, self.bus = loop, benchmark, config, bus
        self.run_id, self.provider, self.on_session = run_id, provider, on_session
        self.numbers = itertools.count(1)
        self.lead = self.turn_loop(None)  # records the run's start and end, on the run's timeline
        self.failed: dict[int, Exception] = {}
        self.results: list[TurnResult] = []  # every turn's record, for the run's outcome

    def turn_loop(self, seed: Seed | None) -> RunBase[Any, Any]:
        return self.loop(
            self.benchmark, self.config, self.bus, self.run_id, self.provider, self.on_session,
            seed=seed, numbers=self.numbers,
        )

    def seed_for(self, turn: Turn) -> Seed:
        before = [t for t in self.benchmark.turns if t.turn_index < turn.turn_index]
        return Seed(history=golden_history(before), start_ms=self.lead.now(), detail=f"rehydrated turn {turn.turn_index}")

    async def execute(self, turns: list[Turn]) -> None:
        lead = self.lead
        await lead.checked(turns)
        lead.publish_run_started(turns)
        gate = asyncio.Semaphore(self.config.parallel)
        try:
            await self.provider.start(self.config, self.benchmark)
            await asyncio.gather(*(self.play(turn, gate) for turn in turns))
            # the run-outcome rule, unless a turn failed for another reason than our infrastructure
            ours = all(isinstance(e, InfraError) for e in self.failed.values())
            if ours and (unanswered := unanswered_run(self.results)) is not None:
                raise RunError(unanswered)  # failed, as below: named once, then the end
            if self.failed:
                why = "; ".join(f"turn {i}: {str(e) or type(e).__name__}" for i, e in sorted(self.failed.items()))
                lead.publish(lead.ev(RunEnded, turn_index=None, status="failed", reason=f"{len(self.failed)} turn(s) failed: {why}"))
            else:
                lead.publish(lead.ev(RunEnded, turn_index=None, status="completed"))
        except asyncio.CancelledError:
            lead.publish(lead.ev(RunEnded, turn_index=None, status="interrupted", reason="cancelled"))
            await asyncio.shield(self.stop())
            raise
        except Exception as e:
            lead.publish(lead.ev(ErrorEvent, turn_index=None, where="engine", message=str(e), fatal=True))
            lead.publish(lead.ev(RunEnded, turn_index=None, status="failed", reason=str(e)))
            await self.stop()
            raise
        await self.stop()

    async def play(self, turn: Turn, gate: asyncio.Semaphore) -> None:
        """One turn in its own seeded session; a failure is that turn's (recorded, named), not the run's."""
        async with gate:
            run = self.turn_loop(self.seed_for(turn))
            try:
                await run.play([turn])
            except Exception as e:  # play() recorded the turn and the error event
                self.failed[turn.turn_index] = e
            finally:
                self.results.extend(run.results)
                run.turn_index = None
                run.flush_conversation(None)
                if run.session is not None:
                    await asyncio.shield(run.session.close())

    async def stop(self) -> None:
        try:
            await self.provider.stop()
        except Exception:  # noqa: BLE001 - teardown must not hide the run's own outcome
            pass
