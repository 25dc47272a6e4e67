"""What stops a run before it starts, checked before anything is recorded (the new-run dialog).

The same checks as `arena-tui run`: the model alias, faults only against the simulator, the
settings, the runner's own preflight (key set, packages installed, speed), the benchmark and
the audio of the selected turns. Nothing here imports the run engine or Pipecat at import time;
the runner modules load on first call, so callers run these in a thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelChoice:
    alias: str
    provider: str
    simulated: bool
    needs: tuple[str, ...]  # what is missing for a run against the real service (keys, packages)
    needs_fake: tuple[str, ...]  # what is missing for a run against its local fake

    def label(self, fake: bool = False) -> str:
        missing = self.needs_fake if fake else self.needs
        what = "simulator" if self.simulated else self.provider
        return f"{self.alias}  ({what}; {'needs ' + ', '.join(missing) if missing else 'ready'})"


def model_choices() -> list[ModelChoice]:
    """Every model alias with what a run with it still needs (key names only, never values)."""
    from runners.base import get_runner, known_models
    from runners.config import RunConfig

    out = []
    for alias in known_models():
        runner = get_runner(alias)
        needs = tuple(short(p) for p in runner.preflight(RunConfig(model=alias)))
        needs_fake = tuple(short(p) for p in runner.preflight(RunConfig(model=alias, fake=True)))
        out.append(ModelChoice(alias, runner.name, bool(runner.simulated), needs, needs_fake))
    return sorted(out, key=lambda c: (not c.simulated, c.alias))


def short(problem: str) -> str:
    """'nova-sonic: environment variable AWS_ACCESS_KEY_ID is not set (…)' → 'AWS_ACCESS_KEY_ID'."""
    text = problem.split(": ", 1)[-1]
    m = re.match(r"environment variable (\S+)", text)
    return m.group(1) if m else text


def preflight(benchmark: str, config: dict[str, Any], data_dir: Path | None) -> list[str]:
    """Every problem that would make this run fail at its start, each a line naming what to fix."""
    from benchmarks.loader import load_benchmark
    from runners.base import get_runner
    from runners.config import RunConfig

    try:
        runner = get_runner(str(config.get("model", "")))
    except ValueError as e:
        return [str(e)]
    problems: list[str] = []
    try:
        cfg = RunConfig(**config)
    except ValueError as e:  # ConfigError: one line naming the flag (faults, speed, …)
        return problems + [str(e)]
    problems += runner.preflight(cfg)
    try:
        bench = load_benchmark(benchmark, data_dir)
    except Exception as e:
        return problems + [f"benchmark {benchmark!r}: {e}"]
    from runners.engine import RunError, select_turns

    try:
        turns = select_turns(bench, cfg.turns)
    except (RunError, ValueError) as e:
        return problems + [str(e)]
    for check in (cfg.check_benchmark, runner.check_benchmark):  # settings; provider limits (GLM's prompt cap)
        try:
            check(bench)
        except (RunError, ValueError) as e:
            problems.append(str(e))
    if getattr(runner, "mode", "audio") != "text":
        missing = [t.turn_index for t in turns if (p := bench.audio_path(t)) is None or not p.exists()]
        if missing:
            shown = ", ".join(map(str, missing[:8])) + (" …" if len(missing) > 8 else "")
            problems.append(f"{benchmark}: no audio for turn(s) {shown} (download it with `arena-tui fetch "
                            f"{benchmark}`, or synthesize it)")
    return problems
