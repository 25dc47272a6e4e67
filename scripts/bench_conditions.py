"""Measure what an acoustic condition costs before a run starts: conditioning every turn's clip
(`spine.conditions.heard`, at the run's 24 kHz, as the engine's `check` does in a thread) and the
simulator's fingerprint index of the conditioned clips (`TurnBook.build_index`), per condition,
beside clean. Also how far each condition moves the user's audio from the clean clip (SNR of the
difference, dB over all turns), so a spec's strength is a number.

    .venv/bin/python -m scripts.bench_conditions [--bench conversation_bench] [--data ../shared/audio-arena]

Numbers only: nothing here passes or fails. Each clip's decode is done once first (shared per
process, as in a run), so the times are the transform's and the index's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena_tui.spine.audio import load_pcm16_bytes
from arena_tui.spine.conditions import babble_voices, heard, parse_condition
from arena_tui.spine.faults import parse_faults
from benchmarks.registry import load_benchmark
from runners.simulator.turns import TurnBook

SPECS = ("clean", "noise=10", "noise=10:white", "noise=5:babble", "telephony", "loss=5")
RATE = 24000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default="demo_bench")
    ap.add_argument("--data", default=None, help="benchmark data folder (default: the registry's)")
    args = ap.parse_args()
    bench = load_benchmark(args.bench, args.data)
    turns = [t for t in bench.turns if bench.audio_path(t) is not None and bench.audio_path(t).is_file()]
    clean = {t.turn_index: load_pcm16_bytes(bench.audio_path(t), RATE) for t in turns}
    audio_s = sum(len(p) for p in clean.values()) / 2 / RATE
    print(f"{bench.name}: {len(turns)} turns, {audio_s:.1f} s of user audio at {RATE} Hz")
    print(f"{'condition':16} {'condition all (ms)':>18} {'per audio s (ms)':>16} {'sim index (ms)':>15} {'SNR vs clean (dB)':>18}")
    for spec in SPECS:
        cond = parse_condition(spec)
        t0 = time.perf_counter()
        out = {i: heard(pcm, RATE, cond, 0, i, babble=lambda i=i: babble_voices(bench, i, RATE)) for i, pcm in clean.items()}
        conditioned_ms = (time.perf_counter() - t0) * 1000
        book = TurnBook(bench, parse_faults(None), cond, 0)
        t0 = time.perf_counter()
        book.build_index()
        index_ms = (time.perf_counter() - t0) * 1000
        signal = sum(float((np.frombuffer(p, np.int16).astype(np.float64) ** 2).sum()) for p in clean.values())
        diff = sum(float(((np.frombuffer(out[i], np.int16).astype(np.float64)
                           - np.frombuffer(p, np.int16).astype(np.float64)) ** 2).sum()) for i, p in clean.items())
        snr = "inf" if diff == 0 else f"{10 * np.log10(signal / diff):.1f}"
        print(f"{spec:16} {conditioned_ms:18.0f} {conditioned_ms / audio_s:16.2f} {index_ms:15.0f} {snr:>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
