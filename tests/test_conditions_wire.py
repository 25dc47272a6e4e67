"""Acoustic conditions in a run: the audio the model received is the conditioned audio (checked at
the simulator's and each fake's wire), the user's speech and so every latency are from the clean
clip, the recorded user track is what was heard, and the run stores its condition and seed.

Real engine runs against the simulator and the providers' fakes on 127.0.0.1, through the real
Pipecat services, recorded by the real store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arena_tui.playback import turn_audio
from arena_tui.spine.audio import load_pcm16_bytes, resample
from arena_tui.spine.conditions import babble_voices, heard, parse_condition
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners.base import get_runner
from runners.simulator import SimulatorServer
from runners.timeline.user_speech import clip_speech
from tests.provider_runs import quiet_loguru, record_run

SPEED = 15.0
RATE = 24000


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


def conditioned(bench, turn_index: int, spec: str, seed: int, rate: int = RATE) -> bytes:
    """A turn's clip as the condition makes it, computed here from the spec alone."""
    turn = bench.turn(turn_index)
    clean = load_pcm16_bytes(bench.audio_path(turn), rate)
    return heard(clean, rate, parse_condition(spec), seed, turn_index,
                 babble=lambda: babble_voices(bench, turn_index, rate))


@pytest.mark.parametrize("spec", ["telephony", "noise=10", "noise=5:babble", "loss=20"])
async def test_the_simulator_receives_the_conditioned_audio_and_latency_keeps_the_clean_speech(
        spec: str, demo, tmp_path: Path) -> None:
    runner = get_runner("sim")
    config = RunSettings(model="sim", speed=SPEED, turns=[0, 1], condition=spec, seed=7,
                         greeting={"enabled": False})
    run = await record_run(demo, config, runner, tmp_path / "arena.db")
    sim = runner.fake
    assert isinstance(sim, SimulatorServer)
    stream = b"".join(s.received.stream() for s in sim.sessions)
    clean_run = {}
    for turn_index in (0, 1):
        clip = conditioned(demo, turn_index, spec, seed=7)
        clean = load_pcm16_bytes(demo.audio_path(demo.turn(turn_index)), RATE)
        assert clip != clean
        # sample for sample what the model got, and not the clean clip
        assert stream.find(clip) >= 0, (spec, turn_index)
        assert stream.find(clean) < 0, (spec, turn_index)
        # the simulator recognised the conditioned audio (it expects the same seeded transform)
        truth = sim.truth[turn_index]
        assert truth.identified_by.startswith("fingerprint"), truth
        result = run.result(turn_index)
        assert result.status == "ok", result
        clean_run[turn_index] = result
    # the recorded user track is what was heard
    async with await Store.open(tmp_path / "arena.db") as store:
        started = (await store.get_run(run.run_id)).config
        assert (started["condition"], started["seed"]) == (parse_condition(spec).label, 7)
        for turn_index in (0, 1):
            # what the play dialog plays (`playback.turn_audio`, the user's take) is the conditioned clip
            frames, rate = await turn_audio(store, run.run_id, turn_index, "user")
            assert rate == RATE and frames.tobytes().find(conditioned(demo, turn_index, spec, seed=7)) >= 0
    # where the user spoke is the clean clip's speech (the same under any condition): placed where it played
    for turn_index, result in clean_run.items():
        offset = result.user_audio.start_ms
        clean = load_pcm16_bytes(demo.audio_path(demo.turn(turn_index)), RATE)
        want = [(i.start_ms + offset, i.end_ms + offset) for i in clip_speech(clean, RATE, "energy")]
        assert [(i.start_ms, i.end_ms) for i in result.user_speech] == pytest.approx(want), turn_index


@pytest.mark.parametrize("alias", ["nova-sonic", "glm-realtime", "gemini-native-audio", "grok", "ultravox"])
async def test_each_fake_receives_the_conditioned_audio(alias: str, demo, tmp_path: Path) -> None:
    """At a provider's own input rate (16 kHz for Nova Sonic, GLM and Gemini), within the resampling
    its client does: the received audio is the conditioned clip, far closer to it than to the clean one."""
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=True, fake_timing="instant", speed=SPEED, turns=[1], condition="noise=0:white",
                         seed=3, greeting={"enabled": False})
    run = await record_run(demo, config, runner, tmp_path / "arena.db")
    assert run.result(1).status == "ok", run.result(1)
    fake = runner.fake
    received = [c.received for c in fake.connections if c.received.spans]
    assert received, alias
    rate = received[0].rate
    got = np.frombuffer(b"".join(r.stream() for r in received), dtype=np.int16).astype(np.float64)
    noisy = np.frombuffer(conditioned(demo, 1, "noise=0:white", seed=3), dtype=np.int16)
    clean = np.frombuffer(load_pcm16_bytes(demo.audio_path(demo.turn(1)), RATE), dtype=np.int16)

    def match(clip: np.ndarray) -> float:
        """How well the clip's first second, at the received rate, lines up with what arrived: the
        normalised correlation where it lines up best (found by FFT). (A client may stop sending
        once the reply starts: Gemini's does, before the clip's trailing silence.)"""
        head = clip[:RATE].astype(np.float32) / 32768
        want = head * 32768.0 if rate == RATE else resample(head, RATE, rate) * 32768.0
        n, size = len(want), 1 << int(np.ceil(np.log2(len(got) + len(want))))
        corr = np.fft.irfft(np.fft.rfft(got, size) * np.conj(np.fft.rfft(want, size)), size)[: max(1, len(got) - n + 1)]
        seg = got[int(np.argmax(corr)):][:n]
        if len(seg) < n:
            return 0.0
        return float(np.dot(seg, want) / (np.linalg.norm(seg) * np.linalg.norm(want) + 1e-9))

    with_noise, without = match(noisy), match(clean)
    assert with_noise > 0.98, (alias, rate, with_noise, without)
    assert without < 0.8, (alias, rate, with_noise, without)


def test_received_audio_keeps_sound_in_place_and_is_bounded(monkeypatch) -> None:
    from runners.fakes import record

    monkeypatch.setattr(record, "KEPT_BYTES", 4000)
    got = record.ReceivedAudio()
    sound = np.arange(1, 501, dtype=np.int16).tobytes()  # 1000 bytes, no zero sample
    got.add(bytes(960), 24000)  # silence: counted, not kept
    got.add(sound)
    got.add(sound)  # right after: one span
    got.add(bytes(40))
    got.add(sound)
    assert got.rate == 24000 and got.total == 960 + 3000 + 40
    assert [(at, len(pcm)) for at, pcm in got.spans] == [(960, 2000), (3000, 1000)]
    assert got.stream() == bytes(960) + sound * 2 + bytes(40) + sound
    for _ in range(3):  # past the bound: counted, not kept
        got.add(sound)
    assert got.kept <= 4000 and got.full and got.total == 4000 + 3000
