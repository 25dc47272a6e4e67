"""Acoustic conditions: what the user's audio goes through before the model hears it.

A condition is applied to a turn's clean PCM16 before it is paced in, on our timeline. The user's
speech boundaries (and so every latency) are taken from the clean signal, so figures measured under
two conditions mark the same moments and stay comparable; only what the model hears changes. Every
condition is deterministic for its spec, its seed and the turn (`turn_seed`): a run is reproducible,
and what the model received can be recomputed and checked.

Specs (`parse_condition`), as `--condition` takes them and a run stores them (`Condition.label`):
- `clean`: the benchmark's audio as it is;
- `noise=<SNR dB>[:white|pink|babble]` (default pink): noise made by us at that signal-to-noise ratio
  over the turn's active speech; `babble` mixes other turns of the same benchmark (speech-like, ours);
- `telephony`: a narrowband phone line: 300-3400 Hz, 8 kHz G.711 mu-law round trip;
- `loss=<percent>`: that share of 20 ms frames dropped (silence in their place), seeded.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from .audio import float_to_pcm16, load_pcm16, pcm16_to_float, resample

if TYPE_CHECKING:
    from .benchmark import Benchmark

NoiseKind = Literal["white", "pink", "babble"]
NOISE_KINDS: tuple[NoiseKind, ...] = ("white", "pink", "babble")
DEFAULT_NOISE: NoiseKind = "pink"
FRAME_MS = 20.0  # what `loss` drops: one packet of a realtime audio stream
PHONE_RATE = 8_000
PHONE_BAND_HZ = (300.0, 3400.0)
SNR_RANGE_DB = (-10.0, 60.0)
BABBLE_VOICES = 4  # other turns mixed into babble: enough that no single sentence stands out
_MU = 255.0


class ConditionError(ValueError):
    """A condition spec that cannot be applied; the message names the spec and what is wrong."""


@dataclass(frozen=True)
class Condition:
    kind: Literal["clean", "noise", "telephony", "loss"]
    snr_db: float | None = None
    noise: NoiseKind | None = None
    loss_pct: float | None = None

    @property
    def label(self) -> str:
        """The canonical spec: what a run stores and a leaderboard row is named by."""
        if self.kind == "noise":
            kind = "" if self.noise == DEFAULT_NOISE else f":{self.noise}"
            return f"noise={self.snr_db:g}{kind}"
        if self.kind == "loss":
            return f"loss={self.loss_pct:g}"
        return self.kind

    @property
    def clean(self) -> bool:
        return self.kind == "clean"

    @property
    def needs_babble(self) -> bool:
        """Whether applying it needs other turns' audio (`babble_sources`)."""
        return self.kind == "noise" and self.noise == "babble"

    def apply(self, pcm: np.ndarray | bytes, rate: int, seed: int,
              babble: Sequence[np.ndarray] = ()) -> np.ndarray:
        """The turn's audio as the model hears it under this condition (int16, same rate and length)."""
        clean = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, (bytes, bytearray, memoryview)) else np.asarray(pcm)
        if clean.dtype != np.int16:
            raise ConditionError(f"{self.label}: expects PCM16 audio, got {clean.dtype}")
        if self.kind == "clean" or clean.size == 0:
            return clean.copy()
        rng = np.random.default_rng(seed)
        if self.kind == "noise":
            return _add_noise(clean, rate, self.snr_db or 0.0, self.noise or DEFAULT_NOISE, rng, babble, self.label)
        if self.kind == "telephony":
            return _telephone(clean, rate)
        return _drop_frames(clean, rate, (self.loss_pct or 0.0) / 100.0, rng)


CLEAN = Condition("clean")


def parse_condition(spec: str) -> Condition:
    """A condition from its spec (`clean`, `noise=10`, `noise=5:babble`, `telephony`, `loss=3`);
    ConditionError naming the spec and the fault otherwise."""
    raw = spec.strip().lower()
    name, eq, value = raw.partition("=")
    if name in ("clean", "telephony") and not eq:
        return Condition(name)  # type: ignore[arg-type]  # `name` is one of the two the test above allows
    if name == "noise" and eq:
        level, _, kind = value.partition(":")
        snr = _number(spec, level, "an SNR in dB")
        if not SNR_RANGE_DB[0] <= snr <= SNR_RANGE_DB[1]:
            raise ConditionError(f"condition {spec!r}: SNR {snr:g} dB is outside {SNR_RANGE_DB[0]:g}..{SNR_RANGE_DB[1]:g} dB")
        kind = kind or DEFAULT_NOISE
        if kind not in NOISE_KINDS:
            raise ConditionError(f"condition {spec!r}: noise {kind!r} is not one of {', '.join(NOISE_KINDS)}")
        return Condition("noise", snr_db=snr, noise=kind)
    if name == "loss" and eq:
        pct = _number(spec, value, "a percentage")
        if not 0 < pct < 100:
            raise ConditionError(f"condition {spec!r}: loss must be more than 0 and less than 100 percent")
        return Condition("loss", loss_pct=pct)
    raise ConditionError(f"condition {spec!r}: expected clean, noise=<SNR dB>[:white|pink|babble], "
                         "telephony or loss=<percent>")


def parse_conditions(specs: str | Sequence[str]) -> list[Condition]:
    """A comma-separated list (or several specs), each once, in the order given."""
    items = [s for part in ([specs] if isinstance(specs, str) else specs) for s in part.split(",") if s.strip()]
    if not items:
        raise ConditionError("no condition given (e.g. clean, noise=10, telephony, loss=5)")
    out: list[Condition] = []
    for s in items:
        c = parse_condition(s)
        if c not in out:
            out.append(c)
    return out


def turn_seed(seed: int, condition: Condition, turn_index: int, part: str = "") -> int:
    """The seed one turn's audio is made with: stable across processes and runs (not Python's hash).
    `part`: another clip of the turn (a duplex cue, `cue1`), with its own noise and drops."""
    digest = hashlib.sha256(f"{seed}|{condition.label}|{turn_index}{'|' + part if part else ''}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def heard(clean: bytes, rate: int, condition: Condition, seed: int, turn_index: int, *, part: str = "",
          babble: Callable[[], Sequence[np.ndarray]] = tuple) -> bytes:
    """A turn's clip (PCM16 bytes at `rate`) as the model hears it: the one place the engine (what
    it plays) and the simulator (what it expects to hear) condition a clip, so both make the same
    samples. `babble`: the benchmark's other turns (`babble_voices`), read only when the condition
    needs them."""
    if condition.clean:
        return clean
    voices = babble() if condition.needs_babble else ()
    return condition.apply(clean, rate, turn_seed(seed, condition, turn_index, part), babble=voices).tobytes()


def babble_voices(benchmark: Benchmark, turn_index: int, rate: int) -> list[np.ndarray]:
    """The clean audio of the benchmark's other turns at `rate`, in its order (what babble is made
    of; the same list whichever turns a run plays, so a turn's babble does not depend on `--turns`)."""
    voices = []
    for turn in benchmark.turns:
        path = benchmark.audio_path(turn)
        if turn.turn_index != turn_index and path is not None and path.is_file():
            voices.append(load_pcm16(path, rate, benchmark=benchmark.name, turn=turn.turn_index))
    return voices


def _number(spec: str, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConditionError(f"condition {spec!r}: {text!r} is not {what}") from None
    if not math.isfinite(value):
        raise ConditionError(f"condition {spec!r}: {text!r} is not {what}")
    return value


def speech_rms(x: np.ndarray, rate: int) -> float:
    """RMS over the active part (20 ms frames within 35 dB of the loudest): pauses do not dilute the
    level the SNR is set against, so a turn with a long pause gets the same noise as one without."""
    n = max(1, int(rate * FRAME_MS / 1000))
    frames = x[: len(x) // n * n].reshape(-1, n) if len(x) >= n else x.reshape(1, -1)
    power = (frames.astype(np.float64) ** 2).mean(axis=1)
    if not power.any():
        return 0.0
    active = power[power >= power.max() * 10 ** (-35 / 10)]
    return float(np.sqrt(active.mean()))


def _pink(n: int, rng: np.random.Generator) -> np.ndarray:
    """1/f noise: white noise shaped in the frequency domain (over a power-of-two length, cut to
    `n`: a clip's own length can be a slow FFT size, 10x slower on demo_bench)."""
    m = 1 << max(0, n - 1).bit_length()
    spectrum = np.fft.rfft(rng.standard_normal(m))
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    return np.fft.irfft(spectrum / np.sqrt(f), m)[:n]


def _babble(n: int, voices: Sequence[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Other turns' speech, each from a random point, looped to length and summed."""
    usable = [v for v in voices if len(v)]
    if not usable:
        raise ConditionError("noise …:babble needs the audio of the benchmark's other turns")
    picks = rng.choice(len(usable), size=min(BABBLE_VOICES, len(usable)), replace=False)
    out = np.zeros(n)
    for i in picks:  # (only the voices picked are read as floats: a benchmark's 74 others took 15 ms per audio s)
        v = pcm16_to_float(usable[int(i)]).astype(np.float64)
        start = int(rng.integers(0, len(v)))
        out += np.resize(np.roll(v, -start), n)
    return out


def _add_noise(clean: np.ndarray, rate: int, snr_db: float, kind: NoiseKind, rng: np.random.Generator,
               babble: Sequence[np.ndarray], label: str) -> np.ndarray:
    x = pcm16_to_float(clean).astype(np.float64)
    n = len(x)
    noise = rng.standard_normal(n) if kind == "white" else _pink(n, rng) if kind == "pink" else _babble(n, babble, rng)
    signal, level = speech_rms(x, rate), float(np.sqrt((noise**2).mean()))
    if signal == 0.0 or level == 0.0:
        return clean.copy()  # digital silence has no SNR to keep; nothing is added to it
    noise *= signal / level / 10 ** (snr_db / 20)
    return float_to_pcm16(x + noise)


def _band(x: np.ndarray, rate: int, low: float, high: float) -> np.ndarray:
    """Keep `low`..`high` Hz (a brick-wall mask on the spectrum: a line's band edges, not a studio filter)."""
    spectrum = np.fft.rfft(x)
    freqs = np.fft.rfftfreq(len(x), 1 / rate)
    spectrum[(freqs < low) | (freqs > high)] = 0
    return np.fft.irfft(spectrum, len(x))


def _mu_law(x: np.ndarray) -> np.ndarray:
    """G.711 mu-law, encoded to 8 bits and decoded again: the quantisation a phone call adds."""
    x = np.clip(x, -1.0, 1.0)
    code = np.round(np.sign(x) * np.log1p(_MU * np.abs(x)) / np.log1p(_MU) * 127.0)
    y = code / 127.0
    return np.sign(y) * np.expm1(np.abs(y) * np.log1p(_MU)) / _MU


def _telephone(clean: np.ndarray, rate: int) -> np.ndarray:
    narrow = resample(pcm16_to_float(clean), rate, PHONE_RATE).astype(np.float64)
    line = _mu_law(_band(narrow, PHONE_RATE, *PHONE_BAND_HZ))
    back = resample(line.astype(np.float32), PHONE_RATE, rate).astype(np.float64)
    out = np.zeros(len(clean))
    out[: min(len(out), len(back))] = back[: len(out)]
    return float_to_pcm16(out)


def _drop_frames(clean: np.ndarray, rate: int, share: float, rng: np.random.Generator) -> np.ndarray:
    n = max(1, int(rate * FRAME_MS / 1000))
    out = clean.copy()
    frames = math.ceil(len(out) / n)
    for i in np.flatnonzero(rng.random(frames) < share):
        out[i * n: (i + 1) * n] = 0
    return out
