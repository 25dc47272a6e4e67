"""A turn's stored audio, played on the local speakers or written to a WAV when there are none.

PortAudio is optional at runtime (a headless box may lack the library or any output
device); every entry point reports that as a reason string instead of raising, so the UI
can offer the WAV export instead. `sd.play` is non-blocking, so the UI never waits.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from .spine.audio import resample, write_wav
from .spine.events import TurnResult

Which = Literal["user", "bot", "both"]


class Clip(Protocol):
    """A stored take as playback reads it (`store.AudioClip` is one): PCM16 little-endian samples,
    interleaved when stereo, and where a time on the run's timeline falls in them."""

    @property
    def pcm(self) -> bytes: ...

    @property
    def sample_rate(self) -> int: ...

    @property
    def channels(self) -> int: ...

    def frame_at(self, t_ms: float) -> int: ...


class AudioSource(Protocol):
    """What playback reads of the run database (`store.Reader` is one; playback sits below the store)."""

    async def audio(self, run_id: str, turn_index: int | None, track: Literal["user", "bot"]) -> Clip | None: ...

    async def conversation_audio(self, run_id: str) -> Clip | None: ...


class PlaybackError(Exception):
    """Playback is impossible here (no PortAudio, no output device, device refused)."""


def _sd() -> Any:
    try:
        import sounddevice as sd  # deferred: PortAudio may be missing: playback then says so, the app still runs
    except OSError as e:  # the PortAudio shared library is missing
        raise PlaybackError(f"audio playback unavailable: {e} (install libportaudio2)") from None
    return sd


def output_device() -> tuple[int | None, str]:
    """(device index, name) of the default output, or (None, why there is none), queried for real."""
    try:
        sd = _sd()
        devices = sd.query_devices()
    except PlaybackError as e:
        return None, str(e)
    except Exception as e:  # PortAudio init failure
        return None, f"audio playback unavailable: {e}"
    outputs = [i for i, d in enumerate(devices) if d.get("max_output_channels", 0) > 0]
    if not outputs:
        return None, "no audio output device found"
    default = sd.default.device[1]
    idx = default if isinstance(default, int) and default in outputs else outputs[0]
    return idx, str(devices[idx]["name"])


def clip_frames(clip: Clip) -> np.ndarray:
    """A clip's PCM as int16 frames x channels."""
    arr = np.frombuffer(clip.pcm, dtype="<i2")
    ch = max(clip.channels or 1, 1)
    return arr[: arr.size - arr.size % ch].reshape(-1, ch)


def resample_frames(frames: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    if from_rate == to_rate:
        return frames
    out = resample(frames if frames.shape[1] > 1 else frames[:, 0], from_rate, to_rate)
    return out.reshape(-1, frames.shape[1])


def stereo(user: np.ndarray | None, bot: np.ndarray | None, bot_offset: int = 0) -> np.ndarray:
    """Left = user, right = bot (as the conversation recordings), bot shifted by `bot_offset` frames."""
    u = np.zeros(0, np.int16) if user is None else user.reshape(-1)
    b = np.zeros(0, np.int16) if bot is None else bot.reshape(-1)
    off = max(bot_offset, 0)
    n = max(len(u), off + len(b))
    out = np.zeros((n, 2), np.int16)
    out[: len(u), 0] = u
    out[off : off + len(b), 1] = b
    return out


def export_wav(path: str | os.PathLike[str], frames: np.ndarray, sample_rate: int) -> Path:
    """Write frames (int16, frames x channels) to `path`; parent folders are created."""
    path = Path(path).expanduser()
    if path.exists() and path.is_dir():
        raise PlaybackError(f"{path} is a directory; give a file name ending in .wav")
    try:
        return write_wav(path, np.ascontiguousarray(frames), sample_rate, channels=frames.shape[1])
    except OSError as e:
        raise PlaybackError(f"cannot write {path}: {e.strerror or e}") from None


class NoAudio(Exception):
    """Nothing stored for this turn/track (the message says which)."""


async def turn_audio(
    store: AudioSource,
    run_id: str,
    turn: int,
    which: Which,
    span_ms: tuple[float, float] | None = None,
    result: TurnResult | None = None,
) -> tuple[np.ndarray, int]:
    """The stored audio of one turn as int16 frames x channels: user, bot, or both (L user, R bot).

    Read from the store for the play and export dialogs; both = the conversation track's slice
    of the turn (`span_ms`: its start and end on the run's timeline), else the turn's own user
    and bot takes laid side by side (offset by `result`'s timings)."""
    label = "greeting" if turn == -1 else f"turn {turn}"
    if which in ("user", "bot"):
        clip = await store.audio(run_id, turn, which)
        if clip is None or not clip.pcm:
            raise NoAudio(f"no {which} audio stored for {label}")
        return clip_frames(clip), clip.sample_rate
    conv = await store.conversation_audio(run_id)
    if conv is not None and conv.pcm and span_ms is not None:
        frames = clip_frames(conv)
        a = conv.frame_at(span_ms[0])  # the clip's own origin and cuts (silence it did not keep)
        part = frames[a : max(a, conv.frame_at(span_ms[1]))]
        if len(part):
            return (part if part.shape[1] == 2 else stereo(part[:, 0], None)), conv.sample_rate
    user = await store.audio(run_id, turn, "user")
    bot = await store.audio(run_id, turn, "bot")
    first = user if user is not None else bot  # its rate is the pair's
    if first is None or ((user is None or not user.pcm) and (bot is None or not bot.pcm)):
        raise NoAudio(f"no audio stored for {label}")
    rate = first.sample_rate
    u = clip_frames(user) if user is not None and user.pcm else None
    b = resample_frames(clip_frames(bot), bot.sample_rate, rate) if bot is not None and bot.pcm else None
    offset = 0
    res = result
    if res is not None and res.user_audio and res.bot_speech:
        offset = int((res.bot_speech[0].start_ms - res.user_audio.start_ms) * rate / 1000)
    return stereo(None if u is None else u[:, 0], None if b is None else b[:, 0], offset), rate


class Player:
    """One playback at a time; `play` returns at once (PortAudio plays from its own thread)."""

    def __init__(self) -> None:
        self.playing = False

    def play(self, frames: np.ndarray, sample_rate: int) -> str:
        idx, name = output_device()
        if idx is None:
            raise PlaybackError(name)
        sd = _sd()
        try:
            sd.play(frames, sample_rate, device=idx, blocking=False)
        except Exception as e:
            raise PlaybackError(f"cannot play on {name}: {e}") from None
        self.playing = True
        return name

    def stop(self) -> bool:
        """Stop what is playing; False when nothing was."""
        was = self.playing
        self.playing = False
        if was:
            try:
                _sd().stop()
            except Exception:
                pass
        return was
