"""A turn's duplex cues played into the session: user speech scripted into the bot's reply.

Each cue (`Turn.duplex`) is due `at_ms` after the reply's first audible speech, as our own
timeline hears the played bot audio (the bot speech detector, `tracks.Tracks`); it then goes
into the same paced input as the turn's WAV, in real time, to the sample (`PacedInput.play`
with `at_ms`), so the provider's VAD and barge-in meet it as they would a user talking over the
bot. Where each really started is told back (`Tracks.cue_started`), and what the bot did about
it is measured from the audio when the turn ends (`Tracks.duplex`). While a cue is due or
playing the turn is not over: the user is still talking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from arena_tui.spine.benchmark import Turn
from arena_tui.spine.events import Interval

from ..transports import PacedInput
from .clips import Clips
from .tracks import Heard, Tracks


class CuePlayer:
    """One attempt's cues: queued once the reply is audible, then followed until they have played."""

    def __init__(self, turn: Turn, clips: Clips, tracks: Tracks, heard: Heard, inp: PacedInput,
                 marks: Callable[[list[Interval], float], list[Any]]) -> None:
        """`clips`: the cues' audio; `marks`: the user-speaking brackets a clip gets (`AudioRun.turn_marks`: client-side turns)."""
        self.turn, self.clips, self.tracks, self.heard, self.input, self.marks = turn, clips, tracks, heard, inp, marks
        self.queued: list[asyncio.Future[Interval]] = []

    def tick(self) -> None:
        """Queue every cue as soon as the reply's first speech onset is known."""
        if self.queued or not self.turn.duplex:
            return
        h = self.heard
        onset = h.bot_speech[0].start_ms if h.bot_speech else h.bot_speech_open
        if onset is None:
            return
        for i, cue in enumerate(self.turn.duplex):
            pcm = self.clips.cue_audio(self.turn, i)
            speech = self.clips.cue_speech(self.turn, i)  # from the clean cue, as the turn's
            dur = len(pcm) / 2 / self.clips.rate * 1000.0

            def started(start_ms: float, i: int = i, speech: list = speech, dur: float = dur) -> None:
                self.tracks.cue_started(self.heard, i, self.turn.duplex[i], speech, dur, start_ms)

            self.queued.append(self.input.play(pcm, self.marks(speech, dur), at_ms=onset + cue.at_ms, on_start=started))

    def busy(self) -> bool:
        """A cue is queued and has not finished playing: the user is still to speak, or speaking."""
        return any(not f.done() for f in self.queued)

    def drop(self) -> None:
        """The attempt is over: cues not begun yet never will be (the next turn's WAV must not wait behind them)."""
        for f in self.queued:
            self.input.discard(f)

    def end_ms(self) -> float | None:
        """Where the last cue that played ended (None: none played)."""
        ends = [f.result().end_ms for f in self.queued if f.done() and not f.cancelled()]
        return max(ends, default=None)
