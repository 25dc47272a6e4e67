"""RunState folds events the same way live and replayed; these are its rules, checked on real recordings."""

from __future__ import annotations

from arena_tui.events import DimensionScore, Judgement, Latencies, TurnEnded, TurnResult
from arena_tui.widgets.run_state import RunState
from arena_tui.widgets.turn_table import is_failure
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events


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
