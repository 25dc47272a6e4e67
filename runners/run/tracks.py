"""What the audio run hears, on its own clock: the user and bot tracks of every attempt.

Split from the turn loop (`audio.py`) where its inputs change: the loop decides when a turn
is over from the provider's frames, its tools and its watchdog; this only follows the audio as
the paced transports play it (called at PLAYED time) and reports what it shows: levels, the
user WAV's speech boundaries placed where it played, the bot's speech detected on its audio,
overlaps and barge-ins as soon as they are certain, the per-attempt PCM and the stereo
conversation track. It never looks at frames, tools or sessions, so the rule "latency, overlap
and interruption come from our own timeline" lives in one place. What is played (each clip under
the run's condition, and where its speech is) is `clips.Clips`'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from arena_tui.spine.benchmark import DuplexCue, Turn
from arena_tui.spine.duplex import PlacedCue, agent_interruptions, early_start, outcomes
from arena_tui.spine.events import (
    AudioChunk,
    DuplexOutcome,
    DuplexPlayed,
    Interruption,
    Interval,
    Level,
    Overlap,
    SpeechBoundary,
)
from arena_tui.spine.settings import RunSettings

from ..transports import audible
from arena_tui.spine.speech import SpeechDetector, TurnMeasures, measure_turn
from ..timeline.levels import LevelMeter
from ..timeline.overlaps import LiveOverlaps
from ..timeline.recorder import ConversationRecorder

Emit = Callable[..., None]  # emit(EventClass, **fields): the run stamps it (run, turn, now) and publishes it


@dataclass
class Heard:
    """What one attempt's two tracks carried (the turn loop's `Attempt.heard`)."""

    user_speech_rel: list[Interval] = field(default_factory=list)  # VAD intervals within the WAV
    live_overlaps: LiveOverlaps | None = None  # None: no overlaps reported (a handshake)
    # VAD boundaries (time, kind, whose: "user" the turn's WAV, "duplex" a cue's), placed when each starts
    user_bounds: list[tuple[float, str, str]] | None = None
    user_pcm: bytearray = field(default_factory=bytearray)
    user_start_ms: float | None = None  # where `user_pcm` begins (cues later in the turn are padded to their place)
    cues: list[PlacedCue] = field(default_factory=list)  # the turn's duplex cues that started playing
    bot_pcm: bytearray = field(default_factory=bytearray)
    first_bot_ms: float | None = None
    last_bot_ms: float | None = None
    bot_speech: list[Interval] = field(default_factory=list)
    bot_speech_open: float | None = None
    interrupted: bool = False  # an overlap, or bot audio cut before it played


class Tracks:
    """The run's audio on its timeline: meters, the bot's speech detector, the conversation recorder."""

    def __init__(self, config: RunSettings, emit: Emit, start_ms: float) -> None:
        self.config, self.emit = config, emit
        self.rate = config.sample_rate
        self.recorder = ConversationRecorder(self.rate, start_ms=start_ms)
        # sessions side by side (rehydrated turns at once) make no one conversation track
        self.conversation = not (config.mode == "rehydrated" and config.parallel > 1)
        self.user_meter = LevelMeter("user", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_meter = LevelMeter("bot", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_detector = SpeechDetector(self.rate)

    # -- the transports' callbacks (at PLAYED / scheduled time)

    def user_chunk(self, h: Heard | None, pcm: bytes, t_ms: float) -> None:
        for t, rms, peak in self.user_meter.feed(pcm, t_ms):
            self.emit(Level, t_ms=t, source="user", rms_dbfs=rms, peak_dbfs=peak, block_ms=self.config.level_block_ms)
        self.recorder.add("user", pcm, t_ms)
        if h is not None:
            if h.user_start_ms is None:
                h.user_start_ms = t_ms
            gap = round((t_ms - h.user_start_ms) * self.rate / 1000.0) * 2 - len(h.user_pcm)
            if gap > 0:  # a cue later in the turn: the turn's user track stays true to time
                h.user_pcm.extend(bytes(gap))
            h.user_pcm.extend(pcm)
            if h.user_bounds is None:  # the clip starts here: place its speech on the timeline
                h.user_bounds = _bounds(h.user_speech_rel, t_ms, "user")
            self._emit_user_bounds(h, t_ms + len(pcm) / 2 / self.rate * 1000.0)

    def cue_started(self, h: Heard | None, index: int, cue: DuplexCue, speech_rel: list[Interval], dur_ms: float,
                    start_ms: float) -> None:
        """A duplex cue's WAV starts at `start_ms` (its first chunk is about to go out): say so, and
        place its speech on the timeline like the turn's own."""
        self.emit(DuplexPlayed, t_ms=start_ms, index=index, cue=cue.kind, text=cue.text, at_ms=cue.at_ms)
        if h is None:
            return
        speech = [Interval(start_ms=start_ms + i.start_ms, end_ms=start_ms + i.end_ms) for i in speech_rel]
        h.cues.append(PlacedCue(index=index, cue=cue, played=Interval(start_ms=start_ms, end_ms=start_ms + dur_ms),
                                speech=speech))
        h.user_bounds = sorted((h.user_bounds or []) + _bounds(speech_rel, start_ms, "duplex"))

    def bot_audio(self, h: Heard | None, pcm: bytes, t_ms: float, stream: bool = False) -> bool:
        """Bot audio played at `t_ms`. `stream`: the provider streams its output continuously,
        silence included (a full-duplex model): only audible audio is the bot's reply (its first
        and last frame), silence before it is no part of the attempt's audio. Whether it counted."""
        for t, rms, peak in self.bot_meter.feed(pcm, t_ms):
            self.emit(Level, t_ms=t, source="bot", rms_dbfs=rms, peak_dbfs=peak, block_ms=self.config.level_block_ms)
        self.recorder.add("bot", pcm, t_ms)
        dur = len(pcm) / 2 / self.rate * 1000.0
        for kind, t in self.bot_detector.feed(pcm, t_ms):
            self._bot_boundary(h, kind, t)
        heard = not stream or audible(pcm)
        if h is not None and (heard or h.first_bot_ms is not None):
            if h.first_bot_ms is None:
                h.first_bot_ms = t_ms
            if heard:
                h.last_bot_ms = t_ms + dur
            h.bot_pcm.extend(pcm)
        return heard

    def truncated(self, h: Heard | None, t_ms: float, pending_ms: float) -> None:
        """The speaker stopped at `t_ms` (an interruption): bot audio handed to it for later was
        never heard, so it leaves the bot's track, its speech and the recording here."""
        self.emit(Interruption, t_ms=t_ms, cause="bot_truncated", detail=f"{pending_ms:.0f} ms of bot audio not played")
        for kind, t in self.bot_detector.cut(t_ms):
            self._bot_boundary(h, kind, t)
        self.recorder.silence("bot", t_ms)
        if h is not None:
            h.interrupted = True
            if h.last_bot_ms is not None and h.last_bot_ms > t_ms:
                unheard = round((h.last_bot_ms - t_ms) * self.rate / 1000.0) * 2
                del h.bot_pcm[max(0, len(h.bot_pcm) - unheard):]
                h.last_bot_ms = max(t_ms, h.first_bot_ms or t_ms)

    # -- the turn loop's ticks

    def advance(self, h: Heard | None, now: float) -> None:
        """Close a bot speech interval once its silence has lasted (call while no output plays)."""
        for kind, t in self.bot_detector.advance(now):
            self._bot_boundary(h, kind, t)

    def close_bot_speech(self, h: Heard, now: float) -> None:
        for kind, t in self.bot_detector.flush(now):
            self._bot_boundary(h, kind, t)
        if h.bot_speech_open is not None:
            h.bot_speech.append(Interval(start_ms=h.bot_speech_open, end_ms=now))
            h.bot_speech_open = None

    def measure(self, placed: Interval, h: Heard, provider_ttfb_ms: float | None, now: float) -> tuple[list[Interval], TurnMeasures]:
        """The finished turn's user speech on the timeline (its WAV's, placed where it played) and its
        latencies and overlap; then the rest of the live report (every user boundary, overlaps still
        open: the same intervals)."""
        off = placed.start_ms
        user_speech = [Interval(start_ms=i.start_ms + off, end_ms=i.end_ms + off) for i in h.user_speech_rel]
        # the turn's own speech: a duplex cue the user says over the reply is the user's overlap, not
        # the bot's (turn_taking is judged on this); it is reported live and in `duplex`
        measured = measure_turn(placed, user_speech, h.first_bot_ms, h.bot_speech, provider_ttfb_ms)
        self._emit_user_bounds(h, float("inf"))
        self._overlaps(h, "", None, now)
        return user_speech, measured

    @staticmethod
    def duplex(turn: Turn, user_speech: list[Interval], h: Heard) -> tuple[list[DuplexOutcome] | None, int, float | None]:
        """The turn's cues as measured (None: it has none), how often the bot began speaking
        while the user spoke, and how long before the user finished it began its reply (None: it
        did not) (`arena_tui.spine.duplex`)."""
        measured = outcomes(turn.duplex, h.cues, h.bot_speech) if turn.duplex else None
        cue_speech = [i for c in h.cues for i in c.speech]
        return measured, agent_interruptions(user_speech + cue_speech, h.bot_speech), early_start(user_speech, h.bot_speech)

    # -- recorded audio

    def publish_audio(self, turn_index: int, h: Heard, user_start_ms: float, now: float) -> None:
        if h.user_pcm:
            self.emit(AudioChunk, track="user", sample_rate=self.rate, start_ms=user_start_ms, pcm=bytes(h.user_pcm))
        if h.bot_pcm:
            self.emit(AudioChunk, track="bot", sample_rate=self.rate, start_ms=h.first_bot_ms or 0.0, pcm=bytes(h.bot_pcm))
        self.flush_conversation(turn_index, now)

    def flush_conversation(self, turn_index: int | None, now: float) -> None:
        """Hand the conversation track recorded so far to the store (at every turn's end: it is
        never held for the whole run), one slice per stretch of audio (`ConversationRecorder`)."""
        for start, stereo in self.recorder.take_slices(now):
            if self.conversation:
                self.emit(AudioChunk, turn_index=turn_index, track="conversation", sample_rate=self.rate, channels=2,
                          start_ms=start, pcm=stereo)

    # -- speech boundaries and overlaps

    def _emit_user_bounds(self, h: Heard, until_ms: float) -> None:
        while h.user_bounds and h.user_bounds[0][0] <= until_ms:
            t, kind, who = h.user_bounds.pop(0)
            self.emit(SpeechBoundary, t_ms=t, kind=kind, origin="vad")
            self._overlaps(h, who, kind == "user_speech_started", t)

    def _bot_boundary(self, h: Heard | None, kind: str, t: float) -> None:
        if kind == "start":
            self.emit(SpeechBoundary, t_ms=t, kind="bot_speech_started")
            if h is not None:
                h.bot_speech_open = t
        else:
            self.emit(SpeechBoundary, t_ms=t, kind="bot_speech_stopped")
            if h is not None and h.bot_speech_open is not None:
                h.bot_speech.append(Interval(start_ms=h.bot_speech_open, end_ms=t))
                h.bot_speech_open = None
        self._overlaps(h, "bot", kind == "start", t)

    def _overlaps(self, h: Heard | None, who: str, started: bool | None, t: float) -> None:
        """Feed a speech boundary to the live overlap tracker and report what became certain
        (started=None closes both sides: the turn is over)."""
        if h is None or h.live_overlaps is None:
            return
        found = h.live_overlaps.close(t) if started is None else h.live_overlaps.boundary(who, started, t)
        for ov, cause in found:
            self.emit(Interruption, t_ms=ov.start_ms, cause=cause, detail=f"{ov.duration_ms:.0f} ms overlap")
            self.emit(Overlap, t_ms=ov.end_ms, start_ms=ov.start_ms, end_ms=ov.end_ms)
            h.interrupted = True


def _bounds(speech_rel: list[Interval], start_ms: float, who: str) -> list[tuple[float, str, str]]:
    """A clip's speech boundaries on the timeline, the clip starting at `start_ms`."""
    return sorted([(start_ms + i.start_ms, "user_speech_started", who) for i in speech_rel]
                  + [(start_ms + i.end_ms, "user_speech_stopped", who) for i in speech_rel])
