"""A reference harness's run folder imported with its latencies: derived from its conversation.wav by
our timeline rules, shown on the leaderboard, and its figures as the reference and the original
eval compute them on the same recording.

The recording is constructed: every user and bot onset, and every 2 kHz tag, is placed to the
sample (`tests/reference_runs.py`), so each figure is known before anything reads it. The
reference (`scripts/analyze_turn_metrics.py`) defines `wav_v2v_ms` = bot speech start − user
speech end, `silent_pad_silero_ms` = bot speech start − tag, overlaps of 100 ms or more; on these
clean inputs its figures are those differences. Ours are the same differences read by the live
run's rules, whose user speech carries a 30 ms pad (`SPEECH_PAD_MS`) on each side: voice-to-voice
reads 30 ms shorter, an overlap with the user's end 30 ms longer, leading silence is identical.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena_tui import cli
from arena_tui.compare.load import load_board
from arena_tui.compare.report import build_report
from arena_tui.interop.conversation import read_conversation
from arena_tui.interop.wav_metrics import derive, find_tags, read_recording
from arena_tui.interop.layout import folder_run_id
from arena_tui.spine.events import EMPTY_RESPONSE, MODEL_ENDED_SESSION_EARLY, TurnResult
from arena_tui.spine.speech import SPEECH_PAD_MS as PAD
from arena_tui.store import Store

from .reference_runs import RATE, Conversation, row, write_run

# greeting; t0; t1 (a tool call; a 200 ms pause inside the user's turn); t2 gets no answer and is
# played twice; t3 answers after it; t4 the bot comes in 200 ms before the user's end; t5 had a
# reconnection; t6 came after the model ended the session (no audio)
CONVERSATION = Conversation(
    38000,
    user=[(2000, 3500), (8500, 8900), (9100, 9500), (15000, 16000), (17500, 18500), (21000, 22000), (27000, 28500),
          (33000, 34000)],
    bot=[(250, 1500), (4480, 6000), (10850, 12500), (23000, 24500), (28300, 30000), (35000, 36000)],
    tags=[100, 4300, 10700, 22800, 28200, 34800],
)  # fmt: skip
PASS = {"turn_taking": True, "tool_use_correct": None, "instruction_following": True, "kb_grounding": True}
BOOK = [{"name": "book", "args": {"day": "saturday"}}]
ROWS = [
    row(0, "We open at nine.", PASS, ttfb=700, latency=4500),
    row(1, "Booked for Saturday.", {**PASS, "tool_use_correct": True}, ttfb=650, latency=5000, calls=BOOK),
    row(2, EMPTY_RESPONSE, {**PASS, "instruction_following": False}, ttfb=None, latency=35000),
    row(3, "Saturday at nine.", PASS, ttfb=800, latency=4000),
    row(4, "Sure, anything else?", {**PASS, "turn_taking": False}, ttfb=500, latency=3500),
    row(5, "Yes.", PASS, ttfb=900, latency=3500, reconnects=1),
    row(6, MODEL_ENDED_SESSION_EARLY, {k: None for k in PASS}),
]
# The reference's figures on this recording, by its definitions, per reply (it numbers replies by
# tag order, so after t2, which has no reply, its figures would land one turn early: we place them
# by the transcript). t4: no user speech ends before the bot starts, so no wav_v2v_ms; t5 skipped.
REFERENCE = {0: {"wav_v2v_ms": 980, "silent_pad_silero_ms": 180, "overlap_ms": 0},
             1: {"wav_v2v_ms": 1350, "silent_pad_silero_ms": 150, "overlap_ms": 0},
             3: {"wav_v2v_ms": 1000, "silent_pad_silero_ms": 200, "overlap_ms": 0},
             4: {"wav_v2v_ms": None, "silent_pad_silero_ms": 100, "overlap_ms": 200}}  # fmt: skip


def results() -> list[TurnResult]:
    status = {EMPTY_RESPONSE: "no_response", MODEL_ENDED_SESSION_EARLY: "ended_early"}
    return [TurnResult(turn_index=r["turn"], status=status.get(r["assistant_text"], "ok"), user_text=r["user_text"],
                       assistant_text=r["assistant_text"], reconnects=r["reconnection_count"]) for r in ROWS]  # fmt: skip


def test_the_tags_are_found_to_the_sample_with_or_without_fades() -> None:
    from arena_tui.spine.speech import tag_tone

    rec = read_recording(CONVERSATION.pcm(), RATE)
    assert [round(t.start_ms, 1) for t in rec.tags] == CONVERSATION.tags
    ours = Conversation(3000).pcm()[:, 1].copy()  # our recorder's tag has no fades
    for at in (200, 1234):
        i = round(at * RATE / 1000)
        ours[i : i + len(tag_tone(RATE))] += tag_tone(RATE)
    assert [round(t.start_ms, 1) for t in find_tags(ours, RATE)] == [200, 1234]


def test_derived_figures_are_the_references_by_our_rules() -> None:
    rec = read_recording(CONVERSATION.pcm(), RATE)
    assert [(g.start_ms, g.end_ms) for g in rec.greeting] == [(250, 1500)]
    assert len(rec.windows) == 5  # t0, t1, t2+t3 (no reply between), t4, t5
    derived = derive(rec, results())
    assert derived.problem is None
    assert derived.skipped == {5: "reconnected during the turn: its timing in the recording is not trusted"}
    assert sorted(derived.measures) == [0, 1, 3, 4]
    for turn, ref in REFERENCE.items():
        _, m, tag = derived.measures[turn]
        lat = m.latencies
        assert lat.leading_silence_ms == ref["silent_pad_silero_ms"], turn  # exactly theirs
        assert m.overlap_ms == (ref["overlap_ms"] + PAD if ref["overlap_ms"] else 0.0), turn
        if ref["wav_v2v_ms"] is not None:
            assert lat.voice_to_voice_ms == ref["wav_v2v_ms"] - PAD, turn
        user_end = {0: 3500, 1: 9500, 3: 22000, 4: 28500}[turn]
        assert lat.pipeline_ttfb_ms == tag - (user_end + PAD), turn  # the reference's pipeline TTFB: tag − user end
    assert derived.measures[4][1].latencies.voice_to_voice_ms == 28300 - (28500 + PAD)  # a barge-in: −230
    assert [(o.start_ms, o.end_ms) for o in derived.measures[4][1].overlaps] == [(28300, 28500 + PAD)]


def test_turns_that_cannot_be_placed_derive_nothing_and_say_why() -> None:
    quiet = Conversation(CONVERSATION.length_ms, CONVERSATION.user, [b for b in CONVERSATION.bot if b[0] != 23000],
                         CONVERSATION.tags)  # t3's reply is not in the recording  # fmt: skip
    derived = derive(read_recording(quiet.pcm(), RATE), results())
    assert derived.measures == {} and "cannot be placed" in (derived.problem or "")


def write_folder(root: Path) -> Path:
    return write_run(root, "wav_bench", "20260111T100000", "gpt-realtime", "0123abcd", ROWS,
                     conversation=CONVERSATION)  # fmt: skip


async def test_an_imported_reference_run_shows_its_latency_on_the_leaderboard(tmp_path: Path, capsys) -> None:
    """`arena-tui import` of a reference folder (no arena-tui field anywhere): speed 1, labelled
    imported, its latencies derived from conversation.wav and said so; the leaderboard row has
    v2v p50/p95, leading silence and overlap; the report writes the original eval's aggregates."""
    folder = write_folder(tmp_path)
    db = tmp_path / "arena.db"
    assert await asyncio.to_thread(cli.main, ["--db", str(db), "import", str(folder)]) == 0
    rid = folder_run_id(folder.name)  # our one id form, derived from the folder's name
    assert f"imported as run {rid}" in capsys.readouterr().out
    async with await Store.open(db) as store:
        run = await store.get_run(rid)
        assert run.speed == 1.0
        imported = run.config["imported"]
        assert imported["harness"] == "reference" and imported["from"] == str(folder)
        assert imported["speed"] == "1 (not recorded: the reference plays its audio in real time)"
        assert imported["latency"] == "derived on import from conversation.wav (4 of 7 turns, our timeline rules)"
        assert imported["derived"]["turns"] == [0, 1, 3, 4] and list(imported["derived"]["skipped"]) == ["5"]
        assert imported["derived"]["greeting_ms"] == [[250.0, 1500.0]] and imported["derived"]["tags"] == 6
        assert imported["judges"] == {"reference:claude-opus-4-5": {
            "judge_name": "claude", "judge_model": "claude-opus-4-5",
            "judge_version": "claude-agent-sdk-v18-kb-visible-vs-tool-only", "judged_at": "2026-01-11T10:00:00Z"}}
        rows = {r.turn_index: r for r in await store.turn_results(rid)}
        assert rows[0].latencies.provider_ttfb_ms == 700 and rows[0].latencies.voice_to_voice_ms == 950
        assert rows[5].latencies.voice_to_voice_ms is None and rows[5].user_audio is None  # not measured
        ends = {ev.turn_index: ev.t_ms for _, ev in await store.events(rid, kinds=["turn_ended"])}
        assert all(ends[t] >= max(s.end_ms for s in rows[t].bot_speech) for t in (0, 1, 3, 4))  # one timeline
        loaded = await load_board(store, ["all"], None)
    row_ = loaded.board.row("gpt-realtime [imported]", "wav_bench")
    assert row_ is not None and row_.latency_excluded == {}
    # voice-to-voice 950, 1320 (tool), 970; t4 is a barge-in (no latency)
    assert (row_.v2v.n, row_.v2v.p50, row_.v2v.p95) == (3, 970.0, pytest.approx(1285.0))
    assert row_.leading_silence.p50 == 165.0  # 100, 150, 180, 200
    assert (row_.overlap.passes, row_.overlap.n, row_.overlap_ms.max) == (1, 4, 230.0)

    async with await Store.open(db) as store:
        _, _, _ = await build_report(store, ["all"], tmp_path / "report")
    agg = json.loads((tmp_path / "report" / "aggregates.json").read_text())["wav_bench"]["gpt-realtime [imported]"]
    assert agg["non_tool_v2vs"] == [950.0, 970.0] and agg["tool_v2vs"] == [1320.0]
    assert agg["silence_pads"] == [180.0, 150.0, 200.0, 100.0]  # the reference's silent_pad_silero_ms, exactly
    assert agg["ttfts"] == [700.0, 650.0, 800.0, 500.0, 900.0]
    # the original eval's turn pass (tool ∧ instruction ∧ KB) and ours (every dimension), each named:
    # t2 fails instruction following, t4 turn taking, t6 has no verdict (counted apart, never a failure)
    assert agg["scores"]["turn_pass"] == {"correct": 5, "total": 6}
    assert agg["arena_tui"]["turn_pass_strict"] == {"correct": 4, "total": 6}


def test_the_recording_is_read_as_written(tmp_path: Path) -> None:
    pcm, rate = read_conversation(write_folder(tmp_path) / "conversation.wav")
    assert rate == RATE and (pcm == CONVERSATION.pcm()).all()


async def test_a_recording_that_does_not_fit_its_transcript_imports_without_latency(tmp_path: Path) -> None:
    quiet = Conversation(CONVERSATION.length_ms, CONVERSATION.user, [b for b in CONVERSATION.bot if b[0] != 23000],
                         CONVERSATION.tags)  # t3's reply is not in the recording  # fmt: skip
    folder = write_run(tmp_path, "wav_bench", "20260111T100000", "gpt-realtime", "0123abcd", ROWS, conversation=quiet)
    async with await Store.open(tmp_path / "arena.db") as store:
        from arena_tui.interop import import_run

        rid = await import_run(store, folder)
        imported = (await store.get_run(rid)).config["imported"]
        assert imported["latency"].startswith("none: conversation.wav shows 4 user turn(s), 4 with a reply, for 5 ")
        assert imported["derived"]["problem"].endswith("the turns cannot be placed, no figure derived")
        assert all(r.latencies.voice_to_voice_ms is None for r in await store.turn_results(rid))
        assert (await store.conversation_audio(rid)) is not None  # the recording itself is kept
