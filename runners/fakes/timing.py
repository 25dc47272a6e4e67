"""When a fake's reply happens: first audio, streaming pace, bursts, the terminal event's lag.

Our fakes used to answer at once, in one burst, with the terminal event right after the audio.
Real services do not (../shared/notes/real-provider-timing.md, Gemini Live measured by
kwindla/aiewf-eval): first audio 0.5-10 s after the user's audio, audio streamed slower than
real time in dozens of bursts, the terminal event (turnComplete, response.done, ...) 5-15 s after
the last audio, so often more than 30 s after the user's audio. An engine tested only against
instant fakes never meets that, and its end-of-turn rule broke on it (issue 23).

A `TimingProfile` declares that behaviour once; each fake plays its own event sequence on it.
Everything is in AUDIO time on the fake's clock, which runs at the run's `--speed` (a test at
speed 20 waits 20x less wall time for the same behaviour), and every draw is seeded per reply,
so a run is reproducible. `INSTANT` is the old behaviour; each fake module declares its
provider's `REAL_TIMING`; `RunSettings.fake_timing` picks one by name.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypedDict

from arena_tui.spine.faults import PLAIN_VAD, DuplexBehaviour
from arena_tui.spine.settings import FAKE_TIMINGS  # the names `RunSettings.fake_timing` accepts

Range = tuple[float, float]



@dataclass(frozen=True)
class TurnTiming:
    """One reply's overrides of the profile (None: the profile's draw). Keyed by reply number
    (the k-th user utterance the fake answers; -1 for a kickoff such as the greeting)."""

    first_audio_ms: float | None = None
    stream_rate: float | None = None
    burst_ms: float | None = None
    terminal_lag_ms: float | None = None
    #: the first hearing gets no output at all (a provider stall); heard again, it is answered
    no_output: bool = False
    #: provider behaviours forced on (True) or off (False) for this reply
    quirks: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "quirks", MappingProxyType(dict(self.quirks)))


@dataclass(frozen=True)
class ReplyPlan:
    """One reply's timing, drawn from a profile with that reply's seed."""

    reply: int
    first_audio_ms: float = 0.0
    stream_rate: float = 0.0  # audio seconds per second of run time; 0: all at once
    burst_ms: float = 0.0  # mean audio per burst; 0: one burst
    terminal_lag_ms: float = 0.0
    no_output: bool = False
    quirks: frozenset[str] = frozenset()
    seed: str = ""

    def has(self, quirk: str) -> bool:
        return quirk in self.quirks

    def rng(self, purpose: str) -> random.Random:
        """A random stream of its own for one purpose of this reply (bursts, a quirk's spacing)."""
        return random.Random(f"{self.seed}:{purpose}")

    def schedule(self, parts_ms: list[float]) -> list[float]:
        """When each audio part goes out, in ms after the first one: parts grouped into bursts
        of about `burst_ms` (each 0.6-1.4x), burst k starting when the audio before it, streamed
        at `stream_rate`, is due. All zeros for an instant reply."""
        if self.stream_rate <= 0 or not parts_ms:
            return [0.0] * len(parts_ms)
        rng = self.rng("bursts")
        out: list[float] = []
        sent = 0.0  # audio before the current burst
        start = 0.0
        room = 0.0  # audio the current burst still takes
        for ms in parts_ms:
            if room <= 0:  # a new burst
                start = sent / self.stream_rate
                room = self.burst_ms * rng.uniform(0.6, 1.4) if self.burst_ms > 0 else float("inf")
            out.append(start)
            sent += ms
            room -= ms
        return out


@dataclass(frozen=True)
class TimingProfile:
    """How a provider times its replies, in audio ms; drawn per reply by `plan(n)`."""

    name: str = "instant"
    first_audio_ms: Range = (0.0, 0.0)  # usual range after the user's audio (uniform)
    slow_share: float = 0.0  # share of replies whose first audio comes late instead
    slow_first_audio_ms: Range = (0.0, 0.0)
    stream_rate: float = 0.0  # audio s per s of run time (< 1: slower than real time); 0: all at once
    burst_ms: Range = (0.0, 0.0)  # audio per burst; (0, 0): one burst
    terminal_lag_ms: Range = (0.0, 0.0)  # last audio -> the terminal event
    #: provider behaviours (named by the fake) -> share of replies that show them (1: every one)
    quirks: Mapping[str, float] = field(default_factory=dict)
    #: per-reply overrides, by reply number
    turns: Mapping[int, TurnTiming] = field(default_factory=dict)
    seed: int = 0
    #: how a reply meets the user speaking over it (a benchmark's duplex cues: `duplex.py`)
    duplex: DuplexBehaviour = PLAIN_VAD

    def __post_init__(self) -> None:  # frozen all the way down: a profile is shared by every session
        object.__setattr__(self, "quirks", MappingProxyType(dict(self.quirks)))
        object.__setattr__(self, "turns", MappingProxyType(dict(self.turns)))

    @property
    def instant(self) -> bool:
        return self.name == "instant"

    def with_turns(self, turns: Mapping[int, TurnTiming]) -> TimingProfile:
        """This profile with overrides for some replies: `profile.with_turns({1: TurnTiming(...)})`."""
        return dataclasses.replace(self, turns={**self.turns, **turns})

    def replace(self, **changes: object) -> TimingProfile:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]  # a field's name and value, checked by the dataclass

    def plan(self, reply: int) -> ReplyPlan:
        """Reply `reply`'s timing: the same for the same profile, seed and reply number."""
        seed = f"{self.name}:{self.seed}:{reply}"
        rng = random.Random(seed)
        over = self.turns.get(reply, TurnTiming())
        if rng.random() < self.slow_share:
            first = rng.uniform(*self.slow_first_audio_ms)
        else:
            first = rng.uniform(*self.first_audio_ms)
        burst = rng.uniform(*self.burst_ms)
        lag = rng.uniform(*self.terminal_lag_ms)
        quirks = {q for q, share in sorted(self.quirks.items()) if rng.random() < share}
        for q, on in over.quirks.items():
            (quirks.add if on else quirks.discard)(q)
        return ReplyPlan(
            reply=reply,
            first_audio_ms=first if over.first_audio_ms is None else over.first_audio_ms,
            stream_rate=self.stream_rate if over.stream_rate is None else over.stream_rate,
            burst_ms=burst if over.burst_ms is None else over.burst_ms,
            terminal_lag_ms=lag if over.terminal_lag_ms is None else over.terminal_lag_ms,
            no_output=over.no_output,
            quirks=frozenset(quirks),
            seed=seed,
        )


INSTANT = TimingProfile()


class Pace(TypedDict, total=False):
    """How a fake keeps a run's time (`ProviderRunner.fake_pace`): its clock runs at `speed`, its
    replies are timed by `timing` (a profile, or the name of one: "real" is its provider's)."""

    speed: float
    timing: str | TimingProfile

#: The envelope every real service's fake follows unless its provider has better figures: the
#: only measured ones are Gemini Live's (first audio 0.5-1.4 s, 1 in 10 up to 10 s; audio at
#: ~0.25x real time in bursts of 0.3-1 s; the terminal event 5-15 s after the last audio), and
#: the issue asks every fake to show that much; which provider really does less is not known.
ENVELOPE = TimingProfile(
    name="real",
    first_audio_ms=(500.0, 1400.0),
    slow_share=0.1,
    slow_first_audio_ms=(3000.0, 10000.0),
    stream_rate=0.25,
    burst_ms=(300.0, 1000.0),
    terminal_lag_ms=(5000.0, 15000.0),
)


def pick(name: str, real: TimingProfile) -> TimingProfile:
    """The profile `RunSettings.fake_timing` names, given the provider's real one."""
    if name == "instant":
        return INSTANT
    if name == "real":
        return real
    raise ValueError(f"unknown fake timing {name!r}; known: {', '.join(FAKE_TIMINGS)}")


class Clock(Protocol):
    """Audio time and waits on it (the provider fakes' `FakeClock`, the simulator's `AudioClock`)."""

    @property
    def ms(self) -> float: ...

    async def until(self, ms: float) -> None: ...


class FakeClock:
    """A fake's AUDIO clock: wall time since it started, times the run's speed.

    The provider fakes cannot count received audio as the simulator does (Gemini gets audio only
    inside activity windows), so they scale the wall clock exactly as the engine's RunClock does."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.t0 = time.monotonic()

    @property
    def ms(self) -> float:
        return (time.monotonic() - self.t0) * 1000.0 * self.speed

    async def until(self, ms: float) -> None:
        delay = (ms - self.ms) / 1000.0 / self.speed
        if delay > 0:
            await asyncio.sleep(delay)

    async def sleep(self, ms: float) -> None:
        if ms > 0:
            await asyncio.sleep(ms / 1000.0 / self.speed)


async def paced(plan: ReplyPlan, clock: Clock, anchor_ms: float, parts_ms: list[float]) -> AsyncIterator[int]:
    """Yield each audio part's index when it is due: the first `plan.first_audio_ms` after
    `anchor_ms` (the end of the user's audio, or a tool result's arrival), the rest on the plan's
    schedule. An instant plan yields them all at once, as the fakes always did."""
    await clock.until(anchor_ms + plan.first_audio_ms)
    start = clock.ms
    for i, offset in enumerate(plan.schedule(parts_ms)):
        if offset > 0:
            await clock.until(start + offset)
        yield i
