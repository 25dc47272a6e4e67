"""What an audio turn is recorded as: its `turn_ended` (the attempt read as a `TurnResult`, with
its speech, latencies and duplex outcomes measured on our timeline by `tracks.Tracks`), its audio,
and the history it leaves; the greeting's, a stopped turn's and a failed one's too. Whether the
machine kept pace is checked here, at each turn's end: input audio sent late is said (`pacing`),
and a turn whose user speech went out `TURN_INVALID_MS` late is recorded `lost_pace` (no verdict)."""

from __future__ import annotations

from typing import Protocol

from arena_tui.spine.benchmark import Turn
from arena_tui.spine.events import (
    TurnStatus,
    GREETING_TURN, LOST_PACE, PACE_LOST, ErrorEvent, Interval, RunEvent, TurnEnded, TurnResult,
)

from ..pace import PACE_LOST_MS, TURN_INVALID_MS
from .audio_attempt import Attempt
from .outcome import turn_status
from .session import Session
from .tracks import Tracks


class RecordHost(Protocol):
    """What a record reads of its run (`audio.AudioRun`): its tracks, the session and attempt under
    way, its clock and events, and the history a finished turn joins (`base.RunBase.remember`)."""

    tracks: Tracks
    session: Session | None
    attempt: Attempt | None

    def now(self) -> float: ...

    def ev(self, cls: type, turn_index: int | None = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...

    def session_number(self) -> int: ...

    def remember(self, turn: Turn, status: TurnStatus, a: Attempt) -> None: ...


class TurnRecords:
    """Records `run`'s turns as they end."""

    def __init__(self, run: RecordHost) -> None:
        self.run = run

    def finish(self, turn: Turn, a: Attempt, outcome: str, retries: int, reconnects: int, infra: str | None = None) -> TurnResult:
        """A turn that ran to its end: recorded, its audio published, and remembered."""
        run = self.run
        status, sentinel = turn_status(outcome, a.ends_session, infra)
        if infra is not None:
            a.error = infra
        user_speech: list[Interval] = []
        measured = None
        duplex, agent, early = None, None, None
        if a.placed is not None:
            user_speech, measured = run.tracks.measure(a.placed, a.heard, a.provider_ttfb_ms, run.now())
            duplex, agent, early = run.tracks.duplex(turn, user_speech, a.heard)
        lost = self.check_pace()
        if lost:  # what happened is kept (the model's answer, the outcome) but it is no verdict
            why = f"{lost} (the turn ended {status}; it counts nowhere and is played again by a resume)"
            a.error = f"{why}; {a.error}" if a.error else why
        result = a.result(turn, status=LOST_PACE if lost else status, sentinel=sentinel, retries=retries,
                          reconnects=reconnects, session=run.session_number(), user_speech=user_speech,
                          measured=measured, duplex=duplex, agent_interruptions=agent, early_start_ms=early)
        self.publish_audio(turn.turn_index, a)
        run.publish(run.ev(TurnEnded, result=result))
        run.remember(turn, status, a)  # the session heard it as it came: the run goes on from that
        return result

    def check_pace(self) -> str | None:
        """Say so when input audio went out late during the turn just ended (the `pacing` notice:
        its timeline, speech bounds, overlaps and latencies, is not what a listener would have
        heard), and return why the turn is no measurement (None: it is one) when the user's own
        audio went out `TURN_INVALID_MS` late: a provider may have taken that stall for the end of
        the user's turn. Either is a fact about our machine, not the model. Seen when a process holds more sessions × speed
        than it keeps pace with, or the machine is busy (scripts/bench_campaign.py)."""
        run = self.run
        s = run.session
        late, speech_late = s.input.take_lateness() if s is not None and s.input is not None else (0.0, 0.0)
        if late < PACE_LOST_MS:
            return None
        run.publish(run.ev(ErrorEvent, where=PACE_LOST, fatal=False, message=(
            f"input audio went out up to {late:,.0f} ms (wall clock) behind its schedule: this machine did not "
            "keep pace, so this turn's timing and latencies are not trustworthy")))
        if speech_late < TURN_INVALID_MS:
            return None
        return f"machine lost pace: user audio up to {speech_late:,.0f} ms late"

    def greeting(self, a: Attempt, prompt: str) -> None:
        run = self.run
        s = run.session
        if s is not None and not s.alive() and not a.has_content():
            a.infra = s.infra
        result = a.greeting_result(prompt, run.session_number())
        self.publish_audio(GREETING_TURN, a)
        self.check_pace()
        run.publish(run.ev(TurnEnded, turn_index=GREETING_TURN, result=result))

    def publish_audio(self, turn_index: int, a: Attempt) -> None:
        self.run.tracks.publish_audio(turn_index, a.heard, a.placed.start_ms if a.placed else a.started_ms, self.run.now())

    def flush_conversation(self, turn_index: int | None) -> None:
        self.run.tracks.flush_conversation(turn_index, self.run.now())

    def interrupted(self, turn: Turn) -> None:
        """The run was stopped during `turn`: the attempt under way recorded with what it had."""
        run = self.run
        a = run.attempt
        if a is None or a.turn_index != turn.turn_index:
            return
        run.tracks.close_bot_speech(a.heard, run.now())
        self.publish_audio(turn.turn_index, a)
        run.publish(run.ev(TurnEnded, turn_index=turn.turn_index, result=a.interrupted_result(turn, run.session_number())))

    def failed(self, turn: Turn, error: str, status: TurnStatus = "error") -> TurnResult:
        """The run cannot go on: the turn under way is recorded with `status` (an error,
        lost_pace or infra_error), with what it heard and its audio."""
        run = self.run
        a = run.attempt
        if a is None or a.turn_index != turn.turn_index:
            result = TurnResult(turn_index=turn.turn_index, status=status, user_text=turn.input,
                                session=run.session_number(), error=error)
        else:
            run.tracks.close_bot_speech(a.heard, run.now())
            self.publish_audio(turn.turn_index, a)
            result = a.failed_result(turn, run.session_number(), error, status)
        run.publish(run.ev(TurnEnded, turn_index=turn.turn_index, result=result))
        return result
