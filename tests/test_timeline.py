"""Timeline measurements on known signals, synthetic speech and a real benchmark WAV."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from arena_tui.spine.audio import SILENCE_KEPT_MS, load_pcm16, parse_wav, resample, rms_dbfs
from arena_tui.spine.events import AudioChunk, Interval, parse_event
from arena_tui.spine.speech import SpeechDetector, block_rms_dbfs, measure_turn, merge_intervals, overlap_intervals
from runners.timeline.levels import LevelMeter
from runners.timeline.overlaps import LiveOverlaps
from runners.timeline.recorder import ConversationRecorder
from runners.timeline.user_speech import raw_speech_intervals, speech_intervals

RATE = 24000



def sine(ms: float, freq: float = 440.0, amp: float = 1.0, rate: int = RATE) -> np.ndarray:
    n = round(rate * ms / 1000)
    return np.round(amp * 32767 * np.sin(2 * np.pi * freq * np.arange(n) / rate)).astype(np.int16)


def silence(ms: float, rate: int = RATE) -> np.ndarray:
    return np.zeros(round(rate * ms / 1000), dtype=np.int16)


def feed_in_chunks(det, pcm: np.ndarray, t0: float, sizes=(480, 333, 700, 241)):
    """Feed `pcm` starting at t0 in irregular chunk sizes; return all outputs."""
    out, pos, k = [], 0, 0
    while pos < len(pcm):
        n = sizes[k % len(sizes)]
        out += det.feed(pcm[pos : pos + n], t0 + pos * 1000.0 / RATE)
        pos += n
        k += 1
    return out


def iv(a: float, b: float) -> Interval:
    return Interval(start_ms=a, end_ms=b)


# ------------------------------------------------------------------------------ levels


def test_level_full_scale_sine_silence_square():
    m = LevelMeter("bot")
    (t, rms, peak), = m.feed(sine(50, 1000), 0.0)
    assert t == 0.0
    assert rms == pytest.approx(-3.01, abs=0.02)
    assert peak == pytest.approx(0.0, abs=0.01)
    (_, rms, peak), = m.feed(silence(50), 50.0)
    assert (rms, peak) == (-120.0, -120.0)
    square = np.where(sine(50, 1000) >= 0, 32767, -32767).astype(np.int16)
    (_, rms, peak), = m.feed(square, 100.0)
    assert rms == pytest.approx(0.0, abs=0.01) and peak == pytest.approx(0.0, abs=0.01)
    (_, rms, _), = m.feed(sine(50, 1000, amp=0.5), 150.0)
    assert rms == pytest.approx(-9.03, abs=0.03)


def test_level_blocks_carry_remainders_and_keep_exact_times():
    m = LevelMeter("user", block_ms=50, sample_rate=RATE)
    pcm = sine(1000, 300, amp=0.25)
    out = feed_in_chunks(m, pcm, 1000.0)
    assert [t for t, _, _ in out] == pytest.approx([1000.0 + 50 * k for k in range(20)])
    assert all(r == pytest.approx(-15.05, abs=0.1) for _, r, _ in out)


def test_level_accepts_bytes_and_rejects_odd_bytes():
    m = LevelMeter("user")
    assert len(m.feed(sine(100).tobytes(), 0.0)) == 2
    with pytest.raises(ValueError):
        m.feed(b"\x00\x01\x02", 100.0)


def test_level_gap_completes_partial_block_with_silence():
    m = LevelMeter("bot")
    first = m.feed(sine(70, amp=1.0), 0.0)  # one block + 20 ms pending
    assert len(first) == 1
    later = m.feed(sine(50, amp=1.0), 500.0)  # not contiguous: pending padded, then restart
    assert [t for t, _, _ in later] == pytest.approx([50.0, 500.0])
    # 20 ms of sine + 30 ms of silence: RMS drops by 10*log10(20/50)
    assert later[0][1] == pytest.approx(-3.01 + 10 * np.log10(0.4), abs=0.1)


def test_block_rms_matches_audio_helper():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(RATE) * 3000).astype(np.int16)
    levels = block_rms_dbfs(x, 240)
    assert len(levels) == 100
    for k in (0, 37, 99):
        assert levels[k] == pytest.approx(rms_dbfs(x[k * 240 : (k + 1) * 240]), abs=1e-6)
    assert block_rms_dbfs(silence(20), 240).tolist() == [-120.0, -120.0]


# ------------------------------------------------------------------ streaming detector


def test_detector_onset_and_stop_within_one_block():
    det = SpeechDetector(RATE)
    # timeline starts at 1000 ms; tone from 1234.5 ms to 2001.3 ms (not on the 10 ms grid)
    pre = silence(234.5)
    tone = sine(766.8, 220, amp=0.3)
    pcm = np.concatenate([pre, tone, silence(600)])
    events = feed_in_chunks(det, pcm, 1000.0)
    events += det.flush(1000.0 + len(pcm) * 1000 / RATE)
    kinds = [k for k, _ in events]
    assert kinds == ["start", "stop"]
    true_on = 1000.0 + len(pre) * 1000 / RATE
    true_off = true_on + len(tone) * 1000 / RATE
    assert abs(events[0][1] - true_on) <= 10.0
    assert abs(events[1][1] - true_off) <= 10.0
    assert det.intervals == [iv(events[0][1], events[1][1])]


def test_detector_ignores_short_clicks_and_quiet_audio():
    det = SpeechDetector(RATE)
    pcm = np.concatenate([silence(100), sine(30, amp=0.8), silence(400), sine(500, amp=0.003), silence(400)])
    assert feed_in_chunks(det, pcm, 0.0) == []
    assert det.flush(2000.0) == []


def test_detector_hangover_bridges_short_pauses_only():
    pause_short = np.concatenate([sine(300, amp=0.3), silence(200), sine(300, amp=0.3), silence(500)])
    det = SpeechDetector(RATE)
    ev = feed_in_chunks(det, pause_short, 0.0)
    assert [k for k, _ in ev] == ["start", "stop"]
    pause_long = np.concatenate([sine(300, amp=0.3), silence(450), sine(300, amp=0.3), silence(500)])
    det = SpeechDetector(RATE)
    ev = feed_in_chunks(det, pause_long, 0.0)
    assert [k for k, _ in ev] == ["start", "stop", "start", "stop"]
    assert ev[2][1] == pytest.approx(750.0, abs=10.0)


def test_detector_threshold_is_configurable():
    quiet = np.concatenate([sine(300, amp=0.01), silence(400)])  # about -43 dBFS RMS
    assert feed_in_chunks(SpeechDetector(RATE, threshold_dbfs=-40), quiet, 0.0) == []
    ev = feed_in_chunks(SpeechDetector(RATE, threshold_dbfs=-50), quiet, 0.0)
    assert [k for k, _ in ev] == ["start", "stop"]


def test_detector_gap_between_chunks_is_silence_and_advance_reports_stop():
    det = SpeechDetector(RATE)
    ev = det.feed(sine(200, amp=0.3), 0.0)
    assert ev == [("start", 0.0)]
    assert det.advance(100.0) == []  # still inside what was fed
    assert det.advance(400.0) == []  # 200 ms after the last loud block: within hangover
    assert det.advance(520.0) == [("stop", 200.0)]
    # bot frames resume much later: a new start at the right time
    ev = det.feed(sine(200, amp=0.3), 3000.0)
    assert ev == [("start", 3000.0)]
    # then a gap longer than the hangover before the next frame: stop at the old end, new start
    ev = det.feed(sine(200, amp=0.3), 4000.0)
    assert ev == [("stop", 3200.0), ("start", 4000.0)]
    assert det.flush(4100.0) == [("stop", 4100.0)]
    assert det.intervals == [iv(0, 200), iv(3000, 3200), iv(4000, 4100)]


def test_detector_on_real_user_wav(shared_data):
    pcm = load_pcm16(shared_data / "conversation_bench" / "audio" / "turn_000.wav")
    det = SpeechDetector(RATE)
    ev = feed_in_chunks(det, pcm, 0.0, sizes=(480,))
    ev += det.flush(len(pcm) * 1000 / RATE)
    # the ~580 ms pause is longer than the 300 ms hangover: two stretches of speech
    assert [k for k, _ in ev] == ["start", "stop", "start", "stop"]
    assert 2200 < ev[1][1] < 2500 and 2850 < ev[2][1] < 3100


# ------------------------------------------------------------------ offline intervals


def test_merge_intervals():
    raw = [iv(500, 700), iv(0, 100), iv(150, 300), iv(680, 900)]
    assert merge_intervals(raw, 100) == [iv(0, 300), iv(500, 900)]
    assert merge_intervals(raw, 0) == [iv(0, 100), iv(150, 300), iv(500, 900)]
    assert merge_intervals([], 300) == []


def test_energy_intervals_on_tone_bursts():
    pcm = np.concatenate([silence(300), sine(400, 300, 0.2), silence(200), sine(500, 300, 0.2),
                          silence(700), sine(300, 300, 0.2), silence(300)])
    raw = raw_speech_intervals(pcm, RATE, offset_ms=10_000, method="energy")
    truth = [(10_300, 10_700), (10_900, 11_400), (12_100, 12_400)]
    assert len(raw) == 3
    for got, (a, b) in zip(raw, truth):
        assert abs(got.start_ms - a) <= 40 and abs(got.end_ms - b) <= 40  # block + padding
    merged = speech_intervals(pcm, RATE, offset_ms=10_000, method="energy", min_silence_ms=300)
    assert len(merged) == 2 and merged[0].start_ms == raw[0].start_ms and merged[0].end_ms == raw[1].end_ms
    assert len(speech_intervals(pcm, RATE, method="energy", min_silence_ms=1000)) == 1


def test_energy_threshold_follows_a_noisy_floor():
    rng = np.random.default_rng(7)
    noise = (rng.standard_normal(RATE * 2) * 600).astype(np.int16)  # about -35 dBFS hiss
    pcm = noise.copy()
    burst = sine(500, 300, 0.3)
    pcm[24000 : 24000 + len(burst)] += burst
    got = raw_speech_intervals(pcm, RATE, method="energy")
    assert len(got) == 1 and abs(got[0].start_ms - 1000) <= 40 and abs(got[0].end_ms - 1500) <= 40


def test_silence_has_no_speech():
    for method in ("silero", "energy"):
        assert speech_intervals(silence(1500), RATE, method=method) == []
        assert speech_intervals(np.zeros(0, dtype=np.int16), RATE, method=method) == []


def test_unknown_method_is_an_error():
    with pytest.raises(ValueError, match="unknown speech detection method"):
        speech_intervals(silence(100), RATE, method="webrtc")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def espeak_two_phrases(tmp_path_factory) -> tuple[np.ndarray, float, float]:
    """Two espeak-ng phrases with 1000 ms of silence between them; returns pcm and the gap bounds."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.skip("espeak-ng is not installed (CI installs it)")
    parts = []
    for text in ("Hello, I would like to book a table", "for two people tomorrow evening"):
        wav = subprocess.run([exe, "--stdout", text], check=True, capture_output=True).stdout
        frames, fmt = parse_wav(wav)
        mono = (frames[:, 0] * 32767).astype(np.int16)
        parts.append(resample(mono, fmt.sample_rate, RATE))
    # trim espeak's own leading/trailing silence so the gap is known
    trimmed = []
    for p in parts:
        loud = np.flatnonzero(np.abs(p) > 300)
        trimmed.append(p[loud[0] : loud[-1] + 1])
    gap = silence(1000)
    pcm = np.concatenate([silence(200), trimmed[0], gap, trimmed[1], silence(300)])
    gap_start = (200 + len(trimmed[0]) * 1000 / RATE)
    return pcm, gap_start, gap_start + 1000


@pytest.mark.parametrize("method", ["silero", "energy"])
def test_intervals_on_espeak_speech(espeak_two_phrases, method):
    pcm, gap_a, gap_b = espeak_two_phrases
    two = speech_intervals(pcm, RATE, offset_ms=5000, method=method, min_silence_ms=300)
    assert len(two) == 2, two
    assert abs(two[0].start_ms - 5200) <= 120
    assert abs(two[0].end_ms - (5000 + gap_a)) <= 150
    assert abs(two[1].start_ms - (5000 + gap_b)) <= 150
    one = speech_intervals(pcm, RATE, offset_ms=5000, method=method, min_silence_ms=1200)
    assert len(one) == 1 and one[0].start_ms == two[0].start_ms and one[0].end_ms == two[1].end_ms


@pytest.mark.parametrize("method", ["silero", "energy"])
def test_real_wav_pause_splits_only_with_short_min_silence(shared_data, method):
    wav = shared_data / "conversation_bench" / "audio" / "turn_000.wav"
    pcm = load_pcm16(wav)
    dur = len(pcm) * 1000 / RATE
    long = speech_intervals(pcm, RATE, offset_ms=777, method=method, min_silence_ms=800)
    short = speech_intervals(pcm, RATE, offset_ms=777, method=method, min_silence_ms=300)
    assert len(long) == 1 and len(short) == 2
    assert 777 <= long[0].start_ms < 777 + 200 and 777 + dur - 600 < long[0].end_ms <= 777 + dur
    gap = short[1].start_ms - short[0].end_ms
    assert 300 < gap < 800
    assert 777 + 2200 < short[0].end_ms < 777 + 2600
    # the raw intervals are never fewer than the merged ones, and lie inside them
    raw = raw_speech_intervals(pcm, RATE, offset_ms=777, method=method)
    assert len(raw) >= 2
    assert all(any(m.start_ms <= r.start_ms and r.end_ms <= m.end_ms for m in short) for r in raw)


def test_silero_resamples_any_rate(shared_data):
    pcm24 = load_pcm16(shared_data / "conversation_bench" / "audio" / "turn_000.wav")
    pcm16 = resample(pcm24, RATE, 16000)
    a = speech_intervals(pcm24, RATE, min_silence_ms=300)
    b = speech_intervals(pcm16, 16000, min_silence_ms=300)
    assert len(a) == len(b) == 2
    for x, y in zip(a, b):
        assert abs(x.start_ms - y.start_ms) <= 64 and abs(x.end_ms - y.end_ms) <= 64


# ------------------------------------------------------------------------ measure_turn


def test_measure_turn_normal():
    m = measure_turn(iv(0, 3000), [iv(100, 2800)], 3500.0, [iv(3700, 6000)], 732.0)
    lat = m.latencies
    assert lat.voice_to_voice_ms == pytest.approx(900.0)
    assert lat.pipeline_ttfb_ms == pytest.approx(700.0)  # from user speech end, not the WAV's end
    assert lat.leading_silence_ms == pytest.approx(200.0)
    assert lat.provider_ttfb_ms == 732.0
    assert m.overlaps == [] and m.overlap_ms == 0.0 and m.negative == [] and not m.barge_in


def test_measure_turn_uses_last_user_speech_end_and_first_bot_onset():
    m = measure_turn(iv(0, 4000), [iv(100, 1500), iv(2100, 3600)], 4200.0, [iv(4400, 5000), iv(5600, 7000)], None)
    assert m.latencies.voice_to_voice_ms == pytest.approx(800.0)
    assert m.latencies.provider_ttfb_ms is None


def test_measure_turn_barge_in_keeps_negative_latency():
    m = measure_turn(iv(0, 3000), [iv(100, 2800)], 2400.0, [iv(2500, 4000)], 100.0)
    assert m.latencies.voice_to_voice_ms == pytest.approx(-300.0)
    assert m.latencies.pipeline_ttfb_ms == pytest.approx(-400.0)
    assert m.negative == ["voice_to_voice_ms", "pipeline_ttfb_ms"]
    assert m.barge_in
    assert m.overlaps == [iv(2500, 2800)] and m.overlap_ms == pytest.approx(300.0)


@pytest.mark.parametrize(("bot_start", "counted"), [(2650.0, 150.0), (2750.0, 0.0), (2700.0, 100.0)])
def test_measure_turn_overlap_threshold(bot_start, counted):
    m = measure_turn(iv(0, 3000), [iv(100, 2800)], bot_start - 100, [iv(bot_start, 4000)], None)
    assert m.overlap_ms == pytest.approx(counted)
    assert len(m.overlaps) == (1 if counted else 0)
    # configurable threshold: with 40 ms every one of these counts
    loose = measure_turn(iv(0, 3000), [iv(100, 2800)], bot_start - 100, [iv(bot_start, 4000)], None, min_overlap_ms=40)
    assert loose.overlap_ms == pytest.approx(2800 - bot_start)


def test_measure_turn_several_overlaps_summed():
    user = [iv(0, 1000), iv(1500, 2500)]
    bot = [iv(800, 1550), iv(2300, 3000)]
    m = measure_turn(iv(0, 2500), user, 700.0, bot, None)
    assert m.overlaps == [iv(800, 1000), iv(2300, 2500)]  # 1500-1550 is under 100 ms
    assert m.overlap_ms == pytest.approx(400.0)


def test_overlap_intervals_threshold_inclusive():
    assert overlap_intervals([iv(1500, 2500)], [iv(800, 1600)], 100.0) == [iv(1500, 1600)]
    assert overlap_intervals([iv(1500, 2500)], [iv(800, 1599)], 100.0) == []


def test_measure_turn_missing_pieces_are_none():
    m = measure_turn(iv(0, 3000), [], None, [], None)
    assert m.latencies.model_dump() == {
        "voice_to_voice_ms": None, "pipeline_ttfb_ms": None, "provider_ttfb_ms": None, "leading_silence_ms": None,
        "stt_ms": None, "turn_ms": None, "llm_ms": None, "tts_ms": None}  # (the stages are a cascade's)
    m = measure_turn(iv(0, 3000), [iv(0, 2900)], 3300.0, [], None)
    assert m.latencies.pipeline_ttfb_ms == pytest.approx(400.0)
    m = measure_turn(iv(0, 3000), [], 3300.0, [], None)  # no speech found: from the WAV's end
    assert m.latencies.pipeline_ttfb_ms == pytest.approx(300.0)
    assert m.latencies.voice_to_voice_ms is None and m.latencies.leading_silence_ms is None


# ------------------------------------------------------------------------ recorder


def stereo(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").reshape(-1, 2)


def test_recorder_click_lands_on_the_right_sample_and_channel():
    rec = ConversationRecorder(RATE)
    click = np.array([20000], dtype=np.int16)
    rec.add("user", np.zeros(10, np.int16), 0.0)
    rec.add("bot", click, 1234.0)
    ((start, pcm),) = rec.take_slices(2000.0)
    s = stereo(pcm)
    assert start == 0.0 and len(s) == round(1.234 * RATE) + 1  # up to the last write: no trailing silence
    hits = np.flatnonzero(s[:, 1])
    assert len(hits) == 1 and abs(hits[0] - round(1.234 * RATE)) <= 1
    assert not s[:, 0].any()
    rec.add("user", click, 2500.5)
    ((start, pcm),) = rec.take_slices(3000.0)
    assert start == pytest.approx(2500.5, abs=0.05)
    hits = np.flatnonzero(stereo(pcm)[:, 0])
    assert abs(start * RATE / 1000 + hits[0] - 2.5005 * RATE) <= 1


def test_recorder_slices_join_to_the_whole():
    rng = np.random.default_rng(3)
    writes = []
    t = 0.0
    for k in range(40):
        side = "user" if k % 3 else "bot"
        n = int(rng.integers(100, 3000))
        writes.append((side, rng.integers(-20000, 20000, n).astype(np.int16), t))
        t += float(rng.uniform(5, 200))
    whole_rec = ConversationRecorder(RATE)
    sliced_rec = ConversationRecorder(RATE)
    end_ms = t + 300.0
    cut_points = sorted(rng.uniform(0, end_ms, 12).tolist()) + [end_ms]
    chunks, starts, cut_i = [], [], 0
    for side, pcm, at in writes:
        whole_rec.add(side, pcm, at)
        # slice only behind what has been written so far (the engine slices finished parts)
        while cut_i < len(cut_points) - 1 and cut_points[cut_i] < at:
            for s, c in sliced_rec.take_slices(cut_points[cut_i]):
                starts.append(s)
                chunks.append(c)
            cut_i += 1
        sliced_rec.add(side, pcm, at)
    for cp in cut_points[cut_i:]:
        for s, c in sliced_rec.take_slices(cp):
            starts.append(s)
            chunks.append(c)
    ((_, whole),) = whole_rec.take_slices(end_ms)  # gaps of at most 200 ms: one stretch
    # laid out at their starts (a gap between two slices is silence), the slices are the whole
    joined = np.zeros((len(whole) // 4, 2), np.int16)
    for s, c in zip(starts, chunks):
        at = round(s * RATE / 1000)
        joined[at : at + len(c) // 4] = stereo(c)
    assert joined.tobytes() == whole
    assert all(a < b for a, b in zip(starts, starts[1:]))
    assert sliced_rec.late_samples == 0


def test_recorder_releases_memory_and_counts_late_writes():
    rec = ConversationRecorder(RATE)
    for k in range(100):  # 100 s of audio, sliced every second
        rec.add("user", sine(1000, amp=0.1), k * 1000.0)
        rec.take_slices((k + 1) * 1000.0)
    assert rec.held_frames <= RATE * 2  # never the whole run
    assert rec.take_slices(100_000.0) == []
    rec.add("bot", sine(100), 99_950.0)  # half of it is in the part already taken
    assert rec.late_samples == round(0.05 * RATE)
    ((start, pcm),) = rec.take_slices(100_100.0)
    assert start == 100_000.0 and len(pcm) == round(0.05 * RATE) * 4


def test_recorder_keeps_silence_only_up_to_the_cap():
    """An idle gap is not materialised: a minute of timeline between two writes (a wait at high
    speed) holds SILENCE_KEPT_MS at most, and a longer one is two slices with nothing between."""
    rec = ConversationRecorder(RATE)
    rec.add("user", sine(1000, amp=0.1), 0.0)
    rec.add("bot", sine(500, amp=0.1), 1000.0 + SILENCE_KEPT_MS - 1)  # within the cap: one stretch
    rec.add("bot", sine(500, amp=0.1), 3_600_000.0)  # an hour later
    assert rec.held_frames * 1000 / RATE < 2 * (SILENCE_KEPT_MS + 2000)
    slices = rec.take_slices(4_000_000.0)
    assert [round(s) for s, _ in slices] == [0, 3_600_000]
    assert len(slices[0][1]) // 4 == round((1500 + SILENCE_KEPT_MS - 1) * RATE / 1000)
    assert len(slices[1][1]) // 4 == round(0.5 * RATE)
    # a write that bridges two stretches joins them (and keeps both)
    rec.add("user", sine(100, amp=0.1), 4_000_000.0)
    rec.add("user", sine(100, amp=0.1), 4_000_000.0 + 3 * SILENCE_KEPT_MS)
    rec.add("bot", sine(2 * SILENCE_KEPT_MS, amp=0.1), 4_000_000.0 + SILENCE_KEPT_MS / 2)
    ((start, pcm),) = rec.take_slices(5_000_000.0)
    s = stereo(pcm)
    assert start == 4_000_000.0 and s[: round(0.1 * RATE), 0].any() and s[-round(0.1 * RATE):, 0].any()


def test_recorder_overlapping_writes_mix():
    rec = ConversationRecorder(RATE)
    rec.add("bot", np.full(100, 1000, np.int16), 0.0)
    rec.add("bot", np.full(100, 500, np.int16), 2.0)  # sample 48 on
    rec.add("bot", np.full(10, 32000, np.int16), 0.0)
    rec.add("bot", np.full(10, 32000, np.int16), 0.0)  # clips, does not wrap
    s = stereo(rec.take_slices(10.0)[0][1])[:, 1]
    assert s[5] == 32767 and s[20] == 1000 and s[60] == 1500 and s[120] == 500 and len(s) == 148


def test_recorder_tag_marks_first_bot_audio_after_user_stop():
    rec = ConversationRecorder(RATE, tag=True)
    rec.add("user", silence(500), 0.0)  # idle silence does not arm the tag
    rec.add("bot", silence(20), 400.0)
    assert rec.tags == []
    rec.add("user", sine(1000, 300, 0.3), 500.0)
    rec.add("bot", silence(20), 1200.0)  # barge-in before the user stopped: no tag
    assert rec.tags == []
    rec.add("bot", silence(20), 1800.0)
    rec.add("bot", silence(20), 1820.0)
    assert rec.tags == [pytest.approx(1800.0)]
    rec.mark_user_stop(3000.0)
    rec.add("bot", silence(20), 3100.0)
    assert rec.tags == [pytest.approx(1800.0), pytest.approx(3100.0)]
    s = stereo(rec.take_slices(3200.0)[0][1])
    tag = s[round(1.8 * RATE) : round(1.815 * RATE), 1].astype(np.float64)
    assert 20 * np.log10(np.abs(tag).max() / 32768) == pytest.approx(-12.0, abs=0.2)
    spectrum = np.abs(np.fft.rfft(s[round(1.8 * RATE) : round(1.8 * RATE) + 360, 1]))
    assert np.fft.rfftfreq(360, 1 / RATE)[spectrum.argmax()] == pytest.approx(2000, abs=70)
    assert not s[round(1.82 * RATE) : round(1.84 * RATE), 1].any()  # only the first chunk


def test_recorder_without_tag_leaves_audio_untouched():
    rec = ConversationRecorder(RATE)
    rec.add("user", sine(100), 0.0)
    rec.add("bot", silence(100), 200.0)
    assert rec.tags == [] and not stereo(rec.take_slices(300.0)[0][1])[:, 1].any()


def test_recorder_take_chunk_is_an_audio_event_and_rejects_bad_input():
    rec = ConversationRecorder(RATE)
    rec.add("user", sine(100), 0.0)
    (chunk,) = rec.take_chunks("run1", 100.0, turn_index=0)
    assert isinstance(chunk, AudioChunk) and chunk.channels == 2 and chunk.track == "conversation"
    assert chunk.start_ms == 0.0 and len(chunk.pcm) == round(0.1 * RATE) * 4
    again = parse_event(json.loads(chunk.model_dump_json()))
    assert again == chunk
    assert rec.take_chunks("run1", 100.0) == []
    with pytest.raises(ValueError):
        rec.add("user", sine(10), -5.0)
    with pytest.raises(ValueError):
        rec.add("narrator", sine(10), 5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        rec.add("user", np.zeros(10, np.float32), 5.0)


def test_live_overlaps_report_each_overlap_once_when_certain():
    live = LiveOverlaps(min_ms=100)
    assert live.boundary("user", True, 0) == []
    assert live.boundary("bot", True, 500) == []  # both speaking, end unknown
    found = live.boundary("user", False, 900)
    assert [(o.start_ms, o.end_ms, c) for o, c in found] == [(500, 900, "bot_barge_in")]
    assert live.boundary("bot", False, 1500) == []  # same overlap, not again
    # the user comes back over the bot; the detector reports the bot start late (out of order)
    assert live.boundary("user", True, 2000) == []
    found = live.boundary("bot", True, 1800) + live.boundary("bot", False, 2050)
    assert found == []  # 50 ms: under the minimum
    live.boundary("bot", True, 2100)
    found = live.close(2600)
    assert [(o.start_ms, o.end_ms, c) for o, c in found] == [(2100, 2600, "bot_barge_in")]


def test_live_overlaps_user_over_bot():
    live = LiveOverlaps()
    live.boundary("bot", True, 0)
    live.boundary("user", True, 300)
    found = live.boundary("bot", False, 700)
    assert [(o.start_ms, o.end_ms, c) for o, c in found] == [(300, 700, "user_barge_in")]


def test_live_overlaps_bot_starting_in_the_users_pause_is_the_bot_barging_in():
    """Recorded from the demo's `barge_in` fault: the user's turn is two phrases with a 330 ms
    pause, the bot starts 16 ms before the second phrase. The bot talked over the user, even
    though the overlap itself begins where the user resumed."""
    live = LiveOverlaps()
    found: list = []
    for who, started, t in [("user", True, 7351), ("user", False, 7771), ("bot", True, 8085),
                            ("user", True, 8101), ("user", False, 11011), ("bot", False, 11395)]:
        found += live.boundary(who, started, t)
    assert [(o.start_ms, o.end_ms, c) for o, c in found] == [(8101, 11011, "bot_barge_in")]


def test_live_overlaps_user_coming_in_over_a_bot_span_that_began_first():
    """A bot span already playing when the user's turn begins: every overlap with it is the user's."""
    live = LiveOverlaps()
    found: list = []
    for who, started, t in [("bot", True, 0), ("user", True, 300), ("user", False, 700),
                            ("user", True, 1000), ("bot", False, 1400), ("user", False, 2000)]:
        found += live.boundary(who, started, t)
    assert [(o.start_ms, o.end_ms, c) for o, c in found] == [(300, 700, "user_barge_in"), (1000, 1400, "user_barge_in")]
