"""The offline OpenAI-Realtime simulator served on its own (`arena-tui simulate`), its setup
errors as one CliError line each. `runners.simulator` (websockets, numpy) loads on first call.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.errors import CliError


def parse_faults(spec: str | None) -> Any:
    """The simulator's fault plan of `--faults`; a CliError naming the bad part."""
    from runners.simulator import FaultSpecError, parse_faults as parse  # deferred: the simulator (websockets, numpy) loads only for this command

    try:
        return parse(spec)
    except FaultSpecError as e:
        raise CliError(f"--faults: {e}") from None


def simulator_server(benchmark: Any, **options: Any) -> Any:
    """A `SimulatorServer` for `benchmark` (not started); a CliError when it cannot be set up."""
    from runners.simulator import SimulatorServer  # deferred: the simulator (websockets, numpy) loads only for this command

    try:
        return SimulatorServer(benchmark, **options)
    except (RuntimeError, ValueError) as e:
        raise CliError(str(e)) from None
