"""Measure the data/audio layer (prints numbers; asserts nothing): loading, decoding, resampling, espeak.

usage: .venv/bin/python -m scripts.bench_data_audio [--data ../shared/audio-arena]
"""

from __future__ import annotations

import argparse
import statistics
import time


from arena_tui.spine import audio
from benchmarks.registry import load_benchmark
from benchmarks.registry import KNOWN
from scripts import shared_data


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(shared_data()))
    args = ap.parse_args()

    for name in KNOWN:
        t, b = timed(lambda n=name: load_benchmark(n, args.data))
        print(f"load {name:20} {len(b.turns):3d} turns  {t * 1000:7.1f} ms (median of 5)")
    t, _ = timed(lambda: load_benchmark("demo_bench"))
    print(f"load {'demo_bench':20}  10 turns  {t * 1000:7.1f} ms")

    bench = load_benchmark("conversation_bench", args.data)
    paths = [bench.audio_path(t) for t in bench.turns]
    total_s = sum(p.stat().st_size - 44 for p in paths) / 2 / 24_000
    audio.clear_cache()
    t0 = time.perf_counter()
    for p in paths:
        audio.load_pcm16(p)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    for p in paths:
        audio.load_pcm16(p)
    warm = time.perf_counter() - t0
    print(f"decode conversation_bench 75 WAVs ({total_s:.0f} s of audio): cold {cold * 1000:.0f} ms "
          f"({total_s / cold:.0f}x real time), cached {warm * 1000:.2f} ms")

    pcm = audio.load_pcm16(paths[0])
    for to in (16_000, 48_000):
        t, _ = timed(lambda to=to: audio.resample(pcm, 24_000, to))
        print(f"resample {len(pcm) / 24_000:.1f} s 24k->{to // 1000}k (soxr VHQ): {t * 1000:.1f} ms")
    block = pcm[:1200]
    t, _ = timed(lambda: [audio.rms_dbfs(block) + audio.peak_dbfs(block) for _ in range(1000)], repeat=3)
    print(f"rms+peak dBFS of a 50 ms block: {t / 1000 * 1e6:.1f} us")

    try:
        from benchmarks.synthesize import EspeakBackend

        be = EspeakBackend()
        text = bench.turn(0).input
        t, out = timed(lambda: be.speak(text), repeat=3)
        dur = len(out) / 24_000  # type: ignore[arg-type]
        print(f"espeak-ng {len(text)} chars -> {dur:.1f} s of 24 kHz audio in {t * 1000:.0f} ms "
              f"({dur / t:.0f}x real time)")
    except Exception as e:  # noqa: BLE001 - a measurement script reports, it does not fail
        print(f"espeak-ng: not measured ({e})")


if __name__ == "__main__":
    main()
