"""Print what the timeline and tool-resolution code costs (tests never assert timings).

Usage: .venv/bin/python -m scripts.bench_timeline [path/to/audio-arena]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from arena_tui.spine.audio import load_pcm16  # noqa: E402
from arena_tui.spine.benchmark import Turn  # noqa: E402
from arena_tui.spine.speech import SpeechDetector, merge_intervals  # noqa: E402
from runners.timeline.levels import LevelMeter  # noqa: E402
from runners.timeline.recorder import ConversationRecorder  # noqa: E402
from runners.timeline.user_speech import raw_speech_intervals, speech_intervals  # noqa: E402
from runners.tools import ToolResolver  # noqa: E402
from scripts import shared_data  # noqa: E402

RATE = 24000


def shared() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    return shared_data()


def main() -> None:
    data = shared()
    wavs = sorted((data / "conversation_bench" / "audio").glob("turn_*.wav"))
    pcms = [load_pcm16(w) for w in wavs]
    audio_s = sum(len(p) for p in pcms) / RATE
    print(f"conversation_bench: {len(pcms)} WAVs, {audio_s:.1f} s of user audio")

    speech_intervals(pcms[0], RATE)  # load the Silero model once
    for method in ("silero", "energy"):
        t = time.perf_counter()
        counts = {300: 0, 800: 0}
        splits = 0
        for p in pcms:
            raw = raw_speech_intervals(p, RATE, method=method)
            a, b = merge_intervals(raw, 300), merge_intervals(raw, 800)
            counts[300] += len(a)
            counts[800] += len(b)
            splits += len(a) > 1
        dt = time.perf_counter() - t
        print(
            f"speech_intervals[{method}]: {dt * 1000:.0f} ms total, {dt / audio_s * 1000:.2f} ms per s of audio; "
            f"intervals min_silence 300: {counts[300]}, 800: {counts[800]}; WAVs split at 300 ms: {splits}"
        )

    # streaming: what one 20 ms bot chunk costs in meter + detector + recorder
    meter, det, rec = LevelMeter("bot"), SpeechDetector(RATE), ConversationRecorder(RATE, tag=True)
    stream = np.concatenate(pcms[:10])
    chunk = 480
    n = len(stream) // chunk
    t = time.perf_counter()
    for i in range(n):
        c = stream[i * chunk : (i + 1) * chunk]
        tm = i * 20.0
        meter.feed(c, tm)
        det.feed(c, tm)
        rec.add("bot", c, tm)
        if i % 250 == 249:
            rec.take_slices(tm)
    dt = time.perf_counter() - t
    print(f"per 20 ms chunk (meter + detector + recorder): {dt / n * 1e6:.0f} us "
          f"({dt / (n * 0.02) * 100:.2f} % of one core in real time)")
    print(f"recorder buffer after slicing: {rec.held_frames * 4 / 1024:.0f} KiB")

    turns = [Turn.model_validate_json(line) for line in (data / "grocery_bench" / "turns.jsonl").read_text().splitlines()]
    t = time.perf_counter()
    calls = 0
    for _ in range(50):
        for turn in turns:
            r = ToolResolver(turn)
            for c in turn.expected_calls:
                r.resolve(c.name, c.args)
                calls += 1
    dt = time.perf_counter() - t
    print(f"ToolResolver.resolve: {dt / calls * 1e6:.0f} us per call ({calls} calls)")


if __name__ == "__main__":
    main()
