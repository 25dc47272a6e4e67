"""Duplex turns piece by piece: the `duplex` field as benchmark data (loader, synthesis), the
rules that read what the bot did from intervals on the timeline, the counting of run figures, the
simulator's yield settings, the paced input placing a cue to the sample, and the bot speech
detector cut where the speaker stopped."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena_tui.compare.duplex import duplex_figures, duplex_line, outcome_text
from arena_tui.run_view import TurnRow, TurnSpec
from arena_tui.screens.turn_detail import flags_text
from arena_tui.spine.benchmark import DuplexCue
from arena_tui.spine.duplex import PlacedCue, agent_interruptions, cue_outcome, outcomes
from arena_tui.spine.events import DuplexOutcome, Interval, TurnResult
from arena_tui.spine.speech import SpeechDetector
from benchmarks.loader import BenchmarkError, load_folder
from benchmarks.registry import DUPLEX_NAME, load_benchmark, missing_audio
from benchmarks.synthesize import synthesize_benchmark
from arena_tui.spine.faults import FaultSpecError, parse_faults
from runners.transports import PacedInput, RunClock

DUPLEX = Path(__file__).resolve().parents[1] / "benchmarks" / "duplex"


def iv(a: float, b: float) -> Interval:
    return Interval(start_ms=a, end_ms=b)


def placed(kind: str, start: float, end: float, index: int = 0) -> PlacedCue:
    cue = DuplexCue(kind=kind, at_ms=0.0, audio_file="audio/x.wav", text="mm-hmm")
    return PlacedCue(index=index, cue=cue, played=iv(start, end + 300), speech=[iv(start, end)])


# ----------------------------------------------------------------------------- the data


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "duplex_copy"
    shutil.copytree(DUPLEX, dest)
    return dest


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "turns.jsonl").read_text().splitlines() if line.strip()]


def _write(folder: Path, rows: list[dict]) -> None:
    (folder / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_duplex_bench_ships_with_every_cue_kind_a_tool_call_and_its_audio() -> None:
    bench = load_benchmark(DUPLEX_NAME)
    assert bench.source == "builtin" and len(bench.turns) == 8
    kinds = [c.kind for t in bench.turns for c in t.duplex]
    assert {k: kinds.count(k) for k in set(kinds)} == {"interruption": 3, "backchannel": 4, "side_speech": 2}
    assert any(t.expected_calls for t in bench.turns) and all(t.golden_text for t in bench.turns)
    assert all(not bench.missing_cues(t) and bench.has_audio(t) for t in bench.turns)
    assert missing_audio(bench) is None
    # the snapshot a run stores carries the cues (a stored run is judged and shown without the folder)
    assert bench.from_snapshot(bench.snapshot()).turn(5).duplex == bench.turn(5).duplex


def test_bad_cues_are_each_one_line_naming_file_turn_and_field(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    rows = _rows(folder)
    rows[0]["duplex"][0]["at_ms"] = -5
    rows[1]["duplex"][0]["kind"] = "laugh"
    rows[2]["duplex"][0]["audio_file"] = "../elsewhere.wav"
    rows[3]["duplex"][0]["text"] = " "
    rows[5]["duplex"][1]["at_ms"] = 10  # before the cue above it
    rows[6]["duplex"][0]["audio_file"] = "audio/turn_006_gone.wav"
    rows[7]["duplex"][0]["at_ms"] = True
    _write(folder, rows)
    with pytest.raises(BenchmarkError) as err:
        load_folder(folder)
    lines = str(err.value).splitlines()
    assert lines[0] == "benchmark duplex_bench: 7 problems"
    expect = [("turn 0", "duplex[0].at_ms", "must be 0 to"), ("turn 1", "duplex[0].kind", ""),
              ("turn 2", "duplex[0].audio_file", "outside the benchmark folder"), ("turn 3", "duplex[0].text", "empty"),
              ("turn 5", "duplex[1].at_ms", "comes before the cue above it"),
              ("turn 6", "duplex[0].audio_file", "WAV missing"), ("turn 7", "duplex[0].at_ms", "valid number")]
    for turn, field, message in expect:
        assert any("turns.jsonl:" in ln and f"{turn}:" in ln and f"field '{field}'" in ln and message in ln
                   for ln in lines), (turn, field, lines)


def test_a_text_only_benchmark_gets_its_cues_synthesised_with_its_turns(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shutil.rmtree(folder / "audio")
    bench = load_folder(folder)  # ships no audio: to synthesise, not BROKEN
    assert "no audio for turn(s) 0, 1, 2" in (missing_audio(bench) or "")

    class Beep:
        name = "beep"

        def speak(self, text: str) -> np.ndarray:
            t = np.arange(2400 + 100 * len(text)) / 24000
            return (8000 * np.sin(2 * np.pi * (300 + 7 * len(text)) * t)).astype(np.int16)

    synthesize_benchmark(bench, Beep(), turns=[5])
    again = load_folder(folder)
    assert again.has_audio(again.turn(5)) and not again.missing_cues(again.turn(5))
    assert (folder / "audio" / "turn_005_cue1.wav").is_file()
    assert missing_audio(again, [5]) is None and missing_audio(again, [4]) is not None


# ----------------------------------------------------------------------------- the rules


def test_yield_latency_is_onset_to_the_end_of_the_bot_speech_it_came_into() -> None:
    bot = [iv(1000, 4200), iv(5600, 9000)]
    o = cue_outcome(placed("interruption", 3000, 4800), bot)
    assert o.bot_speaking and o.yielded and o.yield_ms == pytest.approx(1200) and o.bot_stop_ms == 4200
    assert o.answered  # spoke again 800 ms after the cue ended


def test_a_bot_that_talks_on_neither_yielded_nor_answered() -> None:
    o = cue_outcome(placed("backchannel", 2000, 2400), [iv(1000, 9000), iv(9500, 12000)])
    assert o.bot_speaking and o.yielded is False and o.yield_ms is None and not o.answered
    assert o.bot_stop_ms == 9000  # where that speech did end, 7 s later: no yield


def test_speech_after_the_reply_has_nothing_to_yield_but_can_be_answered() -> None:
    o = cue_outcome(placed("side_speech", 5000, 6000), [iv(1000, 4000), iv(7200, 9000)])
    assert not o.bot_speaking and o.yielded is None and o.answered


def test_the_next_cues_answer_is_not_this_ones() -> None:
    bot = [iv(1000, 3300), iv(5200, 6500), iv(7200, 9000)]
    first, second = outcomes([DuplexCue(kind="side_speech", at_ms=0, audio_file="a.wav", text="x"),
                              DuplexCue(kind="interruption", at_ms=0, audio_file="b.wav", text="y"),
                              DuplexCue(kind="backchannel", at_ms=0, audio_file="c.wav", text="z")],
                             [placed("side_speech", 3000, 3500, 0), placed("interruption", 5000, 5600, 1)], bot)[:2]
    assert first.yielded and not first.answered  # the bot spoke again only after the next cue began
    assert second.yielded is None and second.answered  # silent at its onset, then spoke (over the user)
    third = outcomes([DuplexCue(kind="backchannel", at_ms=0, audio_file="c.wav", text="z")], [], bot)[0]
    assert third.played is None and third.yielded is None and not third.answered


def test_agent_interruptions_are_bot_speech_begun_over_the_user() -> None:
    user = [iv(0, 2000), iv(8000, 9000)]
    assert agent_interruptions(user, [iv(1500, 3000)]) == 1  # 500 ms over the user
    assert agent_interruptions(user, [iv(1950, 3000)]) == 0  # 50 ms: under the overlap floor
    assert agent_interruptions(user, [iv(3000, 8500)]) == 0  # the user came in over the bot
    assert agent_interruptions(user, [iv(1000, 1500), iv(8200, 8800)]) == 2


def test_the_bot_speech_detector_stops_where_the_speaker_was_cut_not_at_audio_fed_ahead() -> None:
    tone = (0.3 * 32767 * np.sin(2 * np.pi * 220 * np.arange(2400) / 24000)).astype("<i2").tobytes()  # 100 ms
    d = SpeechDetector(24000)
    events = d.feed(tone * 5, 0.0)  # 0-500 ms loud
    events += d.feed(bytes(2400), 500.0)  # 500-550 ms a pause between words
    events += d.feed(tone, 550.0)  # the next word, written ahead of its play time
    events += d.cut(540.0)  # the speaker stopped in the pause
    assert events == [("start", 0.0), ("stop", 500.0)]
    d2 = SpeechDetector(24000)
    assert d2.feed(tone * 5, 0.0) + d2.cut(320.0) == [("start", 0.0), ("stop", 320.0)]  # cut mid-word


# ----------------------------------------------------------------------------- figures


def _result(i: int, status: str, duplex: list[DuplexOutcome], agent: int = 0) -> TurnResult:
    return TurnResult(turn_index=i, status=status, user_text="x", duplex=duplex, agent_interruptions=agent)


def test_run_figures_count_only_measured_turns_and_latency_only_when_it_counts() -> None:
    played = iv(0, 1000)
    y = DuplexOutcome(index=0, kind="interruption", played=played, bot_speaking=True, yielded=True, yield_ms=320.0)
    held = DuplexOutcome(index=0, kind="backchannel", played=played, bot_speaking=True, yielded=False)
    stop = DuplexOutcome(index=1, kind="backchannel", played=played, bot_speaking=True, yielded=True, yield_ms=200.0)
    side = DuplexOutcome(index=0, kind="side_speech", played=played, yielded=None, answered=True)
    never = DuplexOutcome(index=0, kind="interruption")  # never played
    results = [_result(0, "ok", [y]), _result(1, "ok", [held, stop], agent=1), _result(2, "ok", [side]),
               _result(3, "ok", [never]), _result(4, "lost_pace", [y]), _result(5, "interrupted", [y])]
    f = duplex_figures(results, with_latency=True)
    assert f.cues == 4 and f.yield_ms == [320.0]
    assert (f.interruptions.passes, f.interruptions.n) == (1, 1)
    assert (f.backchannels.passes, f.backchannels.n) == (1, 2)
    assert (f.side_speech.passes, f.side_speech.n) == (1, 1)
    assert (f.agent_interrupted.passes, f.agent_interrupted.n) == (1, 4)
    assert duplex_figures(results, with_latency=False).yield_ms == []  # a sped-up run: rates only
    line = duplex_line(results, speed=10.0)
    assert line is not None and "yield latency p50 320 / p95 320 ms (n 1) (latency at 10× — not comparable)" in line
    assert "backchannels talked through 1/2" in line and "agent interrupted the user in 1/4 turns" in line
    assert outcome_text(y) == "interruption: stopped after 320 ms"
    assert outcome_text(side) == "side speech: bot not speaking, answered"


def test_the_turn_detail_says_what_the_bot_did_about_each_cue() -> None:
    cue = DuplexCue(kind="backchannel", at_ms=1500, audio_file="a.wav", text="Mm-hmm.")
    held = DuplexOutcome(index=0, kind="backchannel", played=iv(0, 500), bot_speaking=True, yielded=False)
    row = TurnRow(index=0, spec=TurnSpec(turn_index=0, duplex=[cue]), result=_result(0, "ok", [held], agent=2))
    text = flags_text(row, 1.0).plain
    assert "duplex  “Mm-hmm.” 1,500 ms into the reply: backchannel: talked on" in text
    assert "bot started over the user 2×" in text


# ----------------------------------------------------------------------------- simulator and engine


def test_yield_settings_parse_and_print_back() -> None:
    plan = parse_faults("2:yield=800,yield=250,backchannel=ignore,side_speech=ignore")
    assert str(plan) == "2:yield=800,yield=250,backchannel=ignore,side_speech=ignore"
    assert plan.duplex_for(2, 1).yield_after_ms == 800 and plan.duplex_for(3, 1).yield_after_ms == 250
    assert not plan.duplex.reacts("backchannel") and plan.duplex.reacts("interruption")
    assert parse_faults("yield=never").duplex.reacts("interruption") is False
    assert not parse_faults("") and not parse_faults("yield=0") and parse_faults("yield=10")  # 0: the default
    for spec, message in (("yield=soon", "is not a number"), ("side_speech=maybe", "side_speech must be answer or ignore"),
                          ("yield=1,yield=2", "given twice"), ("3:yield", "needs a value")):
        with pytest.raises(FaultSpecError, match=message):
            parse_faults(spec)


async def test_a_cue_starts_where_asked_to_the_sample_inside_a_chunk() -> None:
    inp = PacedInput(RunClock(1.0), sample_rate=24000, chunk_ms=20.0, preroll_ms=0.0)
    inp.start_ms = 0.0
    starts: list[float] = []
    fut = inp.play(b"\x01\x00" * 480, at_ms=47.5, on_start=starts.append)  # 20 ms of audio
    chunks = [inp._take_chunk(t) for t in (0.0, 20.0, 40.0, 60.0)]
    assert chunks[0] == chunks[1] == bytes(960)  # silence before it
    assert starts == [47.5] and chunks[2][: 180 * 2] == bytes(360) and chunks[2][360:362] == b"\x01\x00"
    await asyncio.sleep(0)
    assert fut.done() and fut.result() == Interval(start_ms=47.5, end_ms=67.5)


def test_a_benchmark_that_travels_by_value_takes_its_cues_along(tmp_path: Path) -> None:
    """Runs in worker processes (the monitor's, a campaign's) unpack a snapshot: the cues' WAVs go too."""
    from arena_tui.campaign.snapshot import snapshot

    bench = load_benchmark(DUPLEX_NAME)
    snap = snapshot(bench)
    there = snap.materialize(tmp_path)
    assert there.root is not None and not there.root.is_relative_to(DUPLEX)
    for turn in there.turns:
        assert not there.missing_cues(turn), turn.turn_index
        for cue, mine in zip(turn.duplex, bench.turn(turn.turn_index).duplex):
            assert there.cue_path(cue).read_bytes() == bench.cue_path(mine).read_bytes()
    assert snapshot(there).key == snap.key  # the same content: unpacked once per worker
