"""A layout's WAVs into ours: 24 kHz mono PCM16 (`spine.audio`'s resampling), copied as they are
when they already are; which files of their audio folder no turn uses."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from arena_tui.spine import audio

from ..audio_checks import too_long

@dataclass(frozen=True)
class Brought:
    """What became of one WAV: `converted` names the format it came in when it was changed;
    `problem` says why it was copied as it is (the loader then names it, as for any folder)."""

    converted: str | None = None
    problem: str | None = None


def turn_wav(turn: int) -> str:
    return f"turn_{turn:03d}.wav"


def bring(src: Path, dst: Path, limit_s: float) -> Brought:
    """Write `src` as `dst` in our format. A file whose header cannot be read, or longer than one
    turn may be, is copied unread (never decoded whole) and reported."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        fmt = audio.wav_info(src)
        if (long := too_long(fmt.duration_s, limit_s)) is not None:
            raise audio.AudioError(long)
        if (fmt.sample_rate, fmt.channels, fmt.bits, fmt.is_float) == (audio.TARGET_RATE, 1, 16, False):
            shutil.copyfile(src, dst)
            return Brought()
        frames, _ = audio.read_wav(src)
    except audio.AudioError as e:
        shutil.copyfile(src, dst)
        return Brought(problem=e.reason)
    pcm = audio.resample(audio.float_to_pcm16(audio.to_mono(frames)), fmt.sample_rate, audio.TARGET_RATE)
    audio.write_wav(dst, pcm, audio.TARGET_RATE)
    return Brought(converted=describe(fmt))


def describe(fmt: audio.WavFormat) -> str:
    """`16 kHz stereo`, `48 kHz mono 32-bit float`: the format a WAV came in."""
    channels = {1: "mono", 2: "stereo"}.get(fmt.channels, f"{fmt.channels} channels")
    sample = " float" if fmt.is_float else ("" if fmt.bits == 16 else f" {fmt.bits}-bit")
    return f"{fmt.sample_rate / 1000:g} kHz {channels}{sample}"


def extra_wavs(folder: Path, turns: int) -> list[str]:
    """WAVs in `folder` that are no turn's `turn_NNN.wav` (a variant take, a turn past the end)."""
    if not folder.is_dir():
        return []
    wanted = {turn_wav(i) for i in range(turns)}
    return sorted(p.name for p in folder.iterdir() if p.suffix.lower() == ".wav" and p.name not in wanted)
