"""What a speech-to-text fake "hears": the words of the benchmark turn whose audio arrived.

A fake cannot transcribe, but it can recognise: the engine streams each turn's WAV decoded
exactly as the fake decodes it, so a stretch of received audio is found sample for sample in
one of the benchmark's WAVs (its first loud 20 ms, searched as bytes), wherever the client's VAD
cut it. The stretch is heard as the words of that turn said in it, the turn's text spread over
the WAV's speech frames (pauses left out). A turn the VAD splits in two is so heard in two parts
that add up to the whole; audio found in no WAV is heard as nothing.
"""

from __future__ import annotations

import numpy as np

from arena_tui.spine.audio import TARGET_RATE as RATE, load_pcm16
from arena_tui.spine.benchmark import Benchmark

FRAME_MS = 10.0
SPEECH_LEVEL = 500.0  # |sample| / RMS of a 10 ms frame that holds speech (the simulator's onset level)
PROBE = RATE // 50  # 20 ms searched for


class Hearing:
    """The benchmark's turns, indexed to be recognised in received 24 kHz PCM16."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.wavs: dict[int, bytes] = {}  # turn → its WAV's samples, as the engine streams them
        #: turn → where each of its words is said, ms from the WAV's start (its text spread over
        #: the WAV's speech frames, pauses left out)
        self.word_at: dict[int, list[tuple[str, float]]] = {}
        self.speech_end: dict[int, float] = {}  # turn → where its WAV's last speech frame ends, ms
        for turn in benchmark.turns:
            path = benchmark.audio_path(turn)
            if path is None or not path.is_file():
                continue
            pcm = load_pcm16(path)  # decoded as the engine decodes what it streams
            self.wavs[turn.turn_index] = pcm.tobytes()
            frame = int(RATE * FRAME_MS / 1000)
            n = pcm.size // frame
            rms = np.sqrt(np.mean(pcm[: n * frame].reshape(n, frame).astype(np.float64) ** 2, axis=1))
            speech = np.flatnonzero(rms >= SPEECH_LEVEL)
            if speech.size:
                self.speech_end[turn.turn_index] = (speech[-1] + 1) * FRAME_MS
            words = turn.input.split()
            if speech.size and words:
                share = speech.size / len(words)  # speech frames per word
                self.word_at[turn.turn_index] = [
                    (w, (speech[min(int((i + 0.5) * share), speech.size - 1)] + 0.5) * FRAME_MS) for i, w in enumerate(words)]

    def locate(self, pcm: bytes) -> tuple[int, float] | None:
        """(turn, where the stretch starts in that turn's WAV, ms), or None: its first loud 20 ms
        found byte for byte in the WAVs, the place where the rest agrees longest winning (two
        WAVs can open alike: demo_bench turns 0 and 1 share their first 64 ms)."""
        samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
        loud = np.flatnonzero(np.abs(samples.astype(np.int32)) >= SPEECH_LEVEL)
        if loud.size == 0 or loud[0] + PROBE > samples.size:
            return None
        at = int(loud[0])
        probe, rest = samples[at:at + PROBE].tobytes(), samples[at:]
        best: tuple[int, int, float] | None = None  # (samples agreeing, turn, offset ms)
        for turn, wav in self.wavs.items():
            pos = wav.find(probe)
            while pos != -1:
                if pos % 2 == 0:  # sample-aligned only
                    theirs = np.frombuffer(wav, dtype="<i2")[pos // 2: pos // 2 + rest.size]
                    differ = np.flatnonzero(theirs != rest[: theirs.size])
                    agree = int(differ[0]) if differ.size else theirs.size
                    if best is None or agree > best[0]:
                        best = (agree, turn, (pos // 2 - at) * 1000.0 / RATE)
                pos = wav.find(probe, pos + 1)
        return (best[1], best[2]) if best is not None else None

    def speech_end_ms(self, turn: int) -> float:
        """Where the turn's speech ends in its WAV (ms from its start; 0 when it has none)."""
        return self.speech_end.get(turn, 0.0)

    def words(self, turn: int, start_ms: float, end_ms: float) -> str:
        """The turn's words said in [start_ms, end_ms) of its WAV."""
        return " ".join(w for w, at in self.word_at.get(turn, []) if start_ms <= at < end_ms)

    def clip_words(self, pcm: bytes) -> tuple[int | None, str]:
        """(turn, words) of one received stretch (a segment a client's VAD cut; the digital
        silence a client pads it with is no part of what was said)."""
        found = self.locate(pcm)
        if found is None:
            return None, ""
        turn, start = found
        said = np.flatnonzero(np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2"))
        length_ms = ((said[-1] + 1) if said.size else 0) * 1000.0 / RATE
        return turn, self.words(turn, start, start + length_ms)
