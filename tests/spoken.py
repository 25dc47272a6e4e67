"""A copy of demo_bench with two human speakers' recordings (`real_audio/person1/`, `person2/`):
each turn's WAV is the TTS one after its speaker's own lead-in of silence, so the length of what
a run played tells whose audio it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from arena_tui.spine import audio
from benchmarks.registry import open_benchmark

LEAD_MS = {"person1": 400, "person2": 800}  # each speaker's silence before the TTS words


def make_spoken(folder: Path) -> Path:
    """demo_bench copied to `folder`, with both speakers' recordings beside its TTS audio."""
    src = open_benchmark("demo_bench")
    assert src.root is not None
    shutil.copytree(src.root, folder)
    for speaker, lead_ms in LEAD_MS.items():
        for t in src.turns:
            pcm = audio.load_pcm16(src.audio_path(t), 24000)
            lead = np.zeros(24 * lead_ms, dtype=np.int16)
            audio.write_wav(folder / "real_audio" / speaker / f"turn_{t.turn_index:03d}.wav",
                            np.concatenate([lead, pcm]), 24000)
    return folder


def tts_ms(bench_folder: Path, turn: int) -> float:
    """How long the TTS WAV of `turn` is."""
    return audio.duration_ms(audio.load_pcm16(bench_folder / "audio" / f"turn_{turn:03d}.wav", 24000))
