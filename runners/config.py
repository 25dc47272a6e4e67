"""How a run is configured: one pydantic model so a run's settings can be stored and shown.

Secrets are deliberately absent: providers read keys from the environment when a session
opens, so nothing here can leak a key into SQLite, logs or exports.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VadConfig(Strict):
    """Server VAD sent to providers that take it (reference: 0.7 / 500 / 800)."""

    threshold: float = 0.7
    prefix_padding_ms: int = 500
    silence_duration_ms: int = 800


class EndOfTurn(Strict):
    """When the next user turn may start: transcript flushed, then `quiet_ms` without bot audio, then `drain_ms`."""

    quiet_ms: float = 2000.0
    drain_ms: float = 500.0


class Watchdog(Strict):
    """Per-turn deadline (WAV duration + `extra_ms`, extended while output is active) and retries."""

    extra_ms: float = 30000.0
    min_wall_ms: float = 10000.0  # floor in wall time when running faster than real time
    backoff_ms: float = 2000.0
    max_retries: int = 3


class Greeting(Strict):
    """The greeting handshake (turn -1); not a benchmark turn."""

    enabled: bool = True
    prompt: str = "Greet the user briefly."
    start_timeout_ms: float = 8000.0
    finish_timeout_ms: float = 30000.0


class Rotation(Strict):
    """When to replace a live session at a turn boundary (a dead one is always replaced)."""

    max_age_s: float | None = None  # audio-time age of a session
    max_context_chars: int | None = None  # prompt + history chars
    history_budget_chars: int = 128_000  # what a replay may carry
    max_reconnects: int = 5  # per run; beyond this the run fails


class RunConfig(Strict):
    model: str = "sim"
    base_url: str | None = None  # override the provider endpoint (e.g. a local server)
    turns: list[int] | None = None  # subset of turn indices; None = all
    speed: float = Field(1.0, gt=0)
    sample_rate: int = 24000
    chunk_ms: float = 20.0
    preroll_ms: float = 100.0
    vad: VadConfig = Field(default_factory=VadConfig)
    end_of_turn: EndOfTurn = Field(default_factory=EndOfTurn)
    watchdog: Watchdog = Field(default_factory=Watchdog)
    greeting: Greeting = Field(default_factory=Greeting)
    rotation: Rotation = Field(default_factory=Rotation)
    faults: str | None = None  # simulator fault spec
    fake: bool = False  # run against the provider's in-process protocol fake, scripted from the benchmark
    sim_policy: str = "oracle"
    sim_voice: str = "auto"
    level_block_ms: float = 50.0
    vad_method: str = "energy"  # speech_intervals method for user WAVs ("silero" | "energy")

    @field_validator("turns")
    @classmethod
    def _sorted_unique(cls, v: list[int] | None) -> list[int] | None:
        return None if v is None else sorted(set(v))

    def public(self) -> dict:
        """What run_started records (the config never holds secrets; this is the contract)."""
        return self.model_dump(mode="json")


def parse_turns(spec: str) -> list[int]:
    """`"0,5-9"` → `[0, 5, 6, 7, 8, 9]`; raises ValueError naming the bad part."""
    out: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise ValueError(f"bad turn range {part!r} in --turns {spec!r} (use e.g. 0,5-9)") from None
    if not out:
        raise ValueError(f"--turns {spec!r} selects no turns")
    return sorted(out)
