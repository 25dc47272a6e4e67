"""The conversation track: user and bot audio as one stereo recording on the run timeline."""

from __future__ import annotations

import numpy as np

from arena_tui.spine.audio import SILENCE_KEPT_MS
from arena_tui.spine.events import AudioChunk, Speaker

from arena_tui.spine.speech import PcmLike, as_int16, tag_tone  # the tag an import looks for


#: stereo frames per block of a stretch (one second at 24 kHz): a stretch grows by appending blocks,
#: never by copying what it holds, so a write costs the same at the start of a long turn and at its end
BLOCK_FRAMES = 24000


class _Stretch:
    """Contiguous stereo samples from absolute sample `base` (`n` used), held in fixed blocks.

    Why blocks: a buffer that grows by doubling copies everything it holds (and faults in fresh
    pages) on the write that crosses its capacity, a few ms for a long turn, in the middle of the
    event loop that paces every session of the process."""

    __slots__ = ("base", "blocks", "n")

    def __init__(self, base: int) -> None:
        self.base, self.n = base, 0
        self.blocks: list[np.ndarray] = []

    @property
    def end(self) -> int:
        return self.base + self.n

    @property
    def capacity(self) -> int:
        return len(self.blocks) * BLOCK_FRAMES

    def cover(self, end: int) -> None:
        """Extend to absolute sample `end` (zeros)."""
        need = end - self.base
        while self.capacity < need:
            self.blocks.append(np.zeros((BLOCK_FRAMES, 2), dtype=np.int16))
        self.n = max(self.n, need)

    def views(self, start: int, end: int, channel: int | None = None):
        """(view, offset into the written samples) for absolute samples [start, end) block by block;
        `channel` None: both channels."""
        pos = start - self.base
        stop = end - self.base
        while pos < stop:
            k, lo = divmod(pos, BLOCK_FRAMES)
            hi = min(BLOCK_FRAMES, lo + stop - pos)
            blk = self.blocks[k]
            yield (blk[lo:hi] if channel is None else blk[lo:hi, channel]), pos - (start - self.base)
            pos += hi - lo

    def put(self, start: int, frames: np.ndarray) -> None:
        """Write stereo `frames` at absolute sample `start` (covered first), replacing what is there."""
        self.cover(start + len(frames))
        for view, off in self.views(start, start + len(frames)):
            view[:] = frames[off : off + len(view)]

    def frames(self, upto: int) -> np.ndarray:
        """Stereo samples from `base` to absolute sample `upto` (at most `end`), one array."""
        m = min(upto, self.end) - self.base
        if m <= 0:
            return np.zeros((0, 2), dtype=np.int16)
        full, rest = divmod(m, BLOCK_FRAMES)
        parts = self.blocks[:full] + ([self.blocks[full][:rest]] if rest else [])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


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
        return sum(s.capacity for s in self._stretches)

    def _stretch_for(self, start: int, end: int) -> _Stretch:
        """The stretch that samples [start, end) go into: the one(s) they land in or within the
        kept silence of (joined into one), else a new one."""
        last = self._stretches[-1] if self._stretches else None
        if last is not None and last.base <= start and start <= last.end + self._kept:
            # the usual case, a write at or after the newest stretch's start: nothing later to join
            last.cover(end)
            return last
        near = [s for s in self._stretches if s.base - self._kept <= end and start <= s.end + self._kept]
        if len(near) == 1 and near[0].base <= start:
            near[0].cover(end)
            return near[0]
        lo = min([start] + [s.base for s in near])
        hi = max([end] + [s.end for s in near])
        joined = _Stretch(lo)
        joined.cover(hi)
        for s in near:
            joined.put(s.base, s.frames(s.end))
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
        for view, off in st.views(start, end, channel):
            part = samples[off : off + len(view)]
            if view.any():  # something is there already: mix (sum, clipped)
                view[:] = np.clip(view.astype(np.int32) + part, -32768, 32767).astype(np.int16)
            else:  # nothing yet (the usual case): the sum is the samples themselves
                view[:] = part

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

    def silence(self, side: Speaker, from_ms: float) -> None:
        """Erase `side` from `from_ms` on (audio written ahead of its play time that never played:
        the speaker was stopped); what was taken already stays as it was."""
        channel = 0 if side == "user" else 1
        start = max(self._sample(from_ms), self._taken)
        for s in self._stretches:
            if s.end > start:
                for view, _ in s.views(max(start, s.base), s.end, channel):
                    view[:] = 0

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
            whole = s.frames(s.end)  # joined once: the slice handed over and what stays
            upto = min(s.end, until)
            out.append((s.base * 1000.0 / self.rate, whole[: upto - s.base].astype("<i2", copy=False).tobytes()))
            if s.end > until:  # bot audio already scheduled past `until` stays for the next slice
                rest = _Stretch(until)
                rest.put(until, whole[until - s.base :])
                keep.append(rest)
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
