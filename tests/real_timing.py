"""What the real-timing tests share: a run of demo_bench against a provider's fake on a timing
profile, the checks of what the fake sent against its plan (measured at the fake, in its audio
time), and of what the engine recorded (each reply with its turn, each turn heard once).

The fakes keep AUDIO time at the run's speed, so a run here is a speed-1 run replayed faster;
the watchdog's wall-time floor (there for a real provider's wall-clock compute) is off so that
its deadlines are a speed-1 run's too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from benchmarks.registry import load_benchmark
from runners import catalog
from runners.base import get_runner
from arena_tui.spine.settings import RunSettings
from runners.providers.gemini_live import fake as gl
from runners.fakes.record import ConnectionRecord
from runners.fakes.timing import ENVELOPE, ReplyPlan, TimingProfile, TurnTiming
from runners.simulator import SimulatorServer
from tests.provider_runs import RecordedRun, record_run

SPEED = 10.0
TURNS = [0, 1, 2]  # 2 calls check_repair_slots, then speaks
SLOW = TurnTiming(first_audio_ms=10_000.0, terminal_lag_ms=15_000.0)  # the slow turns
ALIASES = ["gemini-native-audio", "gpt-realtime", "grok-realtime", "nova-sonic", "ultravox", "glm-realtime-flash",
           "azure-gpt-realtime", "azure-voice-live", "inworld-realtime", "vertex-gemini-live"]
TOL_MS = 20.0  # audio ms a timer may fire early (the loop's clock resolution, times the speed)


def real_profile(alias: str) -> TimingProfile:
    """The alias's fake's `REAL_TIMING` (the simulator's: the shared envelope), from its catalog entry."""
    return getattr(catalog.load(catalog.find(alias).fake_class), "REAL_TIMING", ENVELOPE)


def speaks_gemini(fake: Any) -> bool:
    """A Gemini Live fake (the Developer API's or Vertex AI's): its own quirks and activity windows."""
    return isinstance(fake, gl.GeminiLiveFake)


def real_config(alias: str, turns: list[int] = TURNS, speed: float = SPEED, **extra: Any) -> RunSettings:
    return RunSettings(model=alias, fake=True, fake_timing="real", speed=speed, turns=turns,
                     watchdog={"min_wall_ms": 0}, **extra)


def run_once(alias: str, timing: TimingProfile, db: Path, turns: list[int] = TURNS,
             speed: float = SPEED) -> tuple[Any, RecordedRun]:
    """One recorded run of demo_bench against `alias`'s fake with `timing` (in its own event
    loop: a sync fixture's run is read by two tests)."""
    runner = get_runner(alias)
    runner.timing = timing
    demo = load_benchmark("demo_bench")
    return runner, asyncio.run(record_run(demo, real_config(alias, turns, speed), runner, db))


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
