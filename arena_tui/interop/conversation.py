"""An imported `conversation.wav` back on the run's timeline, as the slices a live run records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from arena_tui.spine.audio import AudioError, float_to_pcm16, read_wav
from arena_tui.spine.events import AudioChunk
from .layout import InteropError

SLICE_S = 10  # conversation audio is imported in slices, as a live run records it


def read_conversation(path: Path) -> tuple[np.ndarray, int] | None:
    """The stereo recording as PCM16 frames × 2 (left user, right bot) and its rate; None when absent."""
    if not path.is_file():
        return None
    try:
        frames, fmt = read_wav(path)
    except AudioError as e:
        raise InteropError(str(e)) from None
    if fmt.channels != 2:
        raise InteropError(f"{path}: conversation.wav must be stereo (left user, right bot), has {fmt.channels} channel(s)")
    return float_to_pcm16(frames).reshape(-1, 2), fmt.sample_rate


def conversation_events(pcm: np.ndarray, rate: int, run_id: str, layout: object = None) -> list[AudioChunk]:
    """The recording (`read_conversation`) as conversation slices; `layout` (our export's
    `conversation`: its start on the timeline and the silences it cut) puts each slice back where
    it was recorded."""
    layout = layout if isinstance(layout, dict) else {}
    start_ms = float(layout.get("start_ms") or 0.0)
    kept = round(float(layout.get("silence_kept_ms") or 0.0) * rate / 1000.0)
    # (first frame, its timeline ms, frame past its last) of each part between cuts; a part ends
    # before the silence kept ahead of its cut, so the gap is whole again, as it was recorded
    parts: list[list[Any]] = [[0, start_ms, len(pcm)]]
    skipped = 0.0
    for cut in layout.get("cuts") or []:
        at, ms = float(cut["at_ms"]), float(cut["cut_ms"])
        frame = round((at - start_ms - skipped) * rate / 1000.0)
        parts[-1][2] = max(parts[-1][0], frame - kept)
        parts.append([frame, at + ms, len(pcm)])
        skipped += ms
    step = SLICE_S * rate
    out = []
    for first, t0, last in parts:
        for i in range(first, last, step):
            t = t0 + (i - first) * 1000.0 / rate
            out.append(AudioChunk(run_id=run_id, t_ms=t, track="conversation", sample_rate=rate, channels=2,
                                  start_ms=t, pcm=pcm[i : min(i + step, last)].astype("<i2").tobytes()))
    return out
