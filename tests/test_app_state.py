"""RunState folds events the same way live and replayed; these are its rules, checked on real recordings."""

from __future__ import annotations

import pytest

from arena_tui.spine.events import (
    GREETING_TURN,
    DimensionScore,
    Judgement,
    Latencies,
    RunEnded,
    TurnEnded,
    TurnResult,
)
from arena_tui.widgets.run_header import STATUS_STYLE, header_text
from arena_tui.run_view import RunState
from arena_tui.widgets.transcript import line_text
from arena_tui.widgets.turn_table import is_failure
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events

RUN_STATE_PATCH = "needs the run_state.py change in the TUI-fixes report (retry boundaries in the transcript fold)"


def test_recorded_run_folds_into_turns_log_and_meters() -> None:
    events = fixture_events()
    state = RunState(events[0].run_id)
    state.apply_all(events)
    assert state.status == "completed" and state.started.simulator
    assert state.turns_done == len(state.started.turn_indices)
    kinds = {ln.kind for ln in state.log}
    assert {"overlap", "retry", "session_rotated", "reconnected", "interruption"} <= kinds
    assert state.rotations == 1 and state.session >= 2
    assert state.any_heuristic
    assert not any(m.speaking for m in state.meters.values())  # everything stopped at the end
    assistant = [ln for ln in state.transcript if ln.role == "assistant"]
    assert assistant and all(ln.final for ln in assistant)


def test_mid_turn_cut_is_live_looking() -> None:
    events = fixture_events()
    turn = next(ev.turn_index for ev in events if ev.kind == "overlap")
    state = RunState(events[0].run_id)
    state.apply_all(cut_mid_turn(events, turn))
    assert state.status == "running" and state.turns[turn].status == "running"
    assert state.overlapping


def test_latest_revision_wins_and_failures_count() -> None:
    state = RunState("r")
    res = TurnResult(turn_index=0, status="ok", user_text="x", latencies=Latencies(voice_to_voice_ms=900))
    state.apply(TurnEnded(run_id="r", t_ms=1, turn_index=0, result=res))
    j1 = Judgement(run_id="r", t_ms=2, turn_index=0, judge="heuristic", heuristic=True,
                   scores={"kb_grounding": DimensionScore(verdict="fail")})
    j2 = j1.model_copy(update={"revision": 2, "scores": {"kb_grounding": DimensionScore(verdict="pass")}})
    state.apply(j1)
    assert state.turns[0].verdict == "fail" and is_failure(state.turns[0])
    state.apply(j2)
    assert state.turns[0].verdict == "pass" and not is_failure(state.turns[0])
    err = Judgement(run_id="r", t_ms=3, turn_index=0, judge="openai:x", revision=3, error="timeout")
    state.apply(err)
    assert state.turns[0].verdict == "pass"  # a judge error does not erase the last good revision
    assert state.pass_rates() == {"kb_grounding": (1, 1)}
    assert state.apply(j1.model_copy(update={"run_id": "other"})) is False


def test_a_retried_reply_and_its_retry_are_separate_lines() -> None:
    """Turn 3 of the recording is cut by a disconnect mid-reply and retried: two answers, not one."""
    events = fixture_events()
    turn = next(ev.turn_index for ev in events if ev.kind == "retry" and ev.reason == "disconnect")
    state = RunState(events[0].run_id)
    state.apply_all(events)
    lines = [ln for ln in state.transcript if ln.turn == turn]
    bot = [ln for ln in lines if ln.role == "assistant"]
    assert len(bot) == 2, [ln.text for ln in bot]
    first, retry = bot
    final = next(ev.result.assistant_text for ev in events if ev.kind == "turn_ended" and ev.turn_index == turn)
    assert retry.text.strip() == final  # the retry's line is exactly the answer that counted
    assert final not in first.text and first.cut == "disconnect"
    rendered = [line_text(ln).plain for ln in lines]
    marker = next(i for i, ln in enumerate(lines) if ln.role == "attempt")
    assert lines.index(first) < marker < lines.index(retry)
    assert "retry 1: disconnect" in rendered[marker]
    assert "cut off" in rendered[lines.index(first)] and "cut off" not in rendered[lines.index(retry)]
    assert "[a2]" in rendered[lines.index(retry)]


def test_a_truncated_reply_is_marked_cut_off_but_kept_whole() -> None:
    events = fixture_events()
    cut = next(ev for ev in events if ev.kind == "interruption" and ev.cause == "bot_truncated")
    state = RunState(events[0].run_id)
    state.apply_all(events)
    bot = [ln for ln in state.transcript if ln.turn == cut.turn_index and ln.role == "assistant"]
    final = next(ev.result.assistant_text for ev in events if ev.kind == "turn_ended" and ev.turn_index == cut.turn_index)
    assert len(bot) == 1 and bot[0].text.strip() == final and bot[0].cut == "truncated"
    assert line_text(bot[0]).plain.endswith("[cut off: truncated]")


def test_greeting_ends_when_its_handshake_does() -> None:
    """The greeting row ends at its own turn_ended (not later, when turn 0 happens to start)."""
    events = fixture_events()
    ended = next(i for i, ev in enumerate(events) if ev.kind == "turn_ended" and ev.turn_index == GREETING_TURN)
    state = RunState(events[0].run_id)
    state.apply_all(events[:ended])
    assert state.turns[GREETING_TURN].status == "running"
    state.apply_all(events[ended : ended + 1])
    g = state.turns[GREETING_TURN]
    assert g.status == "ok" and g.ended_ms == events[ended].t_ms and g.result is not None
    assert 0 not in state.turns or state.turns[0].started_ms is None or state.turns[0].started_ms >= g.ended_ms
    assert all(ln.final for ln in state.transcript if ln.turn == GREETING_TURN)
    assert any(ln.text.startswith("greeting ended: ok") for ln in state.log)
    assert state.turns_done == 0  # the greeting is not a benchmark turn


@pytest.mark.parametrize("width", [60, 80, 100, 150, 200])
def test_header_keeps_status_and_judge_apart_at_every_width(width: int) -> None:
    events = fixture_events()
    for status in (s for s in STATUS_STYLE if s != "loading"):  # loading: a stored run before its events
        for mode in ("live", "replay"):
            state = RunState(events[0].run_id)
            state.apply_all(events)  # heuristic judge, simulator: the longest left part there is
            if status in ("completed", "interrupted", "failed"):
                state.ended = RunEnded(run_id=state.run_id, t_ms=state.last_ms, status=status)
            elif status == "running":
                state.ended = None
            else:  # starting
                state.ended, state.started = None, None
            line = header_text(state, mode, width).plain
            assert len(line) == width, (status, mode, repr(line))
            word = "LOADING" if status == "starting" and mode != "live" else status.upper()
            assert word in line, (status, line)
            after = line[line.index(word) + len(word):]
            assert after.startswith("  ") or not after.strip(), line  # never "COMPLETEDjudge"
            tail = "heuristic" if state.any_heuristic else ""  # "judge: heuristic" where there is room
            # narrow: the judge leaves the header before a label does (the line under the tables says it)
            assert (tail in after or width <= 80) and (mode == "live" or "[replay]" in after), line
            if state.started is not None and width >= 80:
                assert "elapsed " in line and " done" in line, line  # every figure labelled
            if state.started is not None and width >= 80:  # what a user scans for stays in view
                assert " demo_bench " in line and "sim" in line, line
        # the status block sits at the same column whatever the status (no jumping on change)
    cols = set()
    for status in ("running", "completed", "interrupted"):
        state = RunState(events[0].run_id)
        state.apply_all(events)
        state.ended = None if status == "running" else RunEnded(run_id=state.run_id, t_ms=1, status=status)
        line = header_text(state, "live", width).plain
        cols.add(line.index(status.upper()))
    assert len(cols) == 1


def test_the_users_line_sits_at_their_speech_start_before_the_reply_and_tools() -> None:
    """The user's transcript arrives after it is transcribed (often after the reply began); the line
    is stamped at the user's speech start and comes before the bot's reply and the turn's tool calls."""
    events = fixture_events()
    state = RunState(events[0].run_id)
    state.apply_all(events)
    checked = 0
    for turn in state.started.turn_indices:
        lines = [ln for ln in state.transcript if ln.turn == turn and ln.role != "attempt"]
        for attempt in {ln.attempt for ln in lines}:
            mine = [ln for ln in lines if ln.attempt == attempt]
            users = [i for i, ln in enumerate(mine) if ln.role == "user"]
            others = [i for i, ln in enumerate(mine) if ln.role in ("assistant", "tool", "result")]
            if not users:
                continue
            spoke = min(ev.t_ms for ev in events if ev.kind == "user_speech_started" and ev.turn_index == turn
                        and ev.t_ms >= (mine[0].t_ms if attempt else 0) - 1)
            assert mine[users[0]].t_ms == spoke, (turn, attempt)
            assert all(users[0] < i for i in others), (turn, attempt, [ln.role for ln in mine])
            checked += 1
    assert checked >= len(state.started.turn_indices)
    stamps = [ln.t_ms for ln in state.transcript]
    assert stamps == sorted(stamps)  # the transcript reads in time order


async def test_a_stored_runs_elapsed_is_the_runs_lists_duration(tmp_path) -> None:
    """An interrupted run at speed 15 whose wall clock ran longer than its audio (stalls, start-up):
    its header's `elapsed` and the runs list's duration are one figure (the issue: 10:38 vs 12:14)."""
    from datetime import UTC, datetime, timedelta

    from arena_tui.spine.bus import EventBus
    from arena_tui.spine.times import duration_text
    from arena_tui.store import Store
    from arena_tui.widgets.run_header import elapsed_text

    began = datetime(2026, 5, 5, 9, 0, tzinfo=UTC)
    started = fixture_events()[0].model_copy(update={"wall_time": began})
    end = began + timedelta(minutes=12, seconds=14)
    events = [started, *(e for e in fixture_events()[1:] if e.kind != "run_ended")]
    events.append(RunEnded(run_id=started.run_id, t_ms=events[-1].t_ms, status="interrupted",
                           reason="stopped", wall_time=end))
    bus = EventBus()
    async with await Store.open(tmp_path / "a.db") as store:
        recording = store.start_recording(bus)
        for ev in events:
            bus.publish(ev)
        bus.close()
        await recording
        (row,) = await store.list_runs()
    state = RunState(started.run_id)
    state.apply_all(events)
    assert state.status == "interrupted"
    assert elapsed_text(state).plain.startswith("elapsed 12:14")
    assert duration_text(row.active_s() * 1000) == "12:14"


def test_a_revision_folds_once_however_often_it_comes() -> None:
    """The bus's copy of a re-judge and the store's read back (`actions.new_judgements`) are one
    revision: the history lists it once."""
    events = fixture_events()
    state = RunState(events[0].run_id)
    state.apply_all(events)
    before = list(state.turns[1].judgements)
    again = before[-1].model_validate_json(before[-1].model_dump_json())  # as read back from the store
    state.apply(again)
    assert state.turns[1].judgements == before
    state.apply(again.model_copy(update={"revision": again.revision + 1}))
    assert len(state.turns[1].judgements) == len(before) + 1
