"""WAV in and out, resampling and levels: the one place audio bytes are interpreted.

Benchmark audio is fed to providers as 24 kHz mono PCM16. The shared WAVs come from streamed
TTS output whose RIFF and data sizes are 0xFFFFFFFF, and users bring WAVs of any rate, width
and channel count, so reading is done by a small tolerant RIFF parser (not libsndfile, whose
tolerance varies by version) and everything is normalised here, once, with a proper resampler.
"""

from __future__ import annotations

import io
import math
import os
import struct
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import soxr

from .once import once

TARGET_RATE = 24_000
SILENCE_DBFS = -120.0  # floor for digital silence, so meters never see -inf
#: silence a stored conversation track holds between two stretches of audio; a longer gap keeps
#: this much and the rest is cut (the recorder never materialises it, the reader lists where):
#: every pause a listener would sit through stays true, an idle wait at 50x is not 50x its wall time
SILENCE_KEPT_MS = 10_000.0

_UNKNOWN_SIZES = (0xFFFFFFFF, 0)  # streamed writers leave the size unset or at -1
_STREAMED_MIN = 0x7FFF0000  # espeak-ng/sox on a pipe write ~0x7FFFF000: "as long as it goes"
_FMT_PCM, _FMT_FLOAT, _FMT_EXTENSIBLE = 0x0001, 0x0003, 0xFFFE


class AudioError(Exception):
    """A WAV that cannot be used; names the benchmark, turn and file when known."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 benchmark: str | None = None, turn: int | None = None) -> None:
        self.reason = message
        self.path = Path(path) if path is not None else None
        self.benchmark = benchmark
        self.turn = turn
        where = []
        if benchmark:
            where.append(benchmark)
        if turn is not None:
            where.append(f"turn {turn}")
        prefix = " ".join(where)
        loc = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{prefix + ': ' if prefix else ''}{loc}{message}")


@dataclass(frozen=True)
class WavFormat:
    sample_rate: int
    channels: int
    bits: int
    is_float: bool
    frames: int
    block_align: int = 0  # bytes per frame as the file lays them out

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate if self.sample_rate else 0.0


def _scan(f: BinaryIO, size: int, path: str | os.PathLike[str] | None) -> tuple[WavFormat, int, int]:
    """Walk the RIFF chunks of a WAV of `size` bytes reading only chunk headers: (format, data
    offset, data bytes). One home for the rules, used by full decodes and by header checks.

    Unknown RIFF/data sizes (0xFFFFFFFF, 0, or the ~2 GiB placeholders of pipe writers) mean "to
    the end of the file"; any other declared data size larger than the file is a truncated file.
    """
    head = f.read(12)
    if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64") or head[8:12] != b"WAVE":
        raise AudioError("not a WAV file (no RIFF/WAVE header)", path)
    pos = 12
    fmt: tuple[int, int, int, int, int] | None = None  # tag, channels, rate, block_align, bits
    data_at = data_size = None
    while pos + 8 <= size:
        f.seek(pos)
        hdr = f.read(8)
        cid = hdr[:4]
        (chunk,) = struct.unpack_from("<I", hdr, 4)
        body = pos + 8
        if cid == b"fmt ":
            raw = f.read(min(chunk, 40))
            if chunk < 16 or len(raw) < 16:
                raise AudioError("truncated or malformed fmt chunk", path)
            tag, ch, rate, _, align, bits = struct.unpack_from("<HHIIHH", raw, 0)
            if tag == _FMT_EXTENSIBLE and chunk >= 40 and len(raw) >= 26:
                (tag,) = struct.unpack_from("<H", raw, 24)  # first two bytes of the subformat GUID
            fmt = (tag, ch, rate, align, bits)
        elif cid == b"data":
            remaining = size - body
            if chunk in _UNKNOWN_SIZES or (chunk > remaining and chunk >= _STREAMED_MIN):
                chunk = remaining
            elif chunk > remaining:
                raise AudioError(f"truncated: data chunk declares {chunk} bytes, file holds {remaining}", path)
            data_at, data_size = body, chunk
            break  # data is the last chunk we need; anything after it (LIST, id3) is irrelevant
        if chunk == 0xFFFFFFFF:
            raise AudioError(f"chunk {cid.decode('latin-1')!r} has no size (corrupt header)", path)
        pos = body + chunk + (chunk & 1)
    if fmt is None:
        raise AudioError("no fmt chunk (truncated or corrupt header)", path)
    if data_at is None or data_size is None:
        raise AudioError("no data chunk (truncated or corrupt file)", path)
    tag, ch, rate, align, bits = fmt
    if ch < 1 or rate < 1 or bits < 8:
        raise AudioError(f"bad format: {ch} channels, {rate} Hz, {bits} bits", path)
    width = (bits + 7) // 8
    if not ((tag == _FMT_FLOAT and width in (4, 8)) or (tag == _FMT_PCM and width in (1, 2, 3, 4))):
        kind = {_FMT_PCM: "PCM", _FMT_FLOAT: "float"}.get(tag, f"format tag 0x{tag:04x}")
        raise AudioError(f"unsupported encoding: {kind} with {bits} bits", path)
    align = max(align, width * ch)
    frames = data_size // align
    if frames == 0:
        raise AudioError("no audio samples", path)
    return WavFormat(rate, ch, bits, tag == _FMT_FLOAT, frames, align), data_at, frames * align


def _decode(payload: bytes, fmt: WavFormat) -> np.ndarray:
    """Whole frames of `fmt` as float32 frames x channels in [-1, 1]."""
    width, ch = (fmt.bits + 7) // 8, fmt.channels
    frames = len(payload) // fmt.block_align
    raw = np.frombuffer(payload[: frames * fmt.block_align], dtype=np.uint8).reshape(frames, fmt.block_align)
    raw = np.ascontiguousarray(raw[:, : width * ch]).reshape(frames * ch, width)
    if fmt.is_float:
        samples = np.frombuffer(raw.tobytes(), dtype="<f4" if width == 4 else "<f8").astype(np.float32)
        samples = np.nan_to_num(samples, nan=0.0, posinf=1.0, neginf=-1.0)
    elif width == 1:
        samples = (raw[:, 0].astype(np.float32) - 128.0) / 128.0
    else:
        padded = np.zeros((raw.shape[0], 4), dtype=np.uint8)
        padded[:, 4 - width:] = raw  # left-justify into int32 so the sign bit lands right
        samples = padded.view("<i4")[:, 0].astype(np.float32) / 2147483648.0
    return samples.reshape(frames, ch)


def parse_wav(data: bytes, path: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, WavFormat]:
    """Decode RIFF/WAVE bytes to float32 frames (shape frames x channels) in [-1, 1]."""
    fmt, at, size = _scan(io.BytesIO(data), len(data), path)
    return _decode(data[at:at + size], fmt), fmt


def wav_info(path: str | os.PathLike[str]) -> WavFormat:
    """A WAV's format and length from its header alone (never reads the samples): the check that
    lets a 2-hour file be refused without loading it. Raises AudioError like `read_wav`."""
    try:
        with open(path, "rb") as f:
            return _scan(f, os.fstat(f.fileno()).st_size, path)[0]
    except FileNotFoundError:
        raise AudioError("audio file not found", path) from None
    except OSError as e:
        raise AudioError(f"cannot read: {e.strerror or e}", path) from None


def wav_loudest_dbfs(path: str | os.PathLike[str], block_ms: float = 50.0, chunk_frames: int = 1 << 16) -> float:
    """RMS dBFS of the loudest `block_ms` block (channels mixed), read in chunks so memory stays
    bounded whatever the file's length; SILENCE_DBFS for digital silence."""
    try:
        with open(path, "rb") as f:
            fmt, at, size = _scan(f, os.fstat(f.fileno()).st_size, path)
            block = max(1, int(fmt.sample_rate * block_ms / 1000))
            chunk = max(block, chunk_frames // block * block)
            loudest = 0.0
            f.seek(at)
            left = size
            while left > 0:
                payload = f.read(min(left, chunk * fmt.block_align))
                if not payload:
                    break
                left -= len(payload)
                mono = to_mono(_decode(payload, fmt)).astype(np.float64)
                n = len(mono) // block * block
                blocks = mono[:n].reshape(-1, block) if n else mono.reshape(1, -1)  # a short tail block alone
                loudest = max(loudest, float(np.sqrt(np.mean(np.square(blocks), axis=1)).max()))
    except FileNotFoundError:
        raise AudioError("audio file not found", path) from None
    except OSError as e:
        raise AudioError(f"cannot read: {e.strerror or e}", path) from None
    return max(SILENCE_DBFS, 20 * math.log10(loudest)) if loudest > 0 else SILENCE_DBFS


def read_wav(path: str | os.PathLike[str], *, benchmark: str | None = None,
             turn: int | None = None) -> tuple[np.ndarray, WavFormat]:
    """Read a WAV file as float32 frames x channels; errors name benchmark, turn and path."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise AudioError("audio file not found", path, benchmark, turn) from None
    except OSError as e:
        raise AudioError(f"cannot read: {e.strerror or e}", path, benchmark, turn) from None
    try:
        return parse_wav(data, path)
    except AudioError as e:
        raise AudioError(e.reason, path, benchmark, turn) from None


def float_to_pcm16(samples: np.ndarray) -> np.ndarray:
    return (np.clip(samples, -1.0, 32767 / 32768) * 32768.0).round().astype(np.int16)


def pcm16_to_float(pcm: np.ndarray | bytes) -> np.ndarray:
    arr = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, (bytes, bytearray, memoryview)) else pcm
    return arr.astype(np.float32) / 32768.0


def resample(pcm: np.ndarray | bytes, from_rate: int, to_rate: int) -> np.ndarray:
    """Resample with soxr (VHQ). int16/bytes in -> int16 out; float in -> float32 out.

    2-D input is frames x channels; each channel is resampled together.
    """
    arr = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, (bytes, bytearray, memoryview)) else np.asarray(pcm)
    if from_rate == to_rate:
        return arr.copy()
    if from_rate <= 0 or to_rate <= 0:
        raise ValueError(f"bad sample rates {from_rate} -> {to_rate}")
    if arr.dtype == np.int16:
        out = soxr.resample(arr.astype(np.float32) / 32768.0, from_rate, to_rate, quality="VHQ")
        return float_to_pcm16(out)
    return soxr.resample(arr.astype(np.float32), from_rate, to_rate, quality="VHQ").astype(np.float32)


def to_mono(frames: np.ndarray) -> np.ndarray:
    """Average the channels (a downmix that cannot clip)."""
    return frames if frames.ndim == 1 else frames.mean(axis=1, dtype=np.float32)


@once(maxsize=512)
def _decode_cached(path: str, mtime_ns: int, size: int, rate: int) -> bytes:
    """One decode per file version and rate in the process, shared by every caller (concurrent
    runs of one benchmark decode each clip once, not once each)."""
    frames, fmt = read_wav(path)
    mono = to_mono(frames)
    if fmt.sample_rate != rate:
        mono = soxr.resample(mono, fmt.sample_rate, rate, quality="VHQ")
    return float_to_pcm16(mono).tobytes()


def _pcm16_key(path: str | os.PathLike[str], benchmark: str | None, turn: int | None) -> tuple[str, int, int]:
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise AudioError("audio file not found", p, benchmark, turn) from None
    return str(p.resolve()), st.st_mtime_ns, st.st_size


def load_pcm16_bytes(path: str | os.PathLike[str], rate: int = TARGET_RATE, *, benchmark: str | None = None,
                     turn: int | None = None) -> bytes:
    """A WAV as mono PCM16 bytes at `rate` (default 24 kHz), decoded once per file version (shared)."""
    key = _pcm16_key(path, benchmark, turn)
    try:
        return _decode_cached(*key, rate)
    except AudioError as e:
        raise AudioError(e.reason, Path(path), benchmark, turn) from None


def load_pcm16(path: str | os.PathLike[str], rate: int = TARGET_RATE, *, benchmark: str | None = None,
               turn: int | None = None) -> np.ndarray:
    """A WAV as mono int16 at `rate` (default 24 kHz): a read-only view of the shared decode."""
    return np.frombuffer(load_pcm16_bytes(path, rate, benchmark=benchmark, turn=turn), dtype=np.int16)


def clear_cache() -> None:
    _decode_cached.cache_clear()


def write_wav(path: str | os.PathLike[str], pcm: np.ndarray | bytes, sample_rate: int, channels: int = 1) -> Path:
    """Write PCM16 (int16 array, frames x channels or interleaved, or raw bytes) as a standard WAV.

    Float arrays are converted to PCM16. Written atomically so a reader never sees half a file.
    """
    arr = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, (bytes, bytearray, memoryview)) else np.asarray(pcm)
    if arr.dtype != np.int16:
        arr = float_to_pcm16(arr.astype(np.float32))
    if arr.ndim == 2:
        if arr.shape[1] != channels:
            raise ValueError(f"array has {arr.shape[1]} channels, expected {channels}")
    elif arr.size % channels:
        raise ValueError(f"{arr.size} samples do not divide into {channels} channels")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(arr.astype("<i2").tobytes())
    os.replace(tmp, path)
    return path


def _as_float(block: np.ndarray | bytes) -> np.ndarray:
    if isinstance(block, (bytes, bytearray, memoryview)):
        return pcm16_to_float(block)
    arr = np.asarray(block)
    return pcm16_to_float(arr) if arr.dtype == np.int16 else arr.astype(np.float32)


def rms_dbfs(block: np.ndarray | bytes) -> float:
    """RMS level in dBFS (full-scale sine = -3 dBFS); SILENCE_DBFS for silence or an empty block."""
    x = _as_float(block)
    if x.size == 0:
        return SILENCE_DBFS
    rms = math.sqrt(float(np.mean(np.square(x, dtype=np.float64))))
    return max(SILENCE_DBFS, 20 * math.log10(rms)) if rms > 0 else SILENCE_DBFS


def peak_dbfs(block: np.ndarray | bytes) -> float:
    """Peak absolute sample in dBFS; SILENCE_DBFS for silence or an empty block."""
    x = _as_float(block)
    if x.size == 0:
        return SILENCE_DBFS
    peak = float(np.max(np.abs(x)))
    return max(SILENCE_DBFS, 20 * math.log10(peak)) if peak > 0 else SILENCE_DBFS


def duration_ms(pcm: np.ndarray | bytes, sample_rate: int = TARGET_RATE, channels: int = 1) -> float:
    n = len(pcm) // 2 if isinstance(pcm, (bytes, bytearray, memoryview)) else np.asarray(pcm).size
    return 1000.0 * n / channels / sample_rate
