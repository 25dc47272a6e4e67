"""Acoustic conditions: specs, and that each does to the audio what it says, reproducibly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arena_tui.spine.audio import TARGET_RATE, load_pcm16
from arena_tui.spine.conditions import (
    CLEAN,
    ConditionError,
    parse_condition,
    parse_conditions,
    speech_rms,
    turn_seed,
)

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo" / "audio"


def _clip(i: int = 0) -> np.ndarray:
    return load_pcm16(DEMO / f"turn_{i:03d}.wav")


def _band_energy(x: np.ndarray, rate: int, low: float, high: float) -> float:
    spectrum = np.abs(np.fft.rfft(x.astype(np.float64))) ** 2
    f = np.fft.rfftfreq(len(x), 1 / rate)
    return float(spectrum[(f >= low) & (f < high)].sum())


@pytest.mark.parametrize("spec,label", [
    ("clean", "clean"), ("noise=10", "noise=10"), ("NOISE=10:pink", "noise=10"), ("noise=5.5:white", "noise=5.5:white"),
    ("noise=0:babble", "noise=0:babble"), ("telephony", "telephony"), ("loss=3", "loss=3"), (" loss=2.50 ", "loss=2.5"),
])
def test_specs_read_back_as_their_canonical_label(spec: str, label: str) -> None:
    assert parse_condition(spec).label == label
    assert parse_condition(label) == parse_condition(spec)


@pytest.mark.parametrize("spec,says", [
    ("noise", "expected clean"), ("noise=loud", "'loud' is not an SNR"), ("noise=nan", "is not an SNR"),
    ("noise=100", "outside"), ("noise=10:brown", "'brown' is not one of"), ("loss=0", "more than 0"),
    ("loss=100", "less than 100"), ("echo", "expected clean"), ("telephony=8", "expected clean"),
])
def test_a_bad_spec_is_named_with_its_fault(spec: str, says: str) -> None:
    with pytest.raises(ConditionError) as e:
        parse_condition(spec)
    assert repr(spec) in str(e.value) and says in str(e.value)


def test_a_list_keeps_order_and_drops_repeats() -> None:
    got = parse_conditions(["clean,telephony", "noise=10:pink", "noise=10", ""])
    assert [c.label for c in got] == ["clean", "telephony", "noise=10"]
    with pytest.raises(ConditionError):
        parse_conditions(" , ")


def test_clean_is_the_audio_itself() -> None:
    x = _clip()
    assert np.array_equal(CLEAN.apply(x, TARGET_RATE, seed=1), x)


@pytest.mark.parametrize("kind", ["white", "pink"])
@pytest.mark.parametrize("snr", [0.0, 10.0, 20.0])
def test_noise_sits_at_the_asked_snr_below_the_speech(kind: str, snr: float) -> None:
    x = _clip()
    y = parse_condition(f"noise={snr:g}:{kind}").apply(x, TARGET_RATE, seed=7)
    assert len(y) == len(x) and y.dtype == np.int16
    noise = y.astype(np.float64) - x.astype(np.float64)
    measured = 20 * np.log10(speech_rms(x.astype(np.float64), TARGET_RATE) / np.sqrt((noise**2).mean()))
    assert abs(measured - snr) < 0.5, measured


def test_pink_noise_leans_to_the_low_frequencies_and_white_does_not() -> None:
    silence_free = np.full(TARGET_RATE * 4, 3000, dtype=np.int16)  # a flat level: the noise is all there is to see
    low, high = (200.0, 1000.0), (5000.0, 5800.0)
    pink = parse_condition("noise=0:pink").apply(silence_free, TARGET_RATE, seed=3).astype(np.float64) - 3000
    white = parse_condition("noise=0:white").apply(silence_free, TARGET_RATE, seed=3).astype(np.float64) - 3000
    assert _band_energy(pink, TARGET_RATE, *low) > 5 * _band_energy(pink, TARGET_RATE, *high)
    assert 0.5 < _band_energy(white, TARGET_RATE, *low) / _band_energy(white, TARGET_RATE, *high) < 2.0


def test_babble_is_made_of_other_turns_and_needs_them() -> None:
    c = parse_condition("noise=5:babble")
    assert c.needs_babble
    with pytest.raises(ConditionError, match="other turns"):
        c.apply(_clip(0), TARGET_RATE, seed=1)
    others = [_clip(i) for i in (1, 2, 3, 4, 5)]
    y = c.apply(_clip(0), TARGET_RATE, seed=1, babble=others)
    noise = y.astype(np.float64) - _clip(0).astype(np.float64)
    speechy = _band_energy(noise, TARGET_RATE, 100, 4000) / _band_energy(noise, TARGET_RATE, 4000, 12000)
    assert speechy > 5  # speech's energy, unlike white noise's, is mostly below 4 kHz


def test_the_same_seed_makes_the_same_audio_and_another_seed_other_audio() -> None:
    x = _clip()
    for spec in ("noise=10", "noise=10:white", "loss=10"):
        c = parse_condition(spec)
        assert np.array_equal(c.apply(x, TARGET_RATE, seed=5), c.apply(x, TARGET_RATE, seed=5))
        assert not np.array_equal(c.apply(x, TARGET_RATE, seed=5), c.apply(x, TARGET_RATE, seed=6))
    c = parse_condition("noise=10")
    assert turn_seed(1, c, 3) == turn_seed(1, c, 3)
    assert len({turn_seed(1, c, 3), turn_seed(1, c, 4), turn_seed(2, c, 3), turn_seed(1, CLEAN, 3)}) == 4


def test_telephony_keeps_the_phone_band_only() -> None:
    x = _clip()
    y = parse_condition("telephony").apply(x, TARGET_RATE, seed=0)
    assert len(y) == len(x)
    total = _band_energy(y, TARGET_RATE, 0, TARGET_RATE / 2)
    assert _band_energy(y, TARGET_RATE, 4000, TARGET_RATE / 2) < 1e-3 * total  # nothing above 8 kHz's Nyquist
    assert _band_energy(y, TARGET_RATE, 0, 250) < 1e-2 * total
    speech = _band_energy(x, TARGET_RATE, 300, 3400), _band_energy(y, TARGET_RATE, 300, 3400)
    assert 0.5 < speech[1] / speech[0] < 2.0  # the voice itself comes through
    assert not np.array_equal(y, x)


def test_loss_silences_about_that_share_of_20ms_frames() -> None:
    x = np.full(TARGET_RATE * 60, 1000, dtype=np.int16)  # a minute of a constant level: a dropped frame is plain to see
    y = parse_condition("loss=10").apply(x, TARGET_RATE, seed=11)
    frames = y.reshape(-1, TARGET_RATE // 50)
    dropped = (frames == 0).all(axis=1)
    assert ((frames == 0) | (frames == 1000)).all() and (frames == 0).any(axis=1).sum() == dropped.sum()
    assert 0.08 < dropped.mean() < 0.12
