"""Speech and overlap on a timeline: the engine-independent rules a live run measures with.

Every time is ms on one timeline (float); PCM is 16-bit little-endian mono (bytes or int16
arrays) at the caller's sample rate. A live run (runners) feeds these the audio it played; an
import (`arena_tui.interop.wav_metrics`) feeds them a recorded `conversation.wav`, so both read
speech, latency and overlap by the same rules. Silero, which needs Pipecat's model, stays in the
engine (`runners.timeline`); the energy rule is the default there (`RunSettings.vad_method`).

Thresholds, and why:
- Bot speech (streaming, `SpeechDetector`): 10 ms blocks; speech starts at the first block whose
  RMS is >= -45 dBFS once 60 ms in a row are; it stops at the end of the last loud block after
  300 ms below. -45 dBFS is well above TTS/codec noise floors (~-70) and below the quietest
  voiced speech (~-35); 60 ms ignores clicks; 300 ms bridges the gaps between words.
- User speech (offline, energy): 10 ms blocks: start at >= T, stop below T - 6 dB, where
  T = max(-40 dBFS, noise floor + 12 dB) and the noise floor is the 10th percentile of the
  block levels; bursts shorter than 60 ms are dropped; each interval is padded by 30 ms. Then
  gaps shorter than `min_silence_ms` (default 300) are merged, so a pause inside a sentence
  does not split it; `energy_speech_intervals` gives the unmerged ones.
- Turn measures (`measure_turn`): voice-to-voice = first bot speech onset - last user speech end;
  pipeline TTFB = first bot frame - user speech end; leading silence = bot speech onset - first bot
  frame; overlap = user ∩ bot speech, each piece >= 100 ms.
- The conversation tag (as the reference harness): a 2 kHz / 15 ms / -12 dBFS (peak) tone mixed
  into the first bot frame after the user stopped, so log time and audio time can be cross-checked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .audio import SILENCE_DBFS, rms_dbfs
from .events import Interval, Latencies

PcmLike = bytes | bytearray | memoryview | np.ndarray

# Bot speech (streaming) defaults
BOT_THRESHOLD_DBFS = -45.0
BOT_MIN_SPEECH_MS = 60.0
BOT_HANGOVER_MS = 300.0
DETECTOR_BLOCK_MS = 10.0

# Offline user speech defaults
MIN_SILENCE_MS = 300.0
SPEECH_PAD_MS = 30.0
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


class Blocker:
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
        self._blocks = Blocker(sample_rate, block_ms)
        self.speaking = False
        self._candidate: float | None = None  # onset of an unconfirmed loud run
        self._loud_end: float | None = None  # end of the last loud block
        self._onset: float | None = None
        self.intervals: list[Interval] = []  # closed speech intervals so far
        # the ends of the latest loud blocks: a `cut` may fall before audio already fed
        self._loud_ends: deque[tuple[float, float]] = deque(maxlen=64)

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
            self._loud_ends.append((t, end))
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

    def cut(self, t_ms: float) -> list[tuple[str, float]]:
        """The audio stopped playing at `t_ms`, though more was fed (played ahead of time and never
        heard): end the stream there, closing any speech at the last loud audio before `t_ms`."""
        if self.speaking and self._onset is not None:
            before = [min(end, t_ms) for start, end in self._loud_ends if start < t_ms]
            self._loud_end = max([self._onset, *before[-1:]])
        return self.flush(t_ms)

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


def runs_of(active: Sequence[bool]) -> list[tuple[int, int]]:
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


def hysteresis(values: np.ndarray, on: float, off: float) -> list[bool]:
    active, state = [], False
    for v in values:
        state = v >= on if not state else v >= off
        active.append(state)
    return active


def to_intervals(
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


def energy_speech_intervals(pcm: PcmLike, sample_rate: int, offset_ms: float = 0.0) -> list[Interval]:
    """Speech by level before merging pauses (the energy rule in the module docstring); times are
    `offset_ms` + position in the PCM."""
    x = as_int16(pcm)
    total_ms = len(x) * 1000.0 / sample_rate
    block = max(1, round(sample_rate * ENERGY_BLOCK_MS / 1000.0))
    levels = block_rms_dbfs(x, block)
    if len(levels) == 0:
        return []
    floor = float(np.percentile(levels, 10))
    on = max(ENERGY_THRESHOLD_DBFS, floor + ENERGY_FLOOR_MARGIN_DB)
    runs = runs_of(hysteresis(levels, on, on - ENERGY_HYSTERESIS_DB))
    step = block * 1000.0 / sample_rate
    return to_intervals(runs, step, total_ms, ENERGY_MIN_SPEECH_MS, SPEECH_PAD_MS, offset_ms)


def energy_speech(pcm: PcmLike, sample_rate: int, offset_ms: float = 0.0,
                  min_silence_ms: float = MIN_SILENCE_MS) -> list[Interval]:
    """Energy speech with pauses shorter than `min_silence_ms` bridged (a live run's user WAV rule)."""
    return merge_intervals(energy_speech_intervals(pcm, sample_rate, offset_ms), min_silence_ms)


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


# ------------------------------------------------------------------------ conversation tag


def tag_tone(sample_rate: int) -> np.ndarray:
    """The 2 kHz / 15 ms / -12 dBFS (peak) marker as int16."""
    n = round(sample_rate * TAG_MS / 1000.0)
    amp = 10 ** (TAG_DBFS / 20.0) * 32767.0
    return np.round(amp * np.sin(2 * np.pi * TAG_FREQ_HZ * np.arange(n) / sample_rate)).astype(np.int16)
