"""Playback for real as far as this machine allows: PortAudio's device query, WAV round trips."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from arena_tui.playback import PlaybackError, Player, export_wav, output_device, stereo
from arena_tui.store import AudioClip


def test_device_query_is_real_and_player_says_why_it_cannot_play() -> None:
    import sounddevice as sd

    idx, note = output_device()
    outputs = [d for d in sd.query_devices() if d["max_output_channels"] > 0]
    assert (idx is None) == (not outputs)
    if idx is None:
        assert note == "no audio output device found"
        with pytest.raises(PlaybackError, match="no audio output device"):
            Player().play(np.zeros((2400, 2), np.int16), 24000)
    else:  # a machine with speakers (or a null sink): play 50 ms of silence and stop
        player = Player()
        assert player.play(np.zeros((1200, 2), np.int16), 24000) == note
        assert player.stop() is True
    assert Player().stop() is False  # stopping when nothing plays is harmless


def test_stereo_puts_user_left_bot_right_with_offset() -> None:
    user = np.full(100, 1000, np.int16)
    bot = np.full(50, -2000, np.int16)
    out = stereo(user, bot, bot_offset=80)
    assert out.shape == (130, 2)
    assert (out[:100, 0] == 1000).all() and (out[100:, 0] == 0).all()
    assert (out[:80, 1] == 0).all() and (out[80:, 1] == -2000).all()


def test_a_clip_maps_timeline_time_to_frames_through_its_origin_and_cuts() -> None:
    clip = AudioClip(pcm=np.arange(48000, dtype="<i2").tobytes(), sample_rate=24000, channels=1, start_ms=1000,
                     cuts=((1500.0, 60_000.0),))  # 2 s of audio; after 0.5 s, a minute of silence was left out
    assert clip.frame_at(1250) == 6000 and clip.frame_at(1500) == 12000
    assert clip.frame_at(30_000) == 12000  # inside the cut: where the clip goes on
    assert clip.frame_at(61_750) == 18000 and clip.frame_at(10**9) == 48000 and clip.frame_at(0) == 0


def test_export_wav_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    frames = rng.integers(-3000, 3000, size=(4800, 2), dtype=np.int16)
    path = export_wav(tmp_path / "sub" / "turn.wav", frames, 24000)
    data, rate = sf.read(path, dtype="int16")
    assert rate == 24000 and np.array_equal(data, frames)


def test_export_wav_to_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PlaybackError, match="is a directory"):
        export_wav(tmp_path, np.zeros((10, 1), np.int16), 24000)
