"""The fakes' timing profiles (`runners/fakes/timing.py`) and the `fake_timing` setting.

A profile is what makes a fake behave like the real service in time (slow first audio, audio
slower than real time in bursts, a late terminal event); these check that its draws are
reproducible, that overrides and quirks land on the reply they name, and that a `--fake` run
gets the real profile unless it asks for the instant one. That each fake really sends on its
plan is asserted at the fakes in tests/test_provider_real_timing.py."""

from __future__ import annotations

import pytest

from arena_tui.spine.settings import SettingsError, RunSettings
from runners.providers.gemini_live import fake as gemini_live
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.timing import ENVELOPE, INSTANT, TimingProfile, TurnTiming, pick


def test_instant_is_the_old_behaviour_everything_at_once() -> None:
    plan = INSTANT.plan(3)
    assert (plan.first_audio_ms, plan.stream_rate, plan.terminal_lag_ms, plan.quirks) == (0.0, 0.0, 0.0, frozenset())
    assert plan.schedule([100.0] * 40) == [0.0] * 40


def test_a_plan_is_the_same_for_the_same_reply_and_seed() -> None:
    assert ENVELOPE.plan(2) == ENVELOPE.plan(2)
    assert ENVELOPE.plan(2).schedule([100.0] * 50) == ENVELOPE.plan(2).schedule([100.0] * 50)
    draws = {ENVELOPE.plan(n).first_audio_ms for n in range(10)}
    assert len(draws) == 10  # every reply draws its own
    assert ENVELOPE.replace(seed=1).plan(2) != ENVELOPE.plan(2)


def test_the_real_envelope_is_what_the_real_services_were_measured_doing() -> None:
    """Over many replies: first audio 0.5-1.4 s, some up to 10 s; audio at 0.25x real time in
    bursts; the terminal event 5-15 s after the last audio, so past 30 s of the user's audio for
    a long reply (../shared/notes/real-provider-timing.md)."""
    plans = [ENVELOPE.plan(n) for n in range(200)]
    firsts = sorted(p.first_audio_ms for p in plans)
    assert 500 <= firsts[0] and firsts[-1] <= 10_000
    assert sum(f > 1400 for f in firsts) in range(5, 40)  # the slow tail: about 1 in 10
    assert all(5000 <= p.terminal_lag_ms <= 15_000 for p in plans)
    parts = [100.0] * 160  # 16 s of speech in 100 ms chunks
    for p in plans[:20]:
        offsets = p.schedule(parts)
        bursts = len(set(offsets))
        assert 12 <= bursts <= 60, bursts  # dozens of bursts
        span = offsets[-1] + parts[-1]
        assert 55_000 <= span <= 64_000, span  # 16 s streamed over about a minute (~0.25x)
        slowest = p.first_audio_ms + span + p.terminal_lag_ms
        assert slowest > 30_000  # the terminal event past "clip + 30 s"


def test_overrides_and_quirks_land_on_the_reply_they_name() -> None:
    profile = TimingProfile(name="t", quirks={"always": 1.0, "never": 0.0}).with_turns(
        {1: TurnTiming(first_audio_ms=10_000, no_output=True, quirks={"never": True, "always": False})}
    )
    p0, p1 = profile.plan(0), profile.plan(1)
    assert p0.has("always") and not p0.has("never") and not p0.no_output
    assert p1.first_audio_ms == 10_000 and p1.no_output and p1.has("never") and not p1.has("always")
    with pytest.raises(TypeError):  # a profile is shared by every session of a fake: frozen
        profile.turns[2] = TurnTiming()  # type: ignore[index]


def test_a_stalled_reply_is_given_to_the_next_utterance_heard() -> None:
    """`no_output`: the first hearing gets nothing, the client asks again and gets that reply;
    later turns keep their own replies (the stall does not shift the script)."""
    script = Script(replies=[ScriptedReply(text=t) for t in "abc"], key="user_turn")
    profile = INSTANT.with_turns({1: TurnTiming(no_output=True)})
    heard = [script.next(0, k) for k in (1, 2)]
    assert [n for n, _ in heard] == [0, 1] and script.stalls(1, profile.plan(1))
    assert script.upcoming(0, 2) == 1  # the next utterance is answered with the stalled reply
    again = script.next(0, 3)
    assert again[0] == 1 and not script.stalls(1, profile.plan(1))  # stalls once
    assert script.next(0, 4)[1].text == "c"


def test_gemini_real_timing_has_its_quirks_and_each_can_be_forced_per_reply() -> None:
    real = gemini_live.REAL_TIMING
    plans = [real.plan(n) for n in range(100)]
    assert all(p.has(gemini_live.RESUMPTION_MID_REPLY) for p in plans)
    for quirk in (gemini_live.INTERACTION_STATUS, gemini_live.INTERRUPTED_IDLE, gemini_live.EMPTY_SERVER_CONTENT):
        assert 10 < sum(p.has(quirk) for p in plans) < 90, quirk  # some replies, not all
    assert not any(p.has(gemini_live.EARLY_OUTPUT) or p.no_output for p in plans)  # scenario-only
    forced = real.with_turns({4: TurnTiming(quirks={gemini_live.EARLY_OUTPUT: True})}).plan(4)
    assert forced.has(gemini_live.EARLY_OUTPUT)


def test_pick_names_a_profile() -> None:
    assert pick("instant", ENVELOPE) is INSTANT and pick("real", ENVELOPE) is ENVELOPE
    with pytest.raises(ValueError, match="unknown fake timing 'slow'"):
        pick("slow", ENVELOPE)


def test_a_fake_run_gets_the_real_timing_unless_it_asks_for_instant() -> None:
    """What a user of `--fake` gets, and what run_started records (and a resume reads back)."""
    fake = RunSettings(model="gemini-native-audio", fake=True)
    assert fake.fake_timing == "real" and fake.public()["fake_timing"] == "real"
    assert RunSettings.from_recorded(fake.public()).fake_timing == "real"
    assert RunSettings(model="nova-sonic", fake=True, fake_timing="instant").fake_timing == "instant"
    assert RunSettings(model="sim").fake_timing is None  # the simulator keeps its own fixed delay
    assert RunSettings(model="sim", fake_timing="real").fake_timing == "real"  # unless asked
    with pytest.raises(SettingsError, match="--fake-timing only applies to --fake runs"):
        RunSettings(model="gpt-realtime", fake_timing="real")  # a real service is never slowed down by us
    with pytest.raises(SettingsError, match="--fake-timing"):
        RunSettings(model="gpt-realtime", fake=True, fake_timing="sometimes")
