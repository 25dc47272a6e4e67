"""Human speakers: `--speaker tts|NAME|all` on `run` and `campaign`.

A copy of demo_bench gets two human speakers (`real_audio/person1/`, `real_audio/person2/`),
each turn's WAV the TTS one with its own lead-in of silence, so what the simulator heard and
what the run stored tell whose audio was played. Runs are real engine runs against the
simulator on 127.0.0.1, recorded by the real store; the leaderboard reads them back.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.campaign.spec import CampaignSpec, build_spec, cell_parts
from arena_tui.cli import main
from arena_tui.compare.stored import StoredRun
from arena_tui.orchestration.orchestrator import preflight, run_campaign
from arena_tui.spine.bus import EventBus
from arena_tui.spine.source import variant_labels
from arena_tui.store import Store
from benchmarks.loader import BenchmarkError
from benchmarks.registry import load_benchmark, open_benchmark, speakers

from .spoken import LEAD_MS, make_spoken, tts_ms


@pytest.fixture
def spoken(tmp_path: Path) -> Path:
    """demo_bench with two human speakers' recordings beside its TTS audio."""
    return make_spoken(tmp_path / "spoken_bench")


def test_loader_picks_the_speakers_recordings_and_lists_speakers(spoken: Path) -> None:
    assert speakers(spoken) == ["tts", "person1", "person2"]
    tts = load_benchmark(spoken, speaker="tts")
    p1 = load_benchmark(spoken, speaker="person1")
    t3 = p1.turn(3)
    assert p1.audio_path(t3) == spoken / "real_audio" / "person1" / "turn_003.wav"
    assert p1.audio_source[3] == "human:person1" and tts.audio_source[3] != "human:person1"
    assert tts.audio_path(tts.turn(3)) == spoken / "audio" / "turn_003.wav"
    # a speaker with no recordings at all: one line naming it and who is there
    with pytest.raises(BenchmarkError) as e:
        load_benchmark(spoken, speaker="person9")
    assert len(e.value.problems) == 1
    assert "no recordings by speaker 'person9'" in str(e.value) and "speakers here: tts, person1, person2" in str(e.value)
    # one recording missing: that turn is named (TTS never stands in for a human)
    (spoken / "real_audio" / "person2" / "turn_004.wav").unlink()
    with pytest.raises(BenchmarkError) as e:
        load_benchmark(spoken, speaker="person2")
    assert [p.turn for p in e.value.problems] == [4] and "real_audio/person2/turn_004.wav" in str(e.value)


def test_hub_layout_tts_never_falls_back_to_a_human(tmp_path: Path) -> None:
    """A Hub snapshot whose rows are human recordings only: `--speaker tts` takes the TTS WAV
    (audio/turn_NNN.wav) or reports it missing; it never plays person1 in its place."""
    src = open_benchmark("demo_bench")
    hub = tmp_path / "hub_bench"
    (hub / "real_audio" / "person1").mkdir(parents=True)
    shutil.copy(src.root / "system_prompt.txt", hub)
    shutil.copy(src.root / "tools.json", hub)
    rows = []
    for t in src.turns[:2]:
        name = f"turn_{t.turn_index:03d}.wav"
        shutil.copy(src.audio_path(t), hub / "real_audio" / "person1" / name)
        call = [c.model_dump() for c in t.expected_calls]
        rows.append({"file_name": f"real_audio/person1/{name}", "speaker": "person1", "turn_id": t.turn_index,
                     "input_text": t.input, "golden_text": t.golden_text,
                     "required_function_call": json.dumps(call[0] if len(call) == 1 else (call or None)),
                     "function_call_response": json.dumps(t.expected_responses[0] if t.expected_responses else None),
                     "categories": ",".join(t.categories)})
    (hub / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert speakers(hub) == ["tts", "person1"]
    assert load_benchmark(hub, speaker="person1").audio_present() == 2
    tts = load_benchmark(hub, speaker="tts")
    assert tts.audio_present() == 0  # no TTS here: missing (synthesize it), not person1's voice


def test_run_speaker_all_makes_one_run_per_speaker(spoken: Path, tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "run", str(spoken), "--model", "sim", "--speed", "20", "--turns", "1",
                 "--no-greeting", "--headless", "--judge", "none", "--speaker", "all"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, out
    assert out.startswith("run ")  # the headline first, as every headless run
    assert "--speaker all: 3 run(s), one per speaker: tts, person1, person2" in captured.err
    assert "(speech: person1)" in out and "(speech: person2)" in out

    async def check() -> None:
        async with await Store.open(db) as store:
            runs = {r.config.get("speaker", "tts"): r for r in await store.list_runs()}
            assert sorted(runs) == ["person1", "person2", "tts"]
            base = tts_ms(spoken, 1)
            for speaker, run in runs.items():
                assert run.status == "completed"
                played = next(r for r in await store.turn_results(run.run_id) if r.turn_index == 1)
                assert played.status == "ok"
                heard = played.user_audio.end_ms - played.user_audio.start_ms
                # the WAV that was played is that speaker's: its own lead-in before the same words
                assert heard == pytest.approx(base + LEAD_MS.get(speaker, 0), abs=25), speaker
                assert played.user_speech[0].start_ms - played.user_audio.start_ms >= LEAD_MS.get(speaker, 0) - 25
                # stored and labelled: the leaderboard keeps TTS and each human speaker apart
                group = StoredRun(run, {}, ()).group
                assert ("speech: " + speaker in group) == (speaker != "tts"), group

    asyncio.run(check())


def test_run_refuses_a_speaker_the_model_cannot_take(spoken: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", str(spoken), "--model", "gpt-4.1", "--fake", "--headless",
                 "--speaker", "person1", "--judge", "none"])
    err = capsys.readouterr().err
    assert code == 2 and "--speaker person1 needs an audio model" in err, err
    monkeypatch.setattr("arena_tui.commands.run._on_a_terminal", lambda: True)  # the monitor would open
    code = main(["--db", str(tmp_path / "x.db"), "run", str(spoken), "--model", "sim", "--speaker", "all"])
    err = capsys.readouterr().err
    assert code == 2 and "--speaker all makes one run per speaker: add --headless" in err


def test_variant_labels() -> None:
    assert variant_labels({}) == () and variant_labels({"speaker": "tts"}) == ()
    assert variant_labels({"speaker": "person1", "disable_vad": True}) == ("speech: person1", "manual commit")


async def test_campaign_speaker_all_runs_a_cell_per_speaker(spoken: Path, tmp_path: Path) -> None:
    spec = build_spec({}, {"benchmarks": str(spoken), "models": "sim", "speakers": "tts,person1", "speed": 10.0,
                           "turns": "1", "greeting": False, "workers": 1, "judge": "none"})
    assert [c.benchmark for c in spec.cells()] == [str(spoken), f"{spoken}@person1"]
    assert cell_parts(f"{spoken}@person1") == (str(spoken), "person1")
    assert preflight(spec, None).problems == {}
    bad = build_spec({}, {"benchmarks": str(spoken), "models": "sim", "speakers": "person9"})
    assert any("no recordings by speaker 'person9'" in p for ps in preflight(bad, None).problems.values() for p in ps)
    store = await Store.open(tmp_path / "arena.db")
    bus = EventBus()
    recording = store.start_recording(bus)
    result = await run_campaign(store, bus, spec, notice=lambda _line: None)
    bus.close()
    await recording
    assert len(result.complete) == 2 and not result.incomplete
    by_speaker = {}
    for row in await records.cells(store, result.campaign_id):
        run = await store.get_run(row.run_id)
        by_speaker[cell_parts(row.cell.benchmark)[1]] = run
    assert {s: r.config.get("speaker", "tts") for s, r in by_speaker.items()} == {"tts": "tts", "person1": "person1"}
    t1 = next(r for r in await store.turn_results(by_speaker["person1"].run_id) if r.turn_index == 1)
    assert t1.user_audio.end_ms - t1.user_audio.start_ms == pytest.approx(tts_ms(spoken, 1) + LEAD_MS["person1"], abs=25)
    await store.close()


def test_campaign_flag_speaker_all_resolves_from_the_benchmarks(spoken: Path) -> None:
    import argparse

    from arena_tui.commands.campaign import spec_from_args

    args = argparse.Namespace(spec=None, bench=str(spoken), model="sim", repeats=None, concurrency=None, judge=None,
                              speed=None, turns=None, fake=None, greeting=None, executor=None, ray_address=None,
                              provider_cap=None, workers=None, speaker="all", data=None)
    spec = spec_from_args(args)
    assert spec.speakers == ("tts", "person1", "person2")
    stored = json.loads(json.dumps(spec.to_json()))  # as the campaigns table keeps it
    assert stored["speakers"] == ["tts", "person1", "person2"]
    assert CampaignSpec.from_json(stored) == spec
    plain = spec_from_args(argparse.Namespace(**{**vars(args), "speaker": None}))
    assert "speakers" not in plain.to_json()  # a spec without speakers is the JSON it always was


def test_campaign_cli_speaker_all_and_disable_vad_are_stored_with_each_run(spoken: Path, tmp_path: Path, capsys) -> None:
    """`campaign run --speaker all --disable-vad`: a cell per speaker the benchmark has, each run
    with its speaker's audio and the server VAD off, both in its stored config, and `show` says so."""
    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "campaign", "run", "--bench", str(spoken), "--model", "sim", "--speed", "10",
                 "--turns", "1", "--no-greeting", "--judge", "none", "--workers", "1", "--speaker", "all",
                 "--disable-vad"])
    out = capsys.readouterr().out
    assert code == 0, out

    async def check() -> str:
        async with await Store.open(db) as store:
            ((cid, _, spec),) = await records.list_campaigns(store)
            assert spec.speakers == ("tts", "person1", "person2") and spec.disable_vad
            runs = {}
            for row in await records.cells(store, cid):
                run = await store.get_run(row.run_id)
                runs[cell_parts(row.cell.benchmark)[1]] = run
                played = next(r for r in await store.turn_results(run.run_id) if r.turn_index == 1)
                assert played.status == "ok"
                heard = played.user_audio.end_ms - played.user_audio.start_ms
                assert heard == pytest.approx(tts_ms(spoken, 1) + LEAD_MS.get(run.config.get("speaker", "tts"), 0), abs=25)
            assert {s: (r.config.get("speaker", "tts"), r.config.get("disable_vad")) for s, r in runs.items()} == {
                "tts": ("tts", True), "person1": ("person1", True), "person2": ("person2", True)}
            assert {StoredRun(r, {}, ()).group for r in runs.values()} == {
                "sim [simulator, not judged, manual commit]", "sim [simulator, not judged, speech: person1, manual commit]",
                "sim [simulator, not judged, speech: person2, manual commit]"}
            return cid

    cid = asyncio.run(check())
    assert main(["--db", str(db), "campaign", "show", cid]) == 0
    assert "speed 10×, manual commit, executor local" in capsys.readouterr().out
