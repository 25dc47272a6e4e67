"""A run's voice-to-voice over its turns, as the run screen's chart and report.html draw it.

One point per turn with a voice-to-voice on our own timeline (`arena_tui.timing`): whether it
counts in the run's latency figures (`latency_counts`: the model's turn, its input sent on time;
one that does not is drawn hollow, never left out silently), and whether it was a tool turn (the
model made a call: the round trip is what makes it longer). A barge-in (the bot spoke before the
user had finished) is no latency: it is no point, and `barge_ins` names those turns.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from arena_tui.spine.events import TurnResult
from ..timing import barge_in_ms, latency_counts, response_latency


@dataclass(frozen=True)
class TurnLatency:
    turn: int
    ms: float  # voice-to-voice, ms on the run's timeline (a sped-up run's: not comparable, said where drawn)
    tool: bool  # the model made at least one call on the turn
    counted: bool  # in the run's latency figures (False: untrusted, or not the model's turn)


def turn_latencies(results: Iterable[TurnResult], untrusted: Collection[int] = ()) -> list[TurnLatency]:
    """The benchmark turns' voice-to-voice points, in turn order (the greeting is no turn)."""
    out = []
    for r in sorted(results, key=lambda r: r.turn_index):
        ms = response_latency(r.latencies.voice_to_voice_ms)
        if r.turn_index >= 0 and ms is not None:
            out.append(TurnLatency(r.turn_index, ms, bool(r.tool_calls), latency_counts(r.status, r.turn_index in untrusted)))
    return out


def barge_ins(results: Iterable[TurnResult]) -> list[int]:
    """The turns whose reply began before the user had finished (no latency: no point)."""
    return sorted(r.turn_index for r in results if r.turn_index >= 0 and barge_in_ms(r.latencies) is not None)
