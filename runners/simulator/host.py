"""What a connection uses of its `SimulatorServer`: the benchmark's shared turn state and settings.

Declared here so `connection` and `replies` do not import `server` (which imports them to
serve each websocket): the server satisfies this Protocol.
"""

from __future__ import annotations

from typing import Any, Protocol

from arena_tui.spine.benchmark import Benchmark, ExpectedCall

from .faults import FaultPlan, TurnFault
from .fingerprint import FingerprintIndex
from .records import ClientEventRecord, ResponseRecord, TurnTruth


class SimulatorHost(Protocol):
    benchmark: Benchmark
    faults: FaultPlan
    voice: str
    response_delay_ms: float
    leading_silence_ms: float
    chunk_ms: float
    wait_for_turn_end: bool
    log: list[ClientEventRecord]
    responses: list[ResponseRecord]
    fallbacks: list[dict[str, Any]]
    index: FingerprintIndex
    _order: list[int]
    _attempts: dict[int, int]
    _answered: set[int]

    def next_unanswered(self) -> int | None: ...
    def conversation_started(self) -> bool: ...
    def begin_attempt(self, turn_index: int) -> int: ...
    def record_truth(self, truth: TurnTruth) -> None: ...
    def mark_answered(self, turn_index: int) -> None: ...
    def plan_calls(self, turn_index: int, fault: TurnFault | None) -> list[tuple[int, ExpectedCall, bool]]: ...
    def reply_text(self, turn_index: int) -> str: ...
