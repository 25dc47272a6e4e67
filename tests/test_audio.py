"""arena_tui.spine.audio: WAVs of every shape become 24 kHz mono PCM16; bad ones are clear errors.

Test WAVs are generated here (soundfile writes the exotic encodings; headers are patched by hand
for the streamed-size and truncation cases) and compared with an independent decode.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from arena_tui.spine import audio
from arena_tui.spine.audio import AudioError


def _tone(rate: int, seconds: float = 0.5, freq: float = 440.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * math.pi * freq * t)).astype(np.float32)


def _dominant_freq(pcm: np.ndarray, rate: int) -> float:
    spec = np.abs(np.fft.rfft(pcm.astype(np.float64) * np.hanning(len(pcm))))
    return float(np.fft.rfftfreq(len(pcm), 1 / rate)[int(np.argmax(spec))])


def test_shared_wav_with_ffffffff_sizes(shared_data: Path) -> None:
    path = shared_data / "conversation_bench" / "audio" / "turn_000.wav"
    head = path.read_bytes()[:48]
    assert head[4:8] == b"\xff\xff\xff\xff" and head[40:44] == b"\xff\xff\xff\xff"  # the case under test
    pcm = audio.load_pcm16(path)
    assert pcm.dtype == np.int16 and pcm.ndim == 1
    assert len(pcm) == (path.stat().st_size - 44) // 2  # everything after the header, no more, no less
    assert np.array_equal(pcm[:100], np.frombuffer(path.read_bytes()[44:244], dtype="<i2"))
    assert np.shares_memory(audio.load_pcm16(path), pcm)  # decoded once per file version
    assert audio.load_pcm16_bytes(path) is audio.load_pcm16_bytes(path)  # every run shares the one decode
    with pytest.raises(ValueError):
        pcm[0] = 1  # the cached array is shared, so read-only


def test_44k1_stereo_float_is_downmixed_and_resampled(tmp_path: Path) -> None:
    left, right = _tone(44_100, freq=440.0), _tone(44_100, freq=440.0, amp=0.25)
    path = tmp_path / "stereo_float.wav"
    sf.write(path, np.stack([left, right], axis=1), 44_100, subtype="FLOAT")
    frames, fmt = audio.read_wav(path)
    assert (fmt.sample_rate, fmt.channels, fmt.bits, fmt.is_float) == (44_100, 2, 32, True)
    pcm = audio.load_pcm16(path)
    assert abs(len(pcm) - 12_000) <= 2  # 0.5 s at 24 kHz
    assert abs(_dominant_freq(pcm, 24_000) - 440) < 5
    peak = np.abs(pcm[2000:-2000]).max() / 32768
    assert abs(peak - 0.375) < 0.01  # mean of 0.5 and 0.25


@pytest.mark.parametrize("subtype,bits", [("PCM_U8", 8), ("PCM_16", 16), ("PCM_24", 24), ("PCM_32", 32),
                                          ("DOUBLE", 64)])
def test_sample_widths_at_16k(tmp_path: Path, subtype: str, bits: int) -> None:
    src = _tone(16_000, freq=1000.0, amp=0.6)
    path = tmp_path / f"{subtype}.wav"
    sf.write(path, src, 16_000, subtype=subtype)
    frames, fmt = audio.read_wav(path)
    assert fmt.bits == bits and fmt.sample_rate == 16_000
    ref, _ = sf.read(path, dtype="float32")  # independent decoder
    tol = 1 / 64 if bits == 8 else 1e-4
    assert np.allclose(frames[:, 0], ref, atol=tol)
    pcm = audio.load_pcm16(path)
    assert abs(len(pcm) - 12_000) <= 2
    assert abs(_dominant_freq(pcm, 24_000) - 1000) < 5


def test_resample_and_write_round_trip(tmp_path: Path) -> None:
    pcm = audio.float_to_pcm16(_tone(24_000, seconds=1.0))
    down = audio.resample(pcm, 24_000, 16_000)
    assert down.dtype == np.int16 and abs(len(down) - 16_000) <= 1
    assert abs(_dominant_freq(down, 16_000) - 440) < 3
    assert audio.resample(pcm.tobytes(), 24_000, 24_000).tobytes() == pcm.tobytes()
    stereo = np.stack([pcm, -pcm], axis=1)
    out = audio.write_wav(tmp_path / "s.wav", stereo, 24_000, channels=2)
    data, rate = sf.read(out, dtype="int16")
    assert rate == 24_000 and data.shape == (24_000, 2) and np.array_equal(data[:, 1], -pcm)
    with pytest.raises(ValueError):
        audio.write_wav(tmp_path / "bad.wav", pcm[:-1], 24_000, channels=2)


def test_levels() -> None:
    full = audio.float_to_pcm16(_tone(24_000, amp=1.0))
    assert abs(audio.rms_dbfs(full) - (-3.01)) < 0.05
    assert abs(audio.peak_dbfs(full)) < 0.01
    half = audio.float_to_pcm16(_tone(24_000, amp=0.5))
    assert abs(audio.rms_dbfs(half.tobytes()) - (-9.03)) < 0.05
    assert audio.rms_dbfs(np.zeros(1200, dtype=np.int16)) == audio.SILENCE_DBFS
    assert audio.peak_dbfs(b"") == audio.SILENCE_DBFS


def _pcm_wav(samples: np.ndarray, rate: int = 24_000, riff: int | None = None, data: int | None = None) -> bytes:
    body = samples.astype("<i2").tobytes()
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16)
    return (b"RIFF" + struct.pack("<I", riff if riff is not None else 36 + len(body)) + b"WAVE" + fmt
            + b"data" + struct.pack("<I", data if data is not None else len(body)) + body)


def test_streamed_sizes_of_pipe_writers(tmp_path: Path) -> None:
    samples = audio.float_to_pcm16(_tone(24_000, seconds=0.2))
    for riff, data in ((0xFFFFFFFF, 0xFFFFFFFF), (0x7FFFF024, 0x7FFFF000), (0, 0)):
        p = tmp_path / f"s{data}.wav"
        p.write_bytes(_pcm_wav(samples, riff=riff, data=data))
        assert np.array_equal(audio.load_pcm16(p), samples)


def test_corrupt_and_missing_files_name_benchmark_turn_and_path(tmp_path: Path) -> None:
    good = _pcm_wav(audio.float_to_pcm16(_tone(24_000, seconds=0.2)))
    cases = {
        "truncated_data.wav": good[:-1000],  # header declares more than the file holds
        "truncated_header.wav": good[:30],
        "not_a_wav.wav": b"ID3\x03" + b"\x00" * 100,
        "empty.wav": b"",
        "no_samples.wav": _pcm_wav(np.zeros(0, dtype=np.int16)),
    }
    expected = {"truncated_data.wav": "truncated", "truncated_header.wav": "fmt chunk",
                "not_a_wav.wav": "not a WAV file", "empty.wav": "not a WAV file",
                "no_samples.wav": "no audio samples"}
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(AudioError) as err:
            audio.load_pcm16(p, benchmark="demo_bench", turn=4)
        msg = str(err.value)
        assert msg.startswith("demo_bench turn 4: ") and str(p) in msg and expected[name] in msg, msg
        assert err.value.turn == 4 and err.value.path == p
    with pytest.raises(AudioError, match=r"grocery_bench turn 7: .*missing\.wav: audio file not found"):
        audio.load_pcm16(tmp_path / "missing.wav", benchmark="grocery_bench", turn=7)


def test_unsupported_encoding_is_named(tmp_path: Path) -> None:
    p = tmp_path / "alaw.wav"
    sf.write(p, _tone(8000), 8000, subtype="ALAW")
    with pytest.raises(AudioError, match="unsupported encoding: format tag 0x0006"):
        audio.read_wav(p)


def test_cache_sees_a_rewritten_file(tmp_path: Path) -> None:
    p = tmp_path / "x.wav"
    p.write_bytes(_pcm_wav(np.full(2400, 1000, dtype=np.int16)))
    first = audio.load_pcm16(p)
    p.write_bytes(_pcm_wav(np.full(4800, -1000, dtype=np.int16)))
    second = audio.load_pcm16(p)
    assert len(first) == 2400 and len(second) == 4800 and second[0] == -1000


def test_concurrent_first_loads_decode_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs starting together (threads) decode a clip once between them, and share it."""
    import threading
    import time

    path = tmp_path / "clip.wav"
    sf.write(path, _tone(16_000), 16_000, subtype="PCM_16")
    audio.clear_cache()
    decodes = []
    real_read = audio.read_wav
    gate = threading.Event()

    def slow_read(p):  # the first decode is still under way when the others ask
        decodes.append(p)
        gate.wait(5)
        return real_read(p)

    monkeypatch.setattr(audio, "read_wav", slow_read)
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(audio.load_pcm16_bytes(path))) for _ in range(6)]
    for t in threads:
        t.start()
    while not decodes:
        time.sleep(0.01)
    time.sleep(0.2)  # the others have asked meanwhile (a plain lru_cache would be decoding six times now)
    gate.set()
    for t in threads:
        t.join(10)
    assert len(decodes) == 1 and len(results) == 6
    assert all(r is results[0] for r in results)
