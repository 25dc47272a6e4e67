"""The one preflight of a run: everything that would stop it at its start, checked before anything
is recorded, for `arena-tui run`, the new-run dialog and every campaign cell alike.

In the order a user fixes them: the benchmark (found and valid, loaded with the run's speaker),
the settings against it (its turns, the faults' turns), its audio for the turns played; then
the provider (a known model, its keys and packages, the speed and input it takes, its limits on
the benchmark). The first half needs no provider module, so `run` prints its first line between
the two (`announce`) before Pipecat loads; the second loads the runner, so callers run this in a
thread off a UI loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings
from runners import catalog


@dataclass
class Checked:
    """What the preflight found: the benchmark as the run would load it (None when it cannot be
    loaded) and every problem, one line each."""

    benchmark: Benchmark | None
    problems: list[str] = field(default_factory=list)

    @property
    def refusal(self) -> str:
        """The problems as one line: the problem itself, or `cannot run: a; b`."""
        return self.problems[0] if len(self.problems) == 1 else "cannot run: " + "; ".join(self.problems)


def preflight(benchmark: str, settings: RunSettings, data_dir: Path | None, *, data: str | None = None,
              announce: Callable[[Benchmark], None] | None = None) -> Checked:
    """Every problem that would stop this run at its start. `data`: the `--data` as typed (a
    missing-audio line repeats it in the command it suggests); `announce(benchmark)` is called
    once the benchmark's half found nothing, before the provider's half loads it."""
    checked = _benchmark_half(benchmark, settings, data_dir)
    bench = checked.benchmark
    fits = bench is not None and not checked.problems  # its turns and faults are the benchmark's
    audio = _plays_audio(settings)
    if bench is not None and fits and audio:
        checked.problems += _audio(bench, settings, benchmark, data)
    if bench is not None and not checked.problems and announce is not None:
        announce(bench)
    runner, problems = _provider_half(settings, bench)
    checked.problems += problems
    if bench is not None and fits and audio is None and runner is not None and runner.mode != "text":
        checked.problems += _audio(bench, settings, benchmark, data)  # only its runner says it plays audio
    return checked


def _benchmark_half(name: str, settings: RunSettings, data_dir: Path | None) -> Checked:
    from benchmarks.loader import BenchmarkError  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a run is checked
    from benchmarks.registry import load_benchmark  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a run is checked

    try:
        bench = load_benchmark(name, data_dir, speaker=settings.speaker)
    except BenchmarkError as e:
        return Checked(None, [str(e)])
    except (FileNotFoundError, KeyError, ValueError, OSError) as e:
        return Checked(None, [f"benchmark {name!r}: {e}"])
    return Checked(bench, settings.check_benchmark(bench))


def _provider_half(settings: RunSettings, bench: Benchmark | None) -> tuple[Any, list[str]]:
    """(the run's provider runner, what it refuses of the run: the engine's own check and its
    limits on the benchmark, GLM's prompt cap); (None, why) when there is none."""
    from runners.engine import RunError, check_run, runner_for  # deferred: the provider's module (and Pipecat) loads only for this half

    try:
        runner = runner_for(settings.model, settings.service)
    except RunError as e:
        return None, [str(e)]
    problems = check_run(settings, runner)  # (the settings against the benchmark: the benchmark's half)
    if bench is not None:
        try:
            runner.check_benchmark(bench)
        except (RunError, ValueError) as e:
            problems.append(str(e))
    return runner, problems


def _audio(bench: Benchmark, settings: RunSettings, name: str, data: str | None) -> list[str]:
    from benchmarks.registry import missing_audio  # deferred: benchmark reading loads only when a run is checked

    line = missing_audio(bench, settings.turns, name, data)
    return [line] if line else []


def _plays_audio(settings: RunSettings) -> bool | None:
    """Whether the run plays the benchmark's audio, from the providers' catalog (no Pipecat);
    None when only loading its runner would tell (a user's own `--service` class, an unknown alias)."""
    if settings.service:
        return None
    try:
        return catalog.find(settings.model).mode != "text"
    except ValueError:
        return None
