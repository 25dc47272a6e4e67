"""What a speech-to-text fake "hears": the words of the benchmark turn whose audio arrived.

A fake cannot transcribe, but it can recognise: the received audio is fingerprinted against
the benchmark's turn WAVs (the simulator's `fingerprint` index: exact onset hashes, so a clip cut
anywhere by the client's VAD is still placed), and a stretch of it is heard as the words of that
turn that fall in it, the turn's text spread evenly over the WAV's speech. A turn the client's
VAD splits in two is so heard in two parts that add up to the whole; audio that matches no turn
(noise, the bot's own voice) is heard as nothing.
"""

from __future__ import annotations

import numpy as np

from arena_tui.spine.benchmark import Benchmark
from runners.simulator.fingerprint import RATE, FingerprintIndex, Match, StreamScanner, read_pcm24k



FRAME_MS = 10.0
SPEECH_LEVEL = 500.0  # RMS of a 10 ms frame that holds speech (the fingerprint's onset level)


class Hearing:
    """The benchmark's turns, indexed to be recognised in received 24 kHz PCM16."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.index = FingerprintIndex()
        #: turn → where each of its words is said, ms from the WAV's start (its text spread over
        #: the WAV's speech frames, pauses left out)
        self.word_at: dict[int, list[tuple[str, float]]] = {}
        for turn in benchmark.turns:
            path = benchmark.audio_path(turn)
            if path is None or not path.is_file():
                continue
            pcm = read_pcm24k(path)
            self.index.add(turn.turn_index, pcm)
            frame = int(RATE * FRAME_MS / 1000)
            n = pcm.size // frame
            rms = np.sqrt(np.mean(pcm[: n * frame].reshape(n, frame).astype(np.float64) ** 2, axis=1))
            speech = np.flatnonzero(rms >= SPEECH_LEVEL)
            words = turn.input.split()
            if speech.size and words:
                share = speech.size / len(words)  # speech frames per word
                self.word_at[turn.turn_index] = [
                    (w, (speech[min(int((i + 0.5) * share), speech.size - 1)] + 0.5) * FRAME_MS) for i, w in enumerate(words)]

    def scanner(self) -> StreamScanner:
        """A scanner for one received stream (a live connection's audio, chunk by chunk)."""
        return StreamScanner(self.index)

    def place(self, pcm: bytes) -> Match | None:
        """Where a clip of received audio sits: the turn and offset of its first recognised onset
        (the match's `onset_ms` is in the clip's time), or None."""
        scanner = self.scanner()
        found = scanner.feed(np.frombuffer(pcm, dtype="<i2"))
        found += scanner.feed(np.zeros(RATE // 4, dtype=np.int16))  # settle onsets at the clip's end
        return found[0] if found else None

    def words(self, turn: int, start_ms: float, end_ms: float) -> str:
        """The turn's words said in [start_ms, end_ms) of its WAV."""
        return " ".join(w for w, at in self.word_at.get(turn, []) if start_ms <= at < end_ms)

    def clip_words(self, pcm: bytes) -> tuple[int | None, str]:
        """(turn, words) of one received clip (a segment a client's VAD cut; the digital silence
        a client pads it with is no part of what was said)."""
        m = self.place(pcm)
        if m is None:
            return None, ""
        samples = np.frombuffer(pcm, dtype="<i2")
        said = np.flatnonzero(samples)
        length_ms = ((said[-1] + 1) if said.size else 0) * 1000.0 / RATE
        clip_start = m.offset_ms - m.onset_ms  # where the clip starts in the turn's WAV
        return m.turn_index, self.words(m.turn_index, clip_start, clip_start + length_ms)
