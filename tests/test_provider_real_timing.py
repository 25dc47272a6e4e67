"""Every provider's fake with its REAL timing, through the real engine and the real Pipecat
service (real websockets, the real store): each reply stays with its turn, nothing is re-sent,
the verdict is right (issue 23, "Fakes that behave like the real services").

The fakes used to answer at once, in one burst, with the terminal event right after the audio,
so the end-of-turn rule never met a slow reply and filed late replies one turn late unseen. Here
each fake follows its provider's `REAL_TIMING` (runners/fakes/timing.py): first audio 0.5-10 s
after the user's audio, audio at ~0.25x real time in bursts, the terminal event 5-15 s after
the last audio. Turns 0 and 1 are the issue's slow turns (first audio 10 s, terminal event 15 s
after the last audio: 36-47 s after the user's audio; the issue saw 2 of 3 such turns go wrong);
turn 2 makes a call.

The fakes keep AUDIO time at the run's speed, so a run here is a speed-1 run replayed 10x
faster; the watchdog's wall-time floor (there for a real provider's wall-clock compute) is off so
that its deadlines are a speed-1 run's too. Two checks per provider on one recorded run: the fake
sent on its plan (order and spacing, measured at the fake), and the engine's outcome.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchmarks.registry import load_benchmark
from runners.base import get_runner
from runners.config import RunConfig
from runners.fakes import gemini_live as gl
from runners.fakes.common import ConnectionRecord, pick
from runners.fakes.timing import ENVELOPE, INSTANT, ReplyPlan, TimingProfile, TurnTiming
from runners.simulator import SimulatorServer
from tests.provider_runs import RecordedRun, quiet_loguru, record_run

SPEED = 10.0
TURNS = [0, 1, 2]  # 2 calls check_repair_slots, then speaks
SLOW = TurnTiming(first_audio_ms=10_000.0, terminal_lag_ms=15_000.0)  # the slow turns
ALIASES = ["gemini-native-audio", "gpt-realtime", "grok-realtime", "nova-sonic", "ultravox", "glm-realtime-flash"]
TOL_MS = 20.0  # audio ms a timer may fire early (the loop's clock resolution, times the speed)


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("ERROR")


def real_profile(alias: str) -> TimingProfile:
    return gl.REAL_TIMING if alias.startswith("gemini") else ENVELOPE


def real_config(alias: str, turns: list[int] = TURNS, speed: float = SPEED, **extra: Any) -> RunConfig:
    return RunConfig(model=alias, fake=True, fake_timing="real", speed=speed, turns=turns,
                     watchdog={"min_wall_ms": 0}, **extra)


def run_once(alias: str, timing: TimingProfile, db: Path, turns: list[int] = TURNS,
             speed: float = SPEED) -> tuple[Any, RecordedRun]:
    """One recorded run of demo_bench against `alias`'s fake with `timing` (in its own event
    loop: a sync fixture's run is read by two tests)."""
    runner = get_runner(alias)
    runner.timing = timing
    demo = load_benchmark("demo_bench")
    return runner, asyncio.run(record_run(demo, real_config(alias, turns, speed), runner, db))


@pytest.fixture(scope="module", params=ALIASES)
def real_run(request, tmp_path_factory) -> tuple[str, Any, RecordedRun]:
    alias = request.param
    runner, rec = run_once(alias, real_profile(alias).with_turns({0: SLOW, 1: SLOW}), tmp_path_factory.mktemp(alias) / "a.db")
    return alias, runner, rec


# ---------------------------------------------------------------------------- at the fake


def check_reply_timing(rec: ConnectionRecord, plan: ReplyPlan) -> list[str]:
    """What in one reply's marks departs from its plan (lower bounds strict, upper loose)."""
    n, bad = plan.reply, []
    start = rec.marks("reply_start", n)
    audio = rec.marks("audio", n)
    terminal = rec.marks("terminal", n)
    if start and not terminal and rec.replies[-1] == n and rec.closed:
        return []  # the session ended under it (the run was over): nothing left to check
    if not (start and audio and terminal):
        return [f"reply {n}: start/audio/terminal marks {len(start)}/{len(audio)}/{len(terminal)}"]
    anchor = start[0].t_ms
    for call in rec.marks("tool_call", n):  # the model takes its time before a call too
        if call.t_ms - anchor < plan.first_audio_ms - TOL_MS:
            bad.append(f"reply {n}: call {call.t_ms - anchor:.0f} ms after its trigger, plan {plan.first_audio_ms:.0f}")
    results = rec.marks("tool_result", n)
    if results:
        anchor = results[-1].t_ms
    first = audio[0].t_ms - anchor
    if not plan.first_audio_ms - TOL_MS <= first <= plan.first_audio_ms + 10_000:  # upper: a busy machine's loop lag
        bad.append(f"reply {n}: first audio {first:.0f} ms after its trigger, plan {plan.first_audio_ms:.0f}")
    offsets = plan.schedule([m.audio_ms for m in audio])
    late = [i for i, m in enumerate(audio) if m.t_ms - audio[0].t_ms < offsets[i] - TOL_MS]
    if late:
        bad.append(f"reply {n}: audio parts {late[:5]} went out before their burst")
    total = sum(m.audio_ms for m in audio)
    span = audio[-1].t_ms - audio[0].t_ms + audio[-1].audio_ms
    if total >= 2000 and not (span > 1.5 * total and len(set(offsets)) >= 3):
        bad.append(f"reply {n}: {total:.0f} ms of audio over {span:.0f} ms in {len(set(offsets))} bursts")
    lag = terminal[-1].t_ms - audio[-1].t_ms
    if lag < plan.terminal_lag_ms - TOL_MS:
        bad.append(f"reply {n}: terminal event {lag:.0f} ms after the last audio, plan {plan.terminal_lag_ms:.0f}")
    return bad


def check_gemini_quirks(rec: ConnectionRecord, plan: ReplyPlan) -> list[str]:
    """Each quirk the plan drew shows in the reply's marks, in its place."""
    n, bad = plan.reply, []
    start, terminal = rec.marks("reply_start", n)[0].t_ms, rec.marks("terminal", n)[-1].t_ms
    status = plan.has(gl.INTERACTION_STATUS) or plan.has(gl.SEVERAL_TURN_COMPLETES)
    early = rec.marks("turnComplete:IN_PROGRESS", n)
    if status and not early:
        bad.append(f"reply {n}: interactionStatus drawn, no IN_PROGRESS turnComplete")
    if not status and early:
        bad.append(f"reply {n}: an IN_PROGRESS turnComplete without the quirk")
    if plan.has(gl.SEVERAL_TURN_COMPLETES) and len(early) < 2 and len(rec.marks("audio", n)) > 20:
        bad.append(f"reply {n}: several turnCompletes drawn, {len(early)} sent")
    if plan.has(gl.EMPTY_SERVER_CONTENT) != bool(rec.marks("empty_server_content", n)):
        bad.append(f"reply {n}: empty serverContent drawn {plan.has(gl.EMPTY_SERVER_CONTENT)}")
    if n >= 0 and plan.has(gl.INTERRUPTED_IDLE) != bool(rec.marks("interrupted", n)):
        bad.append(f"reply {n}: idle interrupted drawn {plan.has(gl.INTERRUPTED_IDLE)}")
    ticks = [m for m in rec.marks("resumption_update", n) if start < m.t_ms < terminal]
    if plan.has(gl.RESUMPTION_MID_REPLY) and len(ticks) < (terminal - start) / gl.RESUMPTION_EVERY_MS * 0.8:
        bad.append(f"reply {n}: {len(ticks)} resumption updates over {terminal - start:.0f} ms")
    if not plan.has(gl.RESUMPTION_MID_REPLY) and ticks:
        bad.append(f"reply {n}: resumption updates without the quirk")
    return bad


def check_simulator_timing(sim: SimulatorServer, timing: TimingProfile) -> list[str]:
    bad = []
    for r in sim.responses:
        if r.kind not in ("speech", "greeting") or r.audio_ms_first_delta is None:
            continue
        plan = timing.plan(r.turn_index)
        first = r.audio_ms_first_delta - r.audio_ms_created
        if first < plan.first_audio_ms - TOL_MS:
            bad.append(f"turn {r.turn_index}: first audio {first:.0f} ms after the trigger, plan {plan.first_audio_ms:.0f}")
        truth = next(t for t in sim.truth_log if r.response_id in t.response_ids)
        parts = [200.0] * int(truth.reply_audio_ms // 200)
        expect = plan.schedule(parts)[-1] if parts else 0.0
        if r.audio_ms_last_delta - r.audio_ms_first_delta < expect - TOL_MS:
            bad.append(f"turn {r.turn_index}: audio over {r.audio_ms_last_delta - r.audio_ms_first_delta:.0f} ms, plan {expect:.0f}")
        if r.audio_ms_done is None or r.audio_ms_done - r.audio_ms_last_delta < plan.terminal_lag_ms - TOL_MS:
            bad.append(f"turn {r.turn_index}: response.done not {plan.terminal_lag_ms:.0f} ms after the last audio")
    return bad


def test_the_fake_sends_on_its_real_timing_profile(real_run) -> None:
    """Measured at the fake, in its audio time: every reply's call and first audio came its
    plan's delay after the trigger, the audio in bursts slower than real time, the terminal event
    the plan's lag after the last audio (the slow turns: 10 s and 15 s); Gemini's quirks where drawn."""
    alias, runner, _ = real_run
    fake = runner.fake
    if isinstance(fake, SimulatorServer):
        assert check_simulator_timing(fake, runner.timing) == []
        slow = next(r for r in fake.responses if r.turn_index == 1 and r.kind == "speech")
        assert slow.audio_ms_first_delta - slow.audio_ms_created >= 10_000 - TOL_MS
        return
    bad = []
    for rec in fake.connections:
        for n in rec.replies:
            plan = fake.timing.plan(n)
            bad += check_reply_timing(rec, plan)
            if alias.startswith("gemini"):
                bad += check_gemini_quirks(rec, plan)
    assert bad == [], bad
    slow = next(c for c in fake.connections if c.marks("audio", 1))
    assert slow.marks("audio", 1)[0].t_ms - slow.marks("reply_start", 1)[0].t_ms >= 10_000 - TOL_MS


# ---------------------------------------------------------------------------- the engine


def fake_said(runner: Any, demo: Any, turn: int) -> str:
    """What the fake spoke for `turn`: the golden text (the simulator: its spoken form)."""
    if isinstance(runner.fake, SimulatorServer):
        return runner.fake.truth[turn].text
    return demo.turn(turn).golden_text


def heard(fake: Any) -> dict[str, Any]:
    """What the fake heard and answered, across connections."""
    if isinstance(fake, SimulatorServer):
        attempts = [(t.turn_index, t.session) for t in fake.truth_log if t.turn_index >= 0]
        return {"answered": sorted(t for t, _ in attempts), "per_session": attempts}
    return {
        "answered": [n for c in fake.connections for n in c.replies if n >= 0],
        "per_session": [c.user_turns for c in fake.connections],
    }


def assert_each_reply_stays_with_its_turn(runner: Any, rec: RecordedRun, turns: list[int]) -> None:
    demo = load_benchmark("demo_bench")
    got = {i: (rec.result(i).status, rec.result(i).retries, " ".join(rec.result(i).assistant_text.split()))
           for i in turns}
    want = {i: ("ok", 0, " ".join(fake_said(runner, demo, i).split())) for i in turns}
    assert got == want
    for i in turns:
        assert [c.name for c in rec.result(i).tool_calls] == [c.name for c in demo.turn(i).expected_calls], i
        assert all(c.status == "matched" for c in rec.result(i).tool_calls), rec.result(i).tool_calls


def test_each_reply_stays_with_its_turn_and_nothing_is_re_sent(real_run) -> None:
    """Every turn ok at its first attempt with the reply the fake spoke for it (the slow ones too,
    however late their terminal event) and its call matched; the fake heard each turn exactly once
    and answered turns 0, 1, 2 once each, in order."""
    alias, runner, rec = real_run
    assert heard(runner.fake)["answered"] == list(range(len(TURNS))), heard(runner.fake)
    assert_each_reply_stays_with_its_turn(runner, rec, TURNS)
    assert not rec.kinds("retry"), [(e.turn_index, e.reason) for e in rec.kinds("retry")]
    if alias.startswith("gemini"):
        starts = [m for c in runner.fake.connections for m in c.messages
                  if pick(pick(m, "realtimeInput"), "activityStart") is not None]
        assert len(starts) == len(TURNS), "a user turn's audio went out more than once"


# ---------------------------------------------------------------------------- a stall, per provider


@pytest.mark.parametrize("alias", ALIASES)
def test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session(alias, tmp_path) -> None:
    """Turn 1 gets nothing at all (a provider stall) the first time it is heard. The retry goes
    to a NEW session with turn 0 replayed, never a second copy into the session that heard it
    (the real server has usually transcribed it already: the model would hear it twice); the
    reply then stays with turn 1."""
    runner, rec = run_once(alias, real_profile(alias).with_turns({1: TurnTiming(no_output=True)}),
                           tmp_path / "a.db", turns=[0, 1])
    fake = runner.fake
    r1 = rec.result(1)
    assert (r1.status, r1.retries) == ("ok", 1), (r1.status, r1.retries, r1.assistant_text)
    if isinstance(fake, SimulatorServer):
        sessions = [s for t, s in heard(fake)["per_session"] if t == 1]
        assert len(sessions) == 2 and sessions[0] != sessions[1], f"turn 1 heard twice in one session: {sessions}"
    else:
        assert heard(fake)["per_session"][0] == 2, f"turn 1 heard twice in one session: {heard(fake)}"
    assert r1.session == 2, "the retry did not go to a fresh session"
    assert " ".join(r1.assistant_text.split()) == " ".join(fake_said(runner, load_benchmark("demo_bench"), 1).split())


# ---------------------------------------------------------------------------- Gemini's own behaviours


def only(quirk: str | None, on: dict[int, TurnTiming] | None = None) -> TimingProfile:
    """Gemini's real timing with no quirk drawn, and `quirk` forced on turn 1."""
    profile = gl.REAL_TIMING.replace(quirks={})
    return profile.with_turns(on or {1: TurnTiming(quirks={quirk: True})})


GEMINI_QUIRKS = [gl.INTERACTION_STATUS, gl.SEVERAL_TURN_COMPLETES, gl.INTERRUPTED_IDLE,
                 gl.RESUMPTION_MID_REPLY, gl.EMPTY_SERVER_CONTENT]


@pytest.mark.parametrize("quirk", GEMINI_QUIRKS)
def test_gemini_quirk_keeps_the_reply_with_its_turn(quirk, tmp_path) -> None:
    """One quirk of the real service on turn 1 (the rest of Gemini's real timing as measured):
    it shows at the fake, and turns 0 and 1 each keep their own reply, heard once, ok."""
    runner, rec = run_once("gemini-native-audio", only(quirk), tmp_path / "a.db", turns=[0, 1])
    fake = runner.fake
    conn = fake.connections[0]
    plan = fake.timing.plan(1)
    assert plan.has(quirk) and check_gemini_quirks(conn, plan) == [] and check_reply_timing(conn, plan) == []
    assert heard(fake)["answered"] == [0, 1], heard(fake)
    assert_each_reply_stays_with_its_turn(runner, rec, [0, 1])


def test_gemini_output_that_starts_before_the_users_audio_ended(tmp_path) -> None:
    """The model answers 0.3 s into turn 1's activity window, while the rest of the WAV is still
    going out (what automatic activity detection does at a pause). The reply is turn 1's, the
    turn is asked once, and the overlap is on the record as the bot barging in. (The other turns
    answer at once and the run is slower: the lead of the early audio over the user's end must
    outlast the pipeline's own latency on a busy machine.)"""
    early = {1: TurnTiming(first_audio_ms=0.0, quirks={gl.EARLY_OUTPUT: True})}
    runner, rec = run_once("gemini-native-audio", INSTANT.with_turns(early), tmp_path / "a.db", turns=[0, 1], speed=6.0)
    conn = runner.fake.connections[0]
    assert conn.marks("early_output", 1) and conn.marks("audio", 1)[0].t_ms < conn.marks("user_end")[-1].t_ms
    assert heard(runner.fake)["answered"] == [0, 1] and conn.user_turns == 2
    assert_each_reply_stays_with_its_turn(runner, rec, [0, 1])
    r1 = rec.result(1)
    assert r1.overlap_ms > 0 and any(e.cause == "bot_barge_in" for e in rec.kinds("interruption", 1))
