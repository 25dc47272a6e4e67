"""The offline OpenAI-Realtime simulator served on its own (`arena-tui simulate`), its setup
errors as one CliError line each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, Unpack

from arena_tui.spine.errors import CliError
from arena_tui.spine.faults import FaultPlan, FaultSpecError, parse_faults as parse
from runners.simulator import SimulatorServer

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark


def parse_faults(spec: str | None) -> FaultPlan:
    """The simulator's fault plan of `--faults`; a CliError naming the bad part."""
    try:
        return parse(spec)
    except FaultSpecError as e:
        raise CliError(f"--faults: {e}") from None


class SimulatorOptions(TypedDict, total=False):
    """What `arena-tui simulate` sets of a `SimulatorServer` (its defaults are the server's own)."""

    faults: FaultPlan | str | None
    voice: str
    port: int
    response_delay_ms: float


def simulator_server(benchmark: Benchmark, **options: Unpack[SimulatorOptions]) -> SimulatorServer:
    """A `SimulatorServer` for `benchmark` (not started); a CliError when it cannot be set up."""
    try:
        return SimulatorServer(benchmark, **options)
    except (RuntimeError, ValueError) as e:
        raise CliError(str(e)) from None
