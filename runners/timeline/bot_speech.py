"""Bot speech as it is played (streaming energy VAD, `SpeechDetector`).

10 ms blocks; speech starts at the first block whose RMS is >= -45 dBFS once 60 ms in a row
are; it stops at the end of the last loud block after 300 ms below. -45 dBFS is well above
TTS/codec noise floors (~-70) and below the quietest voiced speech (~-35); 60 ms ignores
clicks; 300 ms bridges the gaps between words.
"""

from __future__ import annotations

from arena_tui.spine.audio import rms_dbfs
from arena_tui.spine.events import Interval

from .blocks import Blocker, PcmLike

BOT_THRESHOLD_DBFS = -45.0
BOT_MIN_SPEECH_MS = 60.0
BOT_HANGOVER_MS = 300.0
DETECTOR_BLOCK_MS = 10.0


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
