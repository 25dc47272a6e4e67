"""What we measure on our own monotonic timeline: levels, speech, latencies, overlap, the recording.

Every time here is ms on the run timeline (float) and every measurement comes from audio we
placed on it ourselves (the user WAV where it was played, bot frames where they were played),
never from a provider's own TTFB. PCM is 16-bit little-endian mono (bytes or int16 arrays)
at the caller's sample rate.

Thresholds, and why:
- Levels: RMS and peak per 50 ms block; silence clamps to -120 dBFS (`arena_tui.spine.audio`).
- Bot speech (streaming, `SpeechDetector`): 10 ms blocks; speech starts at the first block whose
  RMS is >= -45 dBFS once 60 ms in a row are; it stops at the end of the last loud block after
  300 ms below. -45 dBFS is well above TTS/codec noise floors (~-70) and below the quietest
  voiced speech (~-35); 60 ms ignores clicks; 300 ms bridges the gaps between words.
- User speech (offline, `speech_intervals`): Silero (Pipecat's bundled ONNX model) at 16 kHz,
  32 ms windows: speech starts at a window with p >= 0.5 and ends at the first window with
  p < 0.35 (hysteresis); bursts shorter than 90 ms are dropped; each interval is padded by
  30 ms. The energy fallback uses 10 ms blocks: start at >= T, stop below T - 6 dB, where
  T = max(-40 dBFS, noise floor + 12 dB) and the noise floor is the 10th percentile of the
  block levels. Then gaps shorter than `min_silence_ms` (default 300) are merged, so a pause
  inside a sentence does not split it; `raw_speech_intervals` gives the unmerged ones.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from arena_tui.spine.audio import SILENCE_DBFS, SILENCE_KEPT_MS, peak_dbfs, resample, rms_dbfs
from arena_tui.spine.events import AudioChunk, Interval, Latencies, Speaker

PcmLike = bytes | bytearray | memoryview | np.ndarray

# Bot speech (streaming) defaults
BOT_THRESHOLD_DBFS = -45.0
BOT_MIN_SPEECH_MS = 60.0
BOT_HANGOVER_MS = 300.0
DETECTOR_BLOCK_MS = 10.0

# Offline user speech defaults
MIN_SILENCE_MS = 300.0
SPEECH_PAD_MS = 30.0
SILERO_RATE = 16000
SILERO_WINDOW = 512  # samples at 16 kHz = 32 ms
SILERO_ON = 0.5
SILERO_OFF = 0.35
SILERO_MIN_SPEECH_MS = 90.0
# Reset the model's recurrent state during long non-speech, where it drifts and would
# under-report the speech that follows.
SILERO_RESET_AFTER_MS = 2000.0
SILERO_RESET_QUIET_WINDOWS = 5
SILERO_RESET_MAX_P = 0.1
ENERGY_THRESHOLD_DBFS = -40.0
ENERGY_FLOOR_MARGIN_DB = 12.0
ENERGY_HYSTERESIS_DB = 6.0
ENERGY_MIN_SPEECH_MS = 60.0
ENERGY_BLOCK_MS = 10.0

# Turn measures
MIN_OVERLAP_MS = 100.0

# Conversation tag (as the reference harness): a short tone in the bot channel, so the log
# time of "first bot audio after the user stopped" can be found in the recording.
TAG_FREQ_HZ = 2000.0
TAG_MS = 15.0
TAG_DBFS = -12.0  # peak amplitude


def as_int16(pcm: PcmLike) -> np.ndarray:
    """Mono PCM16 as a 1-D int16 array (no copy when possible)."""
    if isinstance(pcm, (bytes, bytearray, memoryview)):
        if len(pcm) % 2:
            raise ValueError(f"PCM16 needs an even number of bytes, got {len(pcm)}")
        return np.frombuffer(pcm, dtype="<i2")
    arr = np.asarray(pcm)
    if arr.dtype != np.int16:
        raise ValueError(f"PCM must be int16, got {arr.dtype}")
    return arr.reshape(-1)


def block_rms_dbfs(samples: np.ndarray, block: int) -> np.ndarray:
    """RMS dBFS of each complete `block`-sample block (vectorised `arena_tui.spine.audio.rms_dbfs`)."""
    n = len(samples) // block
    if n == 0:
        return np.empty(0)
    x = samples[: n * block].astype(np.float64).reshape(n, block) / 32768.0
    ms = np.mean(x * x, axis=1)
    with np.errstate(divide="ignore"):
        db = 10.0 * np.log10(ms)
    return np.maximum(np.nan_to_num(db, neginf=SILENCE_DBFS), SILENCE_DBFS)


class _Blocker:
    """Cuts a stream of chunks into fixed blocks with timeline times, carrying remainders.

    A chunk that starts later than the previous one ended leaves a gap: the incomplete
    remainder is completed with silence, and the gap is reported so callers can treat it
    as silence. A chunk that starts slightly early (jitter) is treated as contiguous.
    """

    def __init__(self, sample_rate: int, block_ms: float) -> None:
        self.rate = sample_rate
        self.block = max(1, round(sample_rate * block_ms / 1000.0))
        self.block_ms = self.block * 1000.0 / sample_rate
        self._pending = np.empty(0, dtype=np.int16)
        self._start_ms: float | None = None  # time of the first pending sample
        self._start_sample = 0  # samples since _start_ms was set, for exact block times

    @property
    def next_ms(self) -> float | None:
        """Where the next sample is expected on the timeline."""
        if self._start_ms is None:
            return None
        return self._start_ms + (self._start_sample + len(self._pending)) * 1000.0 / self.rate

    def feed(self, pcm: PcmLike, t_ms: float) -> list[tuple[float, np.ndarray | None]]:
        """[(block start ms, block samples)], in order; (t, None) means "silence until t"."""
        samples = as_int16(pcm)
        out: list[tuple[float, np.ndarray | None]] = []
        expected = self.next_ms
        if expected is None or t_ms > expected + 1000.0 / self.rate:
            if expected is not None:
                if len(self._pending):
                    pad = np.zeros(self.block - len(self._pending), dtype=np.int16)
                    out.append((self._block_time(0), np.concatenate([self._pending, pad])))
                out.append((t_ms, None))
            self._start_ms, self._start_sample = t_ms, 0
            self._pending = np.empty(0, dtype=np.int16)
        data = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        n = len(data) // self.block
        for i in range(n):
            out.append((self._block_time(i), data[i * self.block : (i + 1) * self.block]))
        self._start_sample += n * self.block
        self._pending = data[n * self.block :].copy()
        return out

    def _block_time(self, i: int) -> float:
        assert self._start_ms is not None
        return self._start_ms + (self._start_sample + i * self.block) * 1000.0 / self.rate

    def reset(self) -> None:
        self._pending = np.empty(0, dtype=np.int16)
        self._start_ms = None
        self._start_sample = 0


# ------------------------------------------------------------------------------------ levels


class LevelMeter:
    """RMS/peak per block of played audio, for the meters (one per side)."""

    def __init__(self, source: Speaker, block_ms: float = 50.0, sample_rate: int = 24000) -> None:
        self.source = source
        self._blocks = _Blocker(sample_rate, block_ms)
        self.block_ms = self._blocks.block_ms

    def feed(self, pcm: PcmLike, t_ms: float) -> list[tuple[float, float, float]]:
        """(block start ms, rms dBFS, peak dBFS) for every block completed by this chunk.

        A chunk that starts after a gap completes the previous partial block with silence.
        """
        blocks = self._blocks.feed(pcm, t_ms)
        return [(t, rms_dbfs(b), peak_dbfs(b)) for t, b in blocks if b is not None]

    def reset(self) -> None:
        self._blocks.reset()


# ------------------------------------------------------------------------- streaming speech


class SpeechDetector:
    """Energy VAD for bot audio as it is played: start/stop on the timeline, to the 10 ms block.

    `feed` returns ("start", onset) once `min_speech_ms` of loud blocks confirm speech (the
    time is the first loud block's start, not the confirmation time), and ("stop", end) once
    `hangover_ms` of quiet follow (the time is the end of the last loud block). Gaps between
    fed chunks count as silence. `advance(t_ms)` says "nothing was played until t_ms" (bot
    frames simply stopped); `flush(t_ms)` ends the stream.
    """

    def __init__(
        self,
        sample_rate: int,
        threshold_dbfs: float = BOT_THRESHOLD_DBFS,
        min_speech_ms: float = BOT_MIN_SPEECH_MS,
        hangover_ms: float = BOT_HANGOVER_MS,
        block_ms: float = DETECTOR_BLOCK_MS,
    ) -> None:
        self.threshold_dbfs = threshold_dbfs
        self.min_speech_ms = min_speech_ms
        self.hangover_ms = hangover_ms
        self._blocks = _Blocker(sample_rate, block_ms)
        self.speaking = False
        self._candidate: float | None = None  # onset of an unconfirmed loud run
        self._loud_end: float | None = None  # end of the last loud block
        self._onset: float | None = None
        self.intervals: list[Interval] = []  # closed speech intervals so far

    def feed(self, pcm: PcmLike, t_ms: float) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        for t, block in self._blocks.feed(pcm, t_ms):
            if block is None:
                self._quiet_until(t, out)  # nothing was played before this chunk
            else:
                self._block(t, self._blocks.block_ms, rms_dbfs(block) >= self.threshold_dbfs, out)
        return out

    def _block(self, t: float, dur: float, loud: bool, out: list[tuple[str, float]]) -> None:
        end = t + dur
        if loud:
            if self._candidate is None and not self.speaking:
                self._candidate = t
            self._loud_end = end
            if not self.speaking and self._candidate is not None and end - self._candidate >= self.min_speech_ms - 1e-6:
                self.speaking = True
                self._onset = self._candidate
                self._candidate = None
                out.append(("start", self._onset))
        else:
            self._candidate = None
            self._quiet_until(end, out)

    def _quiet_until(self, t_ms: float, out: list[tuple[str, float]]) -> None:
        if not self.speaking:
            self._candidate = None
            return
        assert self._loud_end is not None and self._onset is not None
        if t_ms - self._loud_end >= self.hangover_ms - 1e-6:
            self._close(out)

    def _close(self, out: list[tuple[str, float]]) -> None:
        assert self._loud_end is not None and self._onset is not None
        out.append(("stop", self._loud_end))
        self.intervals.append(Interval(start_ms=self._onset, end_ms=self._loud_end))
        self.speaking = False
        self._onset = None
        self._candidate = None

    def advance(self, t_ms: float) -> list[tuple[str, float]]:
        """Nothing was played until `t_ms`: a stop is reported once the hangover has passed."""
        out: list[tuple[str, float]] = []
        nxt = self._blocks.next_ms
        if nxt is None or t_ms <= nxt:
            return out
        self._quiet_until(t_ms, out)
        return out

    def flush(self, t_ms: float) -> list[tuple[str, float]]:
        """End of stream at `t_ms`: close any speech at its last loud block (never after `t_ms`)."""
        out: list[tuple[str, float]] = []
        if self.speaking:
            assert self._loud_end is not None and self._onset is not None
            self._loud_end = max(self._onset, min(self._loud_end, t_ms))
            self._close(out)
        self._candidate = None
        self._blocks.reset()
        return out


# --------------------------------------------------------------------- offline speech (WAV)


def merge_intervals(intervals: Sequence[Interval], min_gap_ms: float) -> list[Interval]:
    """Sort, then join intervals separated by less than `min_gap_ms` (overlaps always join)."""
    merged: list[Interval] = []
    for iv in sorted(intervals, key=lambda i: i.start_ms):
        if merged and iv.start_ms - merged[-1].end_ms < min_gap_ms:
            last = merged[-1]
            merged[-1] = Interval(start_ms=last.start_ms, end_ms=max(last.end_ms, iv.end_ms))
        else:
            merged.append(iv)
    return merged


def _runs(active: Sequence[bool]) -> list[tuple[int, int]]:
    """[start, end) index ranges of consecutive True values."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, a in enumerate(active):
        if a and start is None:
            start = i
        elif not a and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(active)))
    return runs


def _hysteresis(values: np.ndarray, on: float, off: float) -> list[bool]:
    active, state = [], False
    for v in values:
        state = v >= on if not state else v >= off
        active.append(state)
    return active


def _to_intervals(
    runs: list[tuple[int, int]], step_ms: float, total_ms: float, min_ms: float, pad_ms: float, offset_ms: float
) -> list[Interval]:
    out: list[Interval] = []
    for a, b in runs:
        start, end = a * step_ms, min(b * step_ms, total_ms)
        if end - start < min_ms:
            continue
        start, end = max(0.0, start - pad_ms), min(total_ms, end + pad_ms)
        if out and start < out[-1].end_ms - offset_ms:  # padding made them touch: keep disjoint
            start = out[-1].end_ms - offset_ms
        out.append(Interval(start_ms=offset_ms + start, end_ms=offset_ms + end))
    return out


@functools.cache
def _silero_model():  # loaded once per process (~0.3 s); calls are serialised by _SILERO_LOCK
    from importlib import resources  # deferred: only the Silero VAD reads its packaged model

    from pipecat.audio.vad.silero import SileroOnnxModel  # deferred: Silero VAD (onnxruntime) loads only when it is chosen

    return SileroOnnxModel(str(resources.files("pipecat.audio.vad.data").joinpath("silero_vad.onnx")))


_SILERO_LOCK = threading.Lock()


def silero_probabilities(pcm: PcmLike, sample_rate: int) -> tuple[np.ndarray, float]:
    """Speech probability per 32 ms window (16 kHz), and the window length in ms."""
    x = as_int16(pcm)
    if sample_rate != SILERO_RATE:
        x = resample(x, sample_rate, SILERO_RATE)
    f = x.astype(np.float32) / 32768.0
    n = len(f) // SILERO_WINDOW
    probs = np.zeros(n)
    window_ms = SILERO_WINDOW * 1000.0 / SILERO_RATE
    reset_every = math.ceil(SILERO_RESET_AFTER_MS / window_ms)
    with _SILERO_LOCK:
        model = _silero_model()
        model.reset_states()
        since_reset, quiet = 0, 0
        for i in range(n):
            p = float(np.asarray(model(f[i * SILERO_WINDOW : (i + 1) * SILERO_WINDOW], SILERO_RATE)).reshape(-1)[0])
            probs[i] = p
            since_reset += 1
            quiet = quiet + 1 if p < SILERO_RESET_MAX_P else 0
            if since_reset >= reset_every and quiet >= SILERO_RESET_QUIET_WINDOWS:
                model.reset_states()
                since_reset = 0
    return probs, window_ms


def raw_speech_intervals(
    pcm: PcmLike,
    sample_rate: int,
    offset_ms: float = 0.0,
    method: Literal["silero", "energy"] = "silero",
) -> list[Interval]:
    """Speech in a WAV before merging pauses; times are `offset_ms` + position in the WAV."""
    x = as_int16(pcm)
    total_ms = len(x) * 1000.0 / sample_rate
    if method == "silero":
        probs, step = silero_probabilities(x, sample_rate)
        runs = _runs(_hysteresis(probs, SILERO_ON, SILERO_OFF))
        return _to_intervals(runs, step, total_ms, SILERO_MIN_SPEECH_MS, SPEECH_PAD_MS, offset_ms)
    if method == "energy":
        block = max(1, round(sample_rate * ENERGY_BLOCK_MS / 1000.0))
        levels = block_rms_dbfs(x, block)
        if len(levels) == 0:
            return []
        floor = float(np.percentile(levels, 10))
        on = max(ENERGY_THRESHOLD_DBFS, floor + ENERGY_FLOOR_MARGIN_DB)
        runs = _runs(_hysteresis(levels, on, on - ENERGY_HYSTERESIS_DB))
        step = block * 1000.0 / sample_rate
        return _to_intervals(runs, step, total_ms, ENERGY_MIN_SPEECH_MS, SPEECH_PAD_MS, offset_ms)
    raise ValueError(f"unknown speech detection method {method!r} (use 'silero' or 'energy')")


def speech_intervals(
    pcm: PcmLike,
    sample_rate: int,
    offset_ms: float = 0.0,
    method: Literal["silero", "energy"] = "silero",
    min_silence_ms: float = MIN_SILENCE_MS,
) -> list[Interval]:
    """Speech in a WAV with pauses shorter than `min_silence_ms` bridged (computed before playing)."""
    return merge_intervals(raw_speech_intervals(pcm, sample_rate, offset_ms, method), min_silence_ms)


# ------------------------------------------------------------------------------ turn measures


class TurnMeasures(BaseModel):
    """Latencies and overlap of one turn; negative latencies are kept and named in `negative`."""

    model_config = ConfigDict(frozen=True)

    latencies: Latencies
    overlaps: list[Interval] = Field(default_factory=list)  # user ∩ bot speech, each >= min_overlap_ms
    overlap_ms: float = 0.0
    negative: list[str] = Field(default_factory=list)  # latency fields < 0 (bot before user ended)

    @property
    def barge_in(self) -> bool:
        """The bot became audible before the user stopped speaking."""
        return "voice_to_voice_ms" in self.negative


def overlap_intervals(a: Sequence[Interval], b: Sequence[Interval], min_ms: float = 0.0) -> list[Interval]:
    """Intersections of two interval sets (each first merged), keeping those >= `min_ms`."""
    xs, ys = merge_intervals(a, 0.0), merge_intervals(b, 0.0)
    out: list[Interval] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        start = max(xs[i].start_ms, ys[j].start_ms)
        end = min(xs[i].end_ms, ys[j].end_ms)
        if end > start and end - start >= min_ms - 1e-9:
            out.append(Interval(start_ms=start, end_ms=end))
        if xs[i].end_ms < ys[j].end_ms:
            i += 1
        else:
            j += 1
    return out


class LiveOverlaps:
    """User/bot speech overlaps reported as soon as they are certain, not at the turn's end.

    Fed speech boundaries on the timeline (a detector may report a boundary a little after
    it happened, so times need not arrive in order); an overlap is certain once one of its
    two intervals has closed. Each is reported once, naming the side that started speaking
    over the other. The user holds the floor from the start of their turn's speech: a bot
    speech span that began after it (also in a pause between the user's phrases, the way a
    negative voice-to-voice is measured) is the bot talking over the user (`bot_barge_in`);
    the user coming in while a bot span that began before their speech still plays is the
    user barging in (`user_barge_in`). Who resumed first after a pause says nothing.
    """

    def __init__(self, min_ms: float = MIN_OVERLAP_MS) -> None:
        self.min_ms = min_ms
        self.closed: dict[str, list[Interval]] = {"user": [], "bot": []}
        self.open: dict[str, float | None] = {"user": None, "bot": None}
        self.reported: list[Interval] = []

    def boundary(self, who: str, started: bool, t_ms: float) -> list[tuple[Interval, str]]:
        if started:
            if self.open[who] is None:
                self.open[who] = t_ms
        elif self.open[who] is not None:
            self.closed[who].append(Interval(start_ms=self.open[who], end_ms=max(t_ms, self.open[who])))
            self.open[who] = None
        return self._certain()

    def close(self, t_ms: float) -> list[tuple[Interval, str]]:
        """End whatever is still open (the turn is over)."""
        out: list[tuple[Interval, str]] = []
        for who in ("user", "bot"):
            out += self.boundary(who, False, t_ms)
        return out

    def _spans(self, who: str) -> list[Interval]:
        spans = list(self.closed[who])
        if self.open[who] is not None:
            spans.append(Interval(start_ms=self.open[who], end_ms=math.inf))
        return spans

    def _certain(self) -> list[tuple[Interval, str]]:
        out: list[tuple[Interval, str]] = []
        user, bot = self._spans("user"), merge_intervals(self._spans("bot"), 0.0)
        if not user:
            return out
        floor = min(u.start_ms for u in user)  # where the user's turn began speaking
        for ov in overlap_intervals(user, bot, self.min_ms):
            if math.isinf(ov.end_ms) or any(r.start_ms < ov.end_ms and ov.start_ms < r.end_ms for r in self.reported):
                continue
            self.reported.append(ov)
            span = next(b for b in bot if b.start_ms <= ov.start_ms <= b.end_ms)
            out.append((ov, "bot_barge_in" if span.start_ms >= floor else "user_barge_in"))
        return out


def measure_turn(
    user_audio: Interval,
    user_speech: list[Interval],
    bot_frames_start_ms: float | None,
    bot_speech: list[Interval],
    provider_ttfb_ms: float | None,
    min_overlap_ms: float = MIN_OVERLAP_MS,
) -> TurnMeasures:
    """Latencies from the timeline; a figure is None when one of its two ends is unknown."""
    user_end = max((s.end_ms for s in user_speech), default=None)
    bot_onset = min((s.start_ms for s in bot_speech), default=None)
    v2v = bot_onset - user_end if bot_onset is not None and user_end is not None else None
    # user speech end (VAD); the WAV's end only when VAD found no speech (trailing silence in a
    # WAV must not make a prompt reply look early)
    speech_end = user_end if user_end is not None else user_audio.end_ms
    pipeline = bot_frames_start_ms - speech_end if bot_frames_start_ms is not None else None
    leading = bot_onset - bot_frames_start_ms if bot_onset is not None and bot_frames_start_ms is not None else None
    lat = Latencies(
        voice_to_voice_ms=v2v,
        pipeline_ttfb_ms=pipeline,
        provider_ttfb_ms=provider_ttfb_ms,
        leading_silence_ms=leading,
    )
    negative = [k for k, v in lat.model_dump().items() if v is not None and v < 0]
    overlaps = overlap_intervals(user_speech, bot_speech, min_overlap_ms)
    return TurnMeasures(
        latencies=lat,
        overlaps=overlaps,
        overlap_ms=sum(o.duration_ms for o in overlaps),
        negative=negative,
    )


# ------------------------------------------------------------------------ conversation track


def tag_tone(sample_rate: int) -> np.ndarray:
    """The 2 kHz / 15 ms / -12 dBFS (peak) marker as int16."""
    n = round(sample_rate * TAG_MS / 1000.0)
    amp = 10 ** (TAG_DBFS / 20.0) * 32767.0
    return np.round(amp * np.sin(2 * np.pi * TAG_FREQ_HZ * np.arange(n) / sample_rate)).astype(np.int16)


class _Stretch:
    """Contiguous stereo samples from absolute sample `base` (`n` used of `buf`'s capacity)."""

    __slots__ = ("base", "buf", "n")

    def __init__(self, base: int, buf: np.ndarray, n: int) -> None:
        self.base, self.buf, self.n = base, buf, n

    @property
    def end(self) -> int:
        return self.base + self.n

    def cover(self, end: int, min_cap: int) -> None:
        """Extend to absolute sample `end` (zeros), growing the buffer geometrically."""
        need = end - self.base
        if need > len(self.buf):
            grown = np.zeros((max(need, 2 * len(self.buf), min_cap), 2), dtype=np.int16)
            grown[: self.n] = self.buf[: self.n]
            self.buf = grown
        self.n = max(self.n, need)


class ConversationRecorder:
    """A stereo int16 track (left user, right bot) laid out on the run timeline.

    `add` places samples at round(t_ms * rate / 1000). Writes that overlap on the same side are
    MIXED (summed, clipped), so a silent chunk written over audio never erases it.

    Only what was played is kept, with the silence between: a gap up to `silence_kept_ms`
    (`arena_tui.spine.audio.SILENCE_KEPT_MS`) is held as zeros inside one stretch; a longer one
    starts a new stretch at the next write, and nothing of it is materialised. The run's clock
    runs at speed × wall time, so an idle wait of a minute at 50x is 50 minutes of timeline:
    padding it would grow memory and the store with the clock instead of with the audio. The
    store's reader puts back up to `SILENCE_KEPT_MS` of silence between slices and lists the
    rest as a cut (`arena_tui.store.AudioClip.cuts`), so time stays true for every gap a
    listener would sit through and is said where it is not.

    `take_slices` hands over (and forgets) everything before a time, one slice per stretch;
    a write into an already-taken part loses those samples (counted in `late_samples`).

    With `tag=True`, the first bot chunk that starts at or after the user stopped (the end
    of the last non-silent user chunk, or `mark_user_stop`) gets the reference harness's
    2 kHz / 15 ms / -12 dBFS tone mixed into its start, and its time goes to `tags`, so log
    time and audio time can be cross-checked. Off by default: it alters the bot audio.
    """

    def __init__(self, sample_rate: int = 24000, tag: bool = False, start_ms: float = 0.0,
                 silence_kept_ms: float = SILENCE_KEPT_MS) -> None:
        self.rate = sample_rate
        self.tag = tag
        self.tags: list[float] = []
        self.late_samples = 0
        self._kept = self._sample(silence_kept_ms)
        self._stretches: list[_Stretch] = []  # in time order, more than `_kept` apart
        # absolute sample index where the untaken part begins: everything before was taken (or,
        # from `start_ms`, belongs to an earlier recording of the run: a resumed run's track starts after it)
        self._taken = self._sample(start_ms)
        self._user_stop: int | None = None  # armed tag: bot audio at/after this sample gets it
        self._tone = tag_tone(sample_rate)

    def _sample(self, t_ms: float) -> int:
        return round(t_ms * self.rate / 1000.0)

    @property
    def held_frames(self) -> int:
        """Stereo frames held in memory (capacity included): what is not yet taken."""
        return sum(len(s.buf) for s in self._stretches)

    def _stretch_for(self, start: int, end: int) -> _Stretch:
        """The stretch that samples [start, end) go into: the one(s) they land in or within the
        kept silence of (joined into one), else a new one."""
        near = [s for s in self._stretches if s.base - self._kept <= end and start <= s.end + self._kept]
        if len(near) == 1 and near[0].base <= start:
            near[0].cover(end, self.rate)
            return near[0]
        lo = min([start] + [s.base for s in near])
        hi = max([end] + [s.end for s in near])
        joined = _Stretch(lo, np.zeros((max(hi - lo, self.rate), 2), dtype=np.int16), hi - lo)
        for s in near:
            joined.buf[s.base - lo : s.end - lo] = s.buf[: s.n]
        self._stretches = sorted([s for s in self._stretches if s not in near] + [joined], key=lambda s: s.base)
        return joined

    def _mix(self, channel: int, start: int, samples: np.ndarray) -> None:
        if start < self._taken:
            cut = min(len(samples), self._taken - start)
            self.late_samples += cut
            samples, start = samples[cut:], self._taken
        if not len(samples):
            return
        end = start + len(samples)
        st = self._stretch_for(start, end)
        view = st.buf[start - st.base : end - st.base, channel]
        view[:] = np.clip(view.astype(np.int32) + samples, -32768, 32767).astype(np.int16)

    def add(self, side: Speaker, pcm: PcmLike, t_ms: float) -> None:
        if t_ms < 0:
            raise ValueError(f"audio placed before the run started (t_ms={t_ms})")
        samples = as_int16(pcm)
        start = self._sample(t_ms)
        if side == "user":
            self._mix(0, start, samples)
            if self.tag and samples.any():
                self._user_stop = start + len(samples)
        elif side == "bot":
            self._mix(1, start, samples)
            if self.tag and self._user_stop is not None and start >= self._user_stop - 1:
                self._mix(1, start, self._tone)
                self.tags.append(start * 1000.0 / self.rate)
                self._user_stop = None
        else:
            raise ValueError(f"side must be 'user' or 'bot', not {side!r}")

    def mark_user_stop(self, t_ms: float) -> None:
        """Arm the tag for the first bot chunk at or after `t_ms` (when user chunks include silence)."""
        self._user_stop = self._sample(t_ms)

    @property
    def taken_ms(self) -> float:
        """Where the untaken part begins (everything before it was handed over)."""
        return self._taken * 1000.0 / self.rate

    def take_slices(self, until_ms: float) -> list[tuple[float, bytes]]:
        """Everything recorded before `until_ms` as (start ms, interleaved stereo PCM16), one slice
        per stretch, in time order; the slices hold the audio and the kept silence inside each
        stretch, never the silence after the last write. Empty when nothing was recorded."""
        until = self._sample(until_ms)
        if until <= self._taken:
            return []
        out, keep = [], []
        for s in self._stretches:
            if s.base >= until:
                keep.append(s)
                continue
            upto = min(s.end, until)
            out.append((s.base * 1000.0 / self.rate, s.buf[: upto - s.base].astype("<i2").tobytes()))
            if s.end > until:  # bot audio already scheduled past `until` stays for the next slice
                rest = s.buf[until - s.base : s.n].copy()
                keep.append(_Stretch(until, rest, len(rest)))
        self._stretches = keep
        self._taken = until
        return out

    def take_chunks(self, run_id: str, until_ms: float, t_ms: float | None = None,
                    turn_index: int | None = None) -> list[AudioChunk]:
        """`take_slices` as the store's `AudioChunk` events (track "conversation")."""
        return [
            AudioChunk(
                run_id=run_id,
                t_ms=until_ms if t_ms is None else t_ms,
                turn_index=turn_index,
                track="conversation",
                sample_rate=self.rate,
                channels=2,
                start_ms=start_ms,
                pcm=pcm,
            )
            for start_ms, pcm in self.take_slices(until_ms)
        ]
