"""The audio turn loop: paced file input → the provider's Pipecat session → paced null output.

It runs a benchmark's turns in order on ONE monotonic timeline (AUDIO time, scaled by
`--speed`), decides when a turn is over (the end-of-turn rule, the watchdog, retries), notices
a dead or silent session and rotates to a new one with the history replayed.

The split follows what drives each part. This module is the control: it reacts to the
provider's frames (what each means for the attempt: `provider_frames.py`) and to its own ticks,
and owns the sessions. `tracks.Tracks` only follows
the audio as the transports play it (levels, speech, overlaps, recordings: our own clock, never
the provider's). `audio_attempt.Attempt` is the data both fill and the `TurnResult` it becomes.
The run life (tools, events, history, rotation bookkeeping) is `base.RunBase`.
"""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import (
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)

from arena_tui.spine.events import TurnStatus
from arena_tui.spine.events import (
    GREETING_TURN,
    LOST_PACE,
    PACE_LOST,
    SLOW_REPLY,
    ErrorEvent,
    Interval,
    Retry,
    TurnEnded,
    TurnResult,
    TurnStarted,
    Waiting,
)
from arena_tui.spine.benchmark import Turn

from ..base import HistoryItem
from ..pace import PACE_LOST_MS, TURN_INVALID_MS
from ..rotation import rotation_due
from ..timeline.overlaps import LiveOverlaps
from ..tools import ToolResolver
from ..transports import RunClock
from .audio_attempt import Attempt
from .base import RunBase
from .history import CONTINUE_PROMPT
from .outcome import turn_status
from .provider_frames import ProviderFrames
from .duplex import CuePlayer
from .session import Session
from .tracks import Heard, Tracks


class AudioRun(ProviderFrames, RunBase[Session, Attempt]):
    """The audio turn loop: each turn's WAV paced into the session, the reply played out on the same clock."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As `RunBase`'s; the audio the transports play is followed by its `tracks`."""
        super().__init__(*args, **kwargs)
        self.rate = self.config.sample_rate
        self.tracks = Tracks(self.benchmark, self.config, lambda cls, **kw: self.publish(self.ev(cls, **kw)), self.start_ms)

    def run_clock(self) -> RunClock:
        return RunClock(self.config.speed, self.start_ms, self.config.pace)

    # -- the run's life

    def check(self, turns: list[Turn]) -> None:
        for t in turns:  # unreadable audio is an error before anything starts
            # and where its speech is, worked out here (a thread) rather than on the loop at the
            # turn's start: up to tens of ms for a long clip, which every session's pacer would wait
            # (and the clip under the run's condition made here too: noise over a long clip takes a while)
            self.tracks.user_speech(t)
            self.tracks.user_audio(t)
            for i in range(len(t.duplex)):  # its duplex cues' too
                self.tracks.cue_speech(t, i)
                self.tracks.cue_audio(t, i)

    async def opening(self) -> None:
        g = self.config.greeting
        if self.seed is not None:  # resumed / rehydrated: the history replayed, no greeting turn
            items, _ = self.seeded_replay()
            if not items and g.enabled:  # nothing to replay (turn 0): greeted as a fresh session is, unrecorded
                await self.open_session(g.prompt, detail=self.seed_detail())
                await self.handshake(None)
                return
            await self.open_session(self.continuation(items), items, detail=self.seed_detail())
            await self.settle_opening()
            return
        if not g.enabled:  # no greeting: the session is asked nothing and the first turn starts it
            await self.open_session(None, detail="initial")
            await self.settle_opening()
            return
        await self.open_session(g.prompt, detail="initial")
        self.turn_index = GREETING_TURN
        self.publish(self.ev(TurnStarted, attempt=0, input_text=g.prompt))
        self.finish_greeting(await self.handshake(GREETING_TURN), g.prompt)

    # -- callbacks from the transports (called at PLAYED / scheduled time)

    def on_user_chunk(self, pcm: bytes, t_ms: float) -> None:
        self.tracks.user_chunk(self.heard(), pcm, t_ms)

    def on_bot_audio(self, pcm: bytes, t_ms: float) -> None:
        self.tracks.bot_audio(self.heard(), pcm, t_ms)
        if self.attempt is not None:
            self.attempt.replied()

    def on_truncated(self, t_ms: float, pending_ms: float) -> None:
        self.tracks.truncated(self.heard(), t_ms, pending_ms)

    def heard(self) -> Heard | None:
        return self.attempt.heard if self.attempt is not None else None

    # -- frames from the LLM service

    # -- sessions

    async def open_session(self, kickoff: str | None, history: list[HistoryItem] | None = None, detail: str = "") -> Session:
        session = Session(self, self.next_session_number(), self.spec(kickoff, history))
        self.session = session
        await session.open()
        # t_ms of session_opened is where the session's input audio starts (its audio time 0).
        assert session.input is not None and session.input.start_ms is not None
        self.session_opened(session, detail, t_ms=session.input.start_ms)
        return session

    async def rotate(self, reason: str) -> None:
        """Replace the current session, replaying the history, then settle it (`settle_opening`)."""
        old = self.session
        why = old.failed if old is not None and old.failed else "connection closed"
        await self.replace_session(
            reason, why, lambda items, detail: self.open_session(self.continuation(items), items, detail=detail),
            old.infra if old is not None and not old.alive() else None,
        )
        await self.settle_opening()

    def continuation(self, items: list[HistoryItem]) -> str | None:
        """The kickoff of a session that goes on from `items`: none — the history is seeded and
        nothing asked, so no reply can land in the next turn — unless the provider takes history
        in only when asked to answer it (`history_needs_reply`)."""
        return CONTINUE_PROMPT if items and self.provider.history_needs_reply(self.config) else None

    async def settle_opening(self) -> None:
        """What the new session owes before the next turn: the reply its kickoff asked for (the
        handshake, on no turn), or, asked nothing, its setup (`settle`)."""
        assert self.session is not None
        if self.session.spec.kickoff is not None:
            await self.handshake(None)
        else:
            await self.settle()

    async def settle(self) -> None:
        """A session asked for nothing: wait until it has taken its setup and seeded history
        (`ProviderRunner.session_ready`), at most as long as a kickoff's reply may take to start."""
        s = self.session
        floor = self.config.watchdog.min_wall_ms * self.config.speed  # provider setup is wall-clock bound
        wait = max(self.config.greeting.start_timeout_ms, floor)
        until = self.now() + wait
        while s is not None and s.alive() and s.llm is not None and not self.provider.session_ready(s.llm):
            if self.now() >= until:
                self.publish(self.ev(ErrorEvent, where="engine", fatal=False, message=(
                    f"session {s.number} did not report its setup done within {wait:,.0f} ms (audio time); "
                    "the next turn goes on, its first words may go unheard")))
                return
            await self.clock.sleep(20)
            self._advance_detector(self.now())

    async def ensure_session(self) -> None:
        s = self.session
        if s is None:
            return
        if not s.alive():
            await self.rotate("error" if s.failed else "disconnect")
            return
        if s.retire:
            await self.rotate(s.retire)
            return
        reason = rotation_due(self.rotation, self.now() - s.opened_ms, len(self.benchmark.system_prompt) + s.context_chars())
        if reason:
            await self.rotate(reason)

    async def handshake(self, turn_index: int | None) -> Attempt:
        """Wait out a session's kickoff response: the greeting (turn −1), or a seeded session's
        reply to `CONTINUE_PROMPT` (`turn_index` None: its events belong to no turn). It ends by
        the end-of-turn rule, or nothing started within `start_timeout_ms`, or at the cap
        `finish_timeout_ms` (a reply still going then would spill into the next turn: the session
        is replaced before it)."""
        g = self.config.greeting
        prev, prev_turn = self.attempt, self.turn_index
        a = Attempt(turn_index=turn_index if turn_index is not None else GREETING_TURN, number=0, started_ms=self.now())
        self.attempt, self.turn_index = a, turn_index
        try:
            start_by = a.started_ms + self.wall_floor(g.start_timeout_ms)
            finish_by = a.started_ms + self.wall_floor(g.finish_timeout_ms)
            while True:
                await self.clock.sleep(20)
                now = self.now()
                self._advance_detector(now)
                s = self.session
                if s is None or not s.alive():
                    break
                if not a.responded() and not self._output_active(a, s) and now >= start_by:
                    break
                if a.responded() and self._quiet(a, s, now, since=a.started_ms):
                    await self.clock.sleep(self.config.end_of_turn.drain_ms)
                    break
                if now >= finish_by:
                    if self._output_active(a, s):
                        self._slow_reply(a, s, now - a.started_ms)
                    break
            self._close_bot_speech(a)
        finally:
            self.attempt, self.turn_index = prev, prev_turn
        return a

    def wall_floor(self, ms: float) -> float:
        """A wait of `ms` audio time, but at least `min_wall_ms` of WALL time: running faster than
        real time does not make a provider compute faster."""
        return max(ms, self.config.watchdog.min_wall_ms * self.config.speed)

    def _slow_reply(self, a: Attempt, s: Session, waited_ms: float) -> None:
        """The cap was reached with the reply still coming: keep what arrived, say so, and have
        the session replaced before the next turn (its rest would be filed under that turn)."""
        s.retire = "slow_reply"
        self.publish(self.ev(ErrorEvent, where=SLOW_REPLY, fatal=False, message=(
            f"slow reply: still coming {waited_ms / 1000:,.0f} s (audio time) after the user's audio; kept what "
            "arrived, the session is replaced before the next turn")))

    # -- turns

    @staticmethod
    def _output_active(a: Attempt, s: Session) -> bool:
        """A reply is under way: a response open, a tool call being answered, or bot audio playing."""
        return a.response_active or a.pending_tools > 0 or (s.output is not None and s.output.busy())

    def _last_output(self, a: Attempt, since: float) -> float:
        """When the model last produced anything of this attempt (or `since`)."""
        return max(since, a.heard.last_bot_ms or 0.0, a.last_response_end_ms or 0.0, a.last_tool_ms or 0.0)

    def _quiet(self, a: Attempt, s: Session, now: float, since: float) -> bool:
        """The end-of-turn rule: transcript flushed and `quiet_ms` with no bot audio, and no reply
        still due after a tool answer (a model answers a tool result: that reply belongs to this
        turn however long it takes, up to the watchdog; a call that ends the session owes none)."""
        if self._output_active(a, s):
            return False
        if a.reply_due is not None and not a.ends_session:
            return False
        return now - self._last_output(a, since) >= self.config.end_of_turn.quiet_ms

    def tool_settled(self, a: Attempt) -> None:
        # the answer after a tool result is still to come (some providers end no response first)
        a.last_tool_ms = self.now()
        if a.pending_tools == 0 and a.tool_calls:
            a.reply_due = a.tool_calls[-1].name

    def announce_wait(self, a: Attempt, what: str, deadline: float) -> None:
        """Say once per wait what the engine is waiting on and when it gives up (`waiting`)."""
        if a.waiting_for != what:
            a.waiting_for = what
            self.publish(self.ev(Waiting, what=what, deadline_t_ms=deadline))

    def _advance_detector(self, now: float) -> None:
        s = self.session
        if s is not None and s.output is not None and s.output.busy():
            return
        self.tracks.advance(self.heard(), now)

    def _close_bot_speech(self, a: Attempt) -> None:
        self.tracks.close_bot_speech(a.heard, self.now())

    async def run_attempt(self, turn: Turn, number: int, pcm: bytes) -> tuple[Attempt, str]:
        """Play the turn's audio once and wait for the end of the turn; returns (attempt, outcome).

        Waiting is by inactivity, never by a deadline fixed in advance: the turn ends when the
        reply has gone quiet (`_quiet`), or when nothing at all came for the watchdog window
        (`extra_ms`) since the user's audio or the model's last output, or at the overall cap
        (`max_turn_ms`) with what arrived kept. A turn that has content is never "empty"."""
        s = self.session
        assert s is not None and s.input is not None
        a = Attempt(
            turn_index=turn.turn_index,
            number=number,
            started_ms=self.now(),
            resolver=ToolResolver(turn),
            heard=Heard(user_speech_rel=self.tracks.user_speech(turn), live_overlaps=LiveOverlaps()),
        )
        self.attempt = a
        s.heard_turns.add(turn.turn_index)
        s.input.take_lateness()  # the turn's pace counts from here (a stall while a session opened is no part of it)
        dur_ms = len(pcm) / 2 / self.rate * 1000.0
        self.publish(self.ev(TurnStarted, attempt=number, input_text=turn.input, user_audio_ms=dur_ms))
        fut = s.input.play(pcm, self.turn_marks(a.heard.user_speech_rel, dur_ms))
        cues = CuePlayer(turn, self.tracks, a.heard, s.input, self.turn_marks)  # the user's speech scripted into the reply
        try:
            return await self._await_end(a, s, turn, fut, cues)
        finally:
            cues.drop()

    async def _await_end(self, a: Attempt, s: Session, turn: Turn, fut: Any, cues: CuePlayer) -> tuple[Attempt, str]:
        """`run_attempt`'s wait for the end of the turn (its rules there); the turn's duplex cues
        count as the user's audio: while one is due or playing the turn goes on, and its end is
        where the waits count from."""
        window = self.wall_floor(self.config.watchdog.extra_ms)
        cap = self.wall_floor(self.config.watchdog.max_turn_ms)
        last_active = 0.0  # the last tick with output under way
        while True:
            await self.clock.sleep(20)
            now = self.now()
            self._advance_detector(now)
            if not s.alive():
                return a, "dead"
            if a.placed is None and fut.done() and not fut.cancelled():
                a.placed = fut.result()
            if a.placed is None:
                continue
            cues.tick()
            if cues.busy():
                last_active = now
                continue
            since = max(a.placed.end_ms, cues.end_ms() or 0.0)  # the end of the user's audio, cues included
            if self._output_active(a, s):
                last_active = now
            if a.responded() and self._quiet(a, s, now, since=since):
                await self.clock.sleep(self.config.end_of_turn.drain_ms)
                self._close_bot_speech(a)
                return a, ("ok" if a.has_content() else "empty")
            idle = now - max(last_active, self._last_output(a, since))
            if idle >= window:  # nothing at all for the whole window
                self._close_bot_speech(a)
                if a.has_content():
                    return a, "ok"  # e.g. the calls were made; the reply after them never came
                return a, ("empty" if a.responded() else "no_response")
            if now - since >= cap:
                self._close_bot_speech(a)
                if self._output_active(a, s):
                    self._slow_reply(a, s, now - since)
                if a.has_content():
                    return a, "ok"
                return a, ("empty" if a.responded() else "no_response")
            if not self._output_active(a, s):
                self._announce_overdue(a, turn, now, min(now - idle + window, since + cap))

    def _announce_overdue(self, a: Attempt, turn: Turn, now: float, deadline: float) -> None:
        """Past the usual end-of-turn window with nothing to show: the watchdog is what ends it."""
        quiet = self.config.end_of_turn.quiet_ms
        assert a.placed is not None
        if a.reply_due is not None and a.last_tool_ms is not None and now - a.last_tool_ms >= quiet:
            self.announce_wait(a, f"the reply after {a.reply_due}", deadline)
        elif not a.responded() and now - a.placed.end_ms >= quiet:
            self.announce_wait(a, f"a reply to turn {turn.turn_index}", deadline)

    def turn_marks(self, speech: list[Interval], dur_ms: float) -> list:
        """User-speaking brackets around the clip's speech, for runners that take client-side turns."""
        if not self.provider.client_turns(self.config):
            return []
        start = speech[0].start_ms if speech else 0.0
        stop = speech[-1].end_ms if speech else dur_ms
        return [(start, UserStartedSpeakingFrame), (stop, UserStoppedSpeakingFrame)]

    async def run_turn(self, turn: Turn) -> TurnResult:
        self.turn_index = turn.turn_index
        pcm = self.tracks.user_audio(turn)
        retries = 0
        reconnects_before = self.reconnects
        outcome = "no_response"
        a: Attempt | None = None
        reached = False  # an attempt got to the model (its answer, or its silence, is the model's)
        wd = self.config.watchdog
        for number in range(wd.max_retries + 1):
            await self.ensure_session()
            if number > 0:
                retries = number
                await self.clock.sleep(wd.backoff_ms)
                await self.ensure_session()
                s = self.session
                if s is not None and turn.turn_index in s.heard_turns:
                    # Never again into a session that heard the turn: a real server has usually
                    # transcribed it already, and the model would hear the question twice.
                    await self.rotate("retry")
                self.publish(self.ev(Retry, attempt=number, reason=outcome, session=self.session_number()))
            s = self.session
            a, outcome = await self.run_attempt(turn, number, pcm)
            if outcome == "dead" and s is not None and not a.has_content():
                a.infra = s.infra  # lost with its session to an infrastructure failure (None: to anything else)
            reached = reached or a.infra is None
            if outcome == "dead":
                # Never replay the turn into a dead session: rotate first, then retry.
                await self.ensure_session()
                outcome = "no_response" if not a.has_content() else "disconnect"
                continue
            if outcome == "ok":
                self.failing = 0
                break
            if not self.retried(outcome):
                break
        assert a is not None
        return self.finish_turn(turn, a, outcome, retries, self.reconnects - reconnects_before,
                                None if reached else a.infra)

    def retried(self, outcome: str) -> bool:
        """Whether a turn that ended `outcome` (not ok) is played again: every way, here (a paced
        model that did not answer is asked again, in a fresh session)."""
        return True

    def finish_turn(
        self, turn: Turn, a: Attempt, outcome: str, retries: int, reconnects: int, infra: str | None = None
    ) -> TurnResult:
        status, sentinel = turn_status(outcome, a.ends_session, infra)
        if infra is not None:
            a.error = infra
        user_speech: list[Interval] = []
        measured = None
        duplex, agent, early = None, None, None
        if a.placed is not None:
            user_speech, measured = self.tracks.measure(turn, a.placed, a.heard, a.provider_ttfb_ms, self.now())
            duplex, agent, early = self.tracks.duplex(turn, user_speech, a.heard)
        lost = self.check_pace()
        if lost:  # what happened is kept (the model's answer, the outcome) but it is no verdict
            why = f"{lost} (the turn ended {status}; it counts nowhere and is played again by a resume)"
            a.error = f"{why}; {a.error}" if a.error else why
        result = a.result(turn, status=LOST_PACE if lost else status, sentinel=sentinel, retries=retries,
                          reconnects=reconnects, session=self.session_number(), user_speech=user_speech,
                          measured=measured, duplex=duplex, agent_interruptions=agent, early_start_ms=early)
        self.publish_audio(turn.turn_index, a)
        self.publish(self.ev(TurnEnded, result=result))
        self.remember(turn, status, a)  # the session heard it as it came: the run goes on from that
        return result

    def check_pace(self) -> str | None:
        """Say so when input audio went out late during the turn just ended (the `pacing` notice:
        its timeline, speech bounds, overlaps and latencies, is not what a listener would have
        heard), and return why the turn is no measurement (None: it is one) when the user's own
        audio went out `TURN_INVALID_MS` late: a provider may have taken that stall for the end of
        the user's turn. Either is a fact about our machine, not the model. Seen when a process holds more sessions × speed
        than it keeps pace with, or the machine is busy (scripts/bench_campaign.py)."""
        s = self.session
        late, speech_late = s.input.take_lateness() if s is not None and s.input is not None else (0.0, 0.0)
        if late < PACE_LOST_MS:
            return None
        self.publish(self.ev(ErrorEvent, where=PACE_LOST, fatal=False, message=(
            f"input audio went out up to {late:,.0f} ms (wall clock) behind its schedule: this machine did not "
            "keep pace, so this turn's timing and latencies are not trustworthy")))
        if speech_late < TURN_INVALID_MS:
            return None
        return f"machine lost pace: user audio up to {speech_late:,.0f} ms late"

    def finish_greeting(self, a: Attempt, prompt: str) -> None:
        s = self.session
        if s is not None and not s.alive() and not a.has_content():
            a.infra = s.infra
        result = a.greeting_result(prompt, self.session_number())
        self.publish_audio(GREETING_TURN, a)
        self.check_pace()
        self.publish(self.ev(TurnEnded, turn_index=GREETING_TURN, result=result))

    def publish_audio(self, turn_index: int, a: Attempt) -> None:
        self.tracks.publish_audio(turn_index, a.heard, a.placed.start_ms if a.placed else a.started_ms, self.now())

    def flush_conversation(self, turn_index: int | None) -> None:
        self.tracks.flush_conversation(turn_index, self.now())

    def interrupted_turn(self, turn: Turn) -> None:
        a = self.attempt
        if a is None or a.turn_index != turn.turn_index:
            return
        self._close_bot_speech(a)
        self.publish_audio(turn.turn_index, a)
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=a.interrupted_result(turn, self.session_number())))

    def failed_turn(self, turn: Turn, error: str, status: TurnStatus = "error") -> TurnResult:
        """The run cannot go on: the turn under way is recorded with `status` (an error,
        lost_pace or infra_error), with what it heard and its audio."""
        a = self.attempt
        if a is None or a.turn_index != turn.turn_index:
            result = TurnResult(turn_index=turn.turn_index, status=status, user_text=turn.input,
                                session=self.session_number(), error=error)
        else:
            self._close_bot_speech(a)
            self.publish_audio(turn.turn_index, a)
            result = a.failed_result(turn, self.session_number(), error, status)
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))
        return result
