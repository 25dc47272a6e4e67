"""What a time or latency figure may be read as; the one home of these rules for every view.

- The run timeline (every `t_ms`) is audio time: at `--speed` s it runs s times faster than the
  wall clock, so wall ms = t_ms / s (`arena_tui.spine.times.wall_ms`, low enough for every layer).
  Durations shown as such are wall clock; audio time is shown only labelled "audio".
- Latency measured at a speed other than 1 is not comparable (a provider's compute does not
  speed up, so it is inflated s times); a run whose speed was not recorded is not either.
- A negative voice-to-voice (the bot became audible before the user finished) is not a latency:
  it is a barge-in, shown with its overlap (how long before the user's end the bot came in) and
  left out of every latency statistic. The same holds for any figure measured from the user's end.
- What a latency statistic counts (`latency_counts`, `counted_latencies`; every median,
  percentile and split on every surface takes its turns from here): a turn the model played
  (`verdicts.counts`: never one not played, stopped, lost to our machine or an infrastructure
  failure) whose input went out on time. A turn whose user audio went out late
  (`runners/pace.py`: input chunks 100 ms late or more, the engine's `pacing` notice) keeps its
  verdict, but its latencies are untrusted: marked where shown (`UNTRUSTED_MARK`, "untrusted")
  and left out of every statistic, while the run's other turns still count (`UntrustedTurns`).
  A figure that compares runs takes only runs at speed 1 (`speed_exclusion`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from arena_tui.spine.events import PACE_LOST, Latencies, TurnResult
from arena_tui.spine.times import wall_ms

from .verdicts import counts


def comparable(speed: float | None) -> bool:
    """Whether latency from a run at this speed may be compared with other runs'."""
    return speed == 1.0


# The not-comparable wording, for every surface: a run's own figures carry `speed_note` (the
# turn table's `*`, the run screen, the headless summary, the exports); figures that compare runs
# (leaderboard, reports) leave such a run out, saying why with `speed_exclusion`.
NOT_COMPARABLE = "not comparable"
SPEED_UNKNOWN = "speed not recorded"


def speed_text(speed: float | None) -> str:
    """A run's speed as every surface writes it: `20×`, `1×`, or `speed not recorded`."""
    return SPEED_UNKNOWN if speed is None else f"{speed:g}×"


def speed_note(speed: float | None) -> str | None:
    """Why a run's latency is not comparable (None when it is): e.g. `20× — not comparable`."""
    if comparable(speed):
        return None
    return f"{speed_text(speed)} — {NOT_COMPARABLE}"


def latency_caveat(speed: float | None) -> str | None:
    """What a table of a run's latencies says over them: `latency at 20× — not comparable`."""
    note = speed_note(speed)
    return f"latency at {note}" if note else None


def speed_exclusion(speed: float | None) -> str | None:
    """Why figures that compare runs leave this run's latency out (None: it counts): `speed 20×`."""
    if comparable(speed):
        return None
    return SPEED_UNKNOWN if speed is None else f"speed {speed_text(speed)}"


def response_latency(ms: float | None) -> float | None:
    """A figure measured from the user's end, when it is a latency (None for a barge-in or unknown)."""
    return ms if ms is not None and ms >= 0 else None


def barge_in_ms(lat: Latencies) -> float | None:
    """How long before the user's end the bot became audible (None: no barge-in)."""
    v = lat.voice_to_voice_ms
    return -v if v is not None and v < 0 else None


def barge_in_text(overlap_ms: float) -> str:
    return f"barge-in, {overlap_ms / 1000:.1f} s overlap"


def latency_text(ms: float | None, speed: float | None = 1.0, *, unit: bool = True) -> str:
    """`1,948 ms`, `1,948 ms (20× — not comparable)`, `before the user finished`, or `–`."""
    if ms is None:
        return "–"
    if ms < 0:
        return "before the user finished"
    note = speed_note(speed)
    return f"{ms:,.0f}" + (" ms" if unit else "") + (f" ({note})" if note else "")


def v2v_text(lat: Latencies, speed: float | None = 1.0) -> str:
    """Voice-to-voice as it reads everywhere: a latency (labelled when not comparable) or a barge-in."""
    overlap = barge_in_ms(lat)
    if overlap is not None:
        return barge_in_text(overlap)
    return latency_text(lat.voice_to_voice_ms, speed)


def turn_durations(kept: Mapping[int, int], started: Iterable[tuple[int | None, float]], ended: Mapping[int, float],
                   speed: float | None) -> dict[int, int]:
    """turn -> wall-clock ms from its first `turn_started` (turn, t_ms) to its `turn_ended` t_ms.

    Event times are on the audio timeline, which runs `speed` times faster than the wall clock.
    The reference harness's `latency_ms` is this: a turn's wall-clock length from its first start to
    its end (not a response latency). A turn without a recorded start (an imported run) keeps the
    duration it was imported with (`kept`: `RecordedRun.turn_durations`).
    """
    out = dict(kept)
    t_start: dict[int, float] = {}
    for idx, t_ms in started:
        if idx is not None:
            t_start[idx] = min(t_ms, t_start.get(idx, t_ms))
    for idx, t0 in t_start.items():
        if idx in ended:
            out[idx] = round(wall_ms(ended[idx] - t0, speed))
    return out


# --- what a latency statistic counts ------------------------------------------------------------

UNTRUSTED = "untrusted: this machine sent the user's audio late"  # the words beside such a latency
UNTRUSTED_MARK = "!"  # after a latency that counts in no statistic (`1584!`)


def latency_counts(status: str, untrusted: bool = False) -> bool:
    """Whether a turn's latencies may enter a statistic: the model's turn, its input on time."""
    return counts(status) and not untrusted


def counted_latencies(results: Iterable[TurnResult], untrusted: Collection[int] = ()) -> list[TurnResult]:
    """The results whose latencies count (`latency_counts`), in the order given."""
    return [r for r in results if latency_counts(r.status, r.turn_index in untrusted)]


def v2v_values(results: Iterable[TurnResult], untrusted: Collection[int] = ()) -> list[float]:
    """Voice-to-voice of every turn that counts and has one (a barge-in is none): what a median takes."""
    return [v for r in counted_latencies(results, untrusted)
            if (v := response_latency(r.latencies.voice_to_voice_ms)) is not None]


class UntrustedTurns:
    """Which turns' latencies are untrusted, from the run's events in their recorded order: the
    engine's `pacing` notice (an `error` event, `where` = PACE_LOST) comes before the `turn_ended`
    of the take it concerns, so a later take of the turn (a resume playing it again) starts clean."""

    def __init__(self) -> None:
        self.turns: set[int] = set()
        self._pending: set[int] = set()

    def see(self, kind: str, turn: int | None, where: str | None = None) -> None:
        """One event, by its kind, turn and (for an error) where."""
        if turn is None:
            return
        if kind == "error" and where == PACE_LOST:
            self._pending.add(turn)
        elif kind == "turn_ended":
            if turn in self._pending:
                self.turns.add(turn)
            else:
                self.turns.discard(turn)
            self._pending.discard(turn)

    @classmethod
    def of(cls, events: Iterable[tuple[str, int | None, str | None]]) -> set[int]:
        """The untrusted turns of (kind, turn, where) in recorded order."""
        seen = cls()
        for kind, turn, where in events:
            seen.see(kind, turn, where)
        return seen.turns
