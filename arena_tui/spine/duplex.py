"""Duplex turns on a timeline: what the bot did while the user spoke during its reply.

A turn may script user speech into the bot's reply (`benchmark.DuplexCue`): an interruption
(the bot should yield), a backchannel ("mm-hmm": it should talk on) or side speech (said to
someone else: it should not be answered). The engine plays each cue's WAV where the script
says and measures the rest from the audio it played, like every other figure: the cue's speech
(the same VAD as the user's turns, placed where it played) and the bot's speech intervals (the
bot speech detector, `speech.SpeechDetector`). Never what a provider reports.

The rules, per cue (onset: the start of its first speech interval, else of its WAV):
- the bot was speaking at the onset when a bot speech interval covers it; only then is there
  anything to yield, and `yielded` is None otherwise;
- yield latency: onset -> the end of that bot speech interval (where its audio stopped; the
  detector bridges pauses under 300 ms, so a stop is at least that much silence);
- yielded: that stop came within `YIELD_WINDOW_MS` of the onset. A reply that happens to end
  (or pause 300 ms or more) that soon after the cue reads as a yield too: a benchmark places its
  cues well inside its replies (docs/benchmarks.md);
- answered: the bot, having stopped for the cue (or not speaking at its onset), began speaking
  again after that and within `ANSWER_WINDOW_MS` of the cue's speech end, before the turn's next
  cue began (that speech is then the next cue's); a bot that talked on through it did not answer;
- agent interruptions (per turn): bot speech intervals that begin inside one of the user's
  speech intervals (the turn's own or a cue's) and overlap it by at least `MIN_OVERLAP_MS`;
- early start (per turn): the bot's reply (its first speech of the turn) began after the user
  began and before the user's last speech of the turn ended: by how much (a pause inside the
  user's turn counts: the user had not finished). A full-duplex model chooses when to answer, and
  some start while the user is still talking.

A full-duplex model's turn (`FULL_DUPLEX_TURN`): it answers when it chooses, so a turn's answer is
what it said and did in the turn's window, from the turn's audio start to the next turn's start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .benchmark import DuplexCue
from .events import DuplexOutcome, Interval
from .speech import MIN_OVERLAP_MS

#: a bot that stops later than this after the user's onset did not yield to it
YIELD_WINDOW_MS = 2000.0
#: the bot answering a cue: speaking again within this long after the cue's speech ended
ANSWER_WINDOW_MS = 5000.0

#: how a full-duplex model's turn is delimited (`runners/run/full_duplex.py`), as every surface states it
FULL_DUPLEX_TURN = ("the user's audio streams without a break and nothing is committed; a turn's answer is "
                    "what the model said and did from the turn's audio start until the next turn starts, and the next "
                    "turn starts once the model has gone quiet after its reply (or nothing came within the watchdog "
                    "window): the script's turns wait for their answers")


@dataclass(frozen=True)
class PlacedCue:
    """A cue as it played: its place in the turn's list, its WAV and its speech on the timeline."""

    index: int
    cue: DuplexCue
    played: Interval
    speech: list[Interval]

    @property
    def onset_ms(self) -> float:
        return self.speech[0].start_ms if self.speech else self.played.start_ms

    @property
    def speech_end_ms(self) -> float:
        return self.speech[-1].end_ms if self.speech else self.played.end_ms


def cue_outcome(placed: PlacedCue, bot_speech: Sequence[Interval], next_onset_ms: float = math.inf) -> DuplexOutcome:
    """What the bot did about one cue that played (the rules in the module docstring);
    `next_onset_ms`: where the turn's next cue began."""
    onset = placed.onset_ms
    covering = next((b for b in bot_speech if b.start_ms <= onset < b.end_ms), None)
    speech = Interval(start_ms=onset, end_ms=placed.speech_end_ms)
    out: dict[str, Any] = {"index": placed.index, "kind": placed.cue.kind, "played": placed.played, "speech": speech}
    since, stopped = onset, True
    if covering is not None:
        latency = covering.end_ms - onset
        stopped = latency <= YIELD_WINDOW_MS
        since = covering.end_ms
        out.update(bot_speaking=True, bot_stop_ms=covering.end_ms, yielded=stopped,
                   yield_ms=latency if stopped else None)
    until = min(placed.speech_end_ms + ANSWER_WINDOW_MS, next_onset_ms)
    out["answered"] = stopped and any(since < b.start_ms <= until for b in bot_speech)
    return DuplexOutcome(**out)


def outcomes(cues: Sequence[DuplexCue], placed: Sequence[PlacedCue], bot_speech: Sequence[Interval]) -> list[DuplexOutcome]:
    """Every cue of a turn, in its order: measured where it played (`cue_outcome`), else `unplayed`."""
    by_index = {p.index: p for p in placed}
    onsets = sorted(p.onset_ms for p in placed)
    out = []
    for i, cue in enumerate(cues):
        p = by_index.get(i)
        if p is None:
            out.append(unplayed(i, cue))
            continue
        later = [t for t in onsets if t > p.onset_ms]
        out.append(cue_outcome(p, bot_speech, later[0] if later else math.inf))
    return out


def early_start(user_speech: Sequence[Interval], bot_speech: Sequence[Interval]) -> float | None:
    """How long before the user's last speech of the turn ended the bot's first speech began (ms),
    when it began after the user began; None: it began after the user finished (or there is none)."""
    if not user_speech or not bot_speech:
        return None
    first, end = bot_speech[0].start_ms, user_speech[-1].end_ms
    if user_speech[0].start_ms <= first < end:
        return end - first
    return None


def unplayed(index: int, cue: DuplexCue) -> DuplexOutcome:
    """A cue that never played (the reply never became audible, or the turn ended first)."""
    return DuplexOutcome(index=index, kind=cue.kind)


def agent_interruptions(user_speech: Sequence[Interval], bot_speech: Sequence[Interval],
                        min_ms: float = MIN_OVERLAP_MS) -> int:
    """Bot speech intervals that began while the user was speaking (overlapping by `min_ms`)."""
    return sum(
        1 for b in bot_speech
        if any(u.start_ms < b.start_ms and min(u.end_ms, b.end_ms) - b.start_ms >= min_ms - 1e-9 for u in user_speech)
    )
