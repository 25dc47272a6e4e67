"""A session hearing a benchmark's duplex cues: user speech scripted into the bot's reply.

A cue is told apart by its own fingerprint (`TurnBook.cue_index`, the first 50 ms after its
onset), never taken for a turn. What the simulator does about it is the run's behaviour
(`runners/fakes/duplex.py`, set by the `yield=`, `backchannel=`, `side_speech=` faults): a cue
it reacts to is a user turn that stops the reply `yield_after_ms` after the speech's onset (at
the earliest when the VAD confirms speech) — `input_audio_buffer.speech_started` goes out then,
which is what makes a Pipecat client stop the bot's audio, and the reply still streaming is
cancelled — and, once the speech ends, is answered with the turn's golden answer again; a cue it
ignores is not heard at all (no event, no reply), and the reply plays on.

What it did is kept per cue (`DuplexTruth`, `SimulatorServer.duplex_truth`): where the cue's
WAV began in the input, when the reply was stopped (audio time and this machine's monotonic
clock) and how much of the reply had already gone quiet before that, so the engine's yield
latency can be checked against it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np

from arena_tui.spine.events import TurnResult

from .clock import AudioClock
from .conversation import Conversation
from .fingerprint import MATCH_SLACK_MS, RATE, Match, StreamScanner
from .records import DuplexTruth, TurnTruth
from .replies import Replies
from .turns import TurnBook


class CueSegment(Protocol):
    """The session's stretch of speech (`connection._Segment`) as a cue uses it."""

    start_ms: float
    end_ms: float | None
    stopped_ms: float | None
    item_id: str
    duplex: DuplexTruth | None
    yielded: bool


class CueSession(Protocol):
    """What a cue uses of its session (`connection.Connection`)."""

    n: int
    clock: AudioClock
    turns: TurnBook
    replies: Replies
    conversation: Conversation

    async def send(self, type_: str, **fields: object) -> None: ...
    async def commit_user_item(self, item_id: str) -> None: ...


class CueHearing:
    """One session's cues: recognised in the input, and stopped for (or not) as the behaviour says."""

    def __init__(self, session: CueSession) -> None:
        self.s = session
        self.scanner = StreamScanner(session.turns.cue_index)
        self.matches: list[Match] = []
        self._tasks: set[asyncio.Future[Any]] = set()

    def feed(self, pcm: np.ndarray) -> None:
        """The input's audio, before the VAD hears it (a match is in by the time speech is confirmed)."""
        if self.s.turns.cues:
            self.matches.extend(self.scanner.feed(pcm))

    def undecided(self, speech_start_ms: float) -> bool:
        """An onset near this speech start may still turn out to be a cue (its audio is being collected)."""
        since = max(0, round((speech_start_ms - MATCH_SLACK_MS) * RATE / 1000.0))
        return bool(self.s.turns.cues) and self.scanner.collecting(since)

    def heard(self, speech_start_ms: float) -> DuplexTruth | None:
        """The cue whose WAV this speech is (its first onset within reach of the start), or None."""
        found = [m for m in self.matches if m.first and speech_start_ms - MATCH_SLACK_MS <= m.onset_ms <= self.s.clock.ms]
        if not found:
            return None
        m = min(found, key=lambda m: abs(m.onset_ms - speech_start_ms))
        self.matches.remove(m)
        turn, cue, kind = self.s.turns.cues[m.turn_index]
        behaviour = self.s.turns.faults.duplex_for(turn, max(1, self.s.turns.attempts(turn)))
        rec = DuplexTruth(turn_index=turn, cue=cue, kind=kind, session=self.s.n, clip_start_ms=m.onset_ms - m.offset_ms,
                          speech_start_ms=speech_start_ms, reply_audible=self.s.replies.audible_at(speech_start_ms),
                          reacted=behaviour.reacts(kind), yield_after_ms=behaviour.yield_after_ms)
        self.s.turns.duplex_log.append(rec)
        return rec

    def started(self, seg: CueSegment) -> None:
        """A cue's speech began: stop the reply when the behaviour says (nothing, if it ignores it)."""
        rec = seg.duplex
        assert rec is not None
        if not rec.reacted:
            return
        due = seg.start_ms + (rec.yield_after_ms or 0.0)
        task = asyncio.ensure_future(self._yield(seg, due))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _yield(self, seg: CueSegment, due_ms: float) -> None:
        await self.s.clock.until(due_ms)
        rec = seg.duplex
        assert rec is not None
        now, mono = self.s.clock.ms, time.monotonic()
        await self.s.send("input_audio_buffer.speech_started", audio_start_ms=int(round(seg.start_ms)), item_id=seg.item_id)
        quiet = self.s.replies.stop_playing(now)
        if quiet is not None:  # a reply was playing: this is where it stopped
            rec.yield_ms, rec.yield_mono, rec.quiet_before_yield_ms = now, mono, quiet
        await self.s.replies.interrupt("turn_detected")
        seg.yielded = True
        if seg.end_ms is not None:  # the speech ended before the reply was stopped
            await self._answer(seg)

    async def stopped(self, seg: CueSegment) -> None:
        """A cue's speech ended: a cue reacted to is answered (once the reply has been stopped for it)."""
        rec = seg.duplex
        assert rec is not None
        rec.speech_end_ms = seg.end_ms
        if rec.reacted and seg.yielded:
            await self._answer(seg)

    async def _answer(self, seg: CueSegment) -> None:
        rec = seg.duplex
        assert rec is not None and seg.stopped_ms is not None
        await self.s.send("input_audio_buffer.speech_stopped", audio_end_ms=int(round(seg.stopped_ms)),
                          item_id=seg.item_id)
        await self.s.commit_user_item(seg.item_id)
        text = self.s.turns.benchmark.turn(rec.turn_index).duplex[rec.cue].text
        self.s.conversation.items[seg.item_id]["content"][0]["transcript"] = text
        await self.s.send("conversation.item.input_audio_transcription.completed", item_id=seg.item_id,
                          content_index=0, transcript=text,
                          usage={"type": "tokens", "total_tokens": len(text) // 4 + 1, "input_tokens": 1,
                                 "output_tokens": len(text) // 4})
        truth = TurnTruth(turn_index=rec.turn_index, session=self.s.n, identified_by="duplex",
                          notes=[f"the answer to duplex[{rec.cue}] ({rec.kind})"])
        self.s.replies.reanswer(truth, max(seg.stopped_ms, self.s.clock.ms))
        rec.answered = True

    def stop(self) -> None:
        for t in list(self._tasks):
            t.cancel()


def yield_errors(results: Iterable[TurnResult], origins: dict[int, float], truth: Iterable[DuplexTruth],
                 t0_mono: float, speed: float) -> list[tuple[DuplexTruth, float, float]]:
    """(truth, measured, what the simulator did) yield latency in ms for each cue the simulator
    stopped a reply for and the run measured a yield on. `origins`: each session's audio time 0 on
    the run timeline (its `session_opened`). The cue's onset is where its WAV began in the
    simulator's input (fingerprint) placed on the timeline, plus the same clip's speech onset the
    run measured; the stop is `DuplexTruth.stop_on`."""
    by_turn = {r.turn_index: r for r in results}
    out = []
    for t in truth:
        r = by_turn.get(t.turn_index)
        stop = t.stop_on(t0_mono, speed)
        if r is None or stop is None or not r.duplex or t.cue >= len(r.duplex) or t.session not in origins:
            continue
        o = r.duplex[t.cue]
        if o.yield_ms is None or o.played is None or o.speech is None:
            continue
        onset = origins[t.session] + t.clip_start_ms + (o.speech.start_ms - o.played.start_ms)
        out.append((t, o.yield_ms, stop - onset))
    return out
