"""Behaviours of the real services that the fakes now show, each alone on one turn, through the
real engine and the real Pipecat service: a turn that gets no output at all (every provider), and
Gemini Live's own (two-phase interactionStatus, several turnCompletes, an idle `interrupted`,
mid-reply sessionResumptionUpdate, empty serverContent, output before activityEnd). Each: it
shows at the fake, the reply stays with its turn, nothing is asked twice in one session, the
verdict is right (issue 23). Speed 16, deadlines as at speed 1 (tests/real_timing.py)."""

from __future__ import annotations

import pytest

from benchmarks.registry import load_benchmark
from runners.providers.gemini_live import fake as gl
from runners.fakes.timing import INSTANT, TimingProfile, TurnTiming
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru
from tests.real_timing import (
    ALIASES,
    assert_each_reply_stays_with_its_turn,
    check_gemini_quirks,
    check_reply_timing,
    fake_said,
    heard,
    real_profile,
    run_once,
)

SPEED = 16.0  # each run here is short; the per-provider runs keep 10


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("ERROR")


# ---------------------------------------------------------------------------- a stall, per provider


@pytest.mark.parametrize("alias", ALIASES)
def test_a_turn_that_gets_no_output_is_asked_again_in_a_fresh_session(alias, tmp_path) -> None:
    """Turn 1 gets nothing at all (a provider stall) the first time it is heard. The retry goes
    to a NEW session with turn 0 replayed, never a second copy into the session that heard it
    (the real server has usually transcribed it already: the model would hear it twice); the
    reply then stays with turn 1."""
    runner, rec = run_once(alias, real_profile(alias).with_turns({1: TurnTiming(no_output=True)}),
                           tmp_path / "a.db", turns=[0, 1], speed=SPEED)
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


def test_voice_live_retry_waits_for_a_reply_later_than_the_quiet_window(tmp_path) -> None:
    """Voice Live echoes every item the client creates (`conversation.item.created`), the
    replayed history's assistant turn too; that echo is no reply. The retry's reply comes 3 s
    after the user's audio, past the end-of-turn quiet window (2 s): it is waited for, not cut
    off as an empty reply by a "response" the echo opened and the user's speech closed."""
    late = TurnTiming(no_output=True, first_audio_ms=3000.0)
    runner, rec = run_once("azure-voice-live", real_profile("azure-voice-live").with_turns({1: late}),
                           tmp_path / "a.db", turns=[0, 1], speed=SPEED)
    r1 = rec.result(1)
    assert (r1.status, r1.retries, r1.session) == ("ok", 1, 2), (r1.status, r1.retries, r1.assistant_text)
    retry = runner.fake.connections[1]
    assert [h["role"] for h in retry.history] == ["user", "assistant"] and retry.replies == [1]
    assert " ".join(r1.assistant_text.split()) == " ".join(fake_said(runner, load_benchmark("demo_bench"), 1).split())


# ---------------------------------------------------------------------------- Gemini's own behaviours


def only(quirk: str) -> TimingProfile:
    """Gemini's real timing at twice the pace (so no turn nears its 30 s deadline: these test the
    quirk; the slow turn is tests/test_provider_real_timing.py's) with no quirk drawn, and
    `quirk` forced on turn 1."""
    profile = gl.REAL_TIMING.replace(quirks={}, stream_rate=0.5)
    return profile.with_turns({1: TurnTiming(quirks={quirk: True})})


GEMINI_QUIRKS = [gl.INTERACTION_STATUS, gl.SEVERAL_TURN_COMPLETES, gl.INTERRUPTED_IDLE,
                 gl.RESUMPTION_MID_REPLY, gl.EMPTY_SERVER_CONTENT]


@pytest.mark.parametrize("quirk", GEMINI_QUIRKS)
def test_gemini_quirk_keeps_the_reply_with_its_turn(quirk, tmp_path) -> None:
    """One quirk of the real service on turn 1: it shows at the fake, and turns 0 and 1 each keep
    their own reply, heard once, ok."""
    runner, rec = run_once("gemini-native-audio", only(quirk), tmp_path / "a.db", turns=[0, 1], speed=SPEED)
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
