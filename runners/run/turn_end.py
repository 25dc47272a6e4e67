"""When an audio turn is over: the end-of-turn rule and the watchdog, on the run's 20 ms ticks.

A turn ends when the reply has gone quiet (`quiet`: no response open, no call being answered, no
bot audio playing, nothing due after a tool answer, for `quiet_ms`), or when nothing at all came
for the watchdog window since the user's audio or the model's last output, or at the overall cap
with what arrived kept (a reply still coming then is a slow reply: its session is replaced before
the next turn). A session's kickoff reply (the greeting, a seeded session's) is waited out by the
same rule (`handshake`). Past the usual window with nothing to show, what the engine waits on is
said once (`waiting`). Every wait is at least `min_wall_ms` of wall time: running faster than real
time does not make a provider compute faster.

`FullDuplexTurnEnd` is the rule for a full-duplex model (`full_duplex`): its output never stops,
so a reply is under way only while the bot speaks on our timeline, a call is answered, or work it
delegated is in flight.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from arena_tui.spine.benchmark import Turn
from arena_tui.spine.events import GREETING_TURN, SLOW_REPLY, ErrorEvent, Interval, RunEvent, Waiting
from arena_tui.spine.settings import RunSettings

from ..base import ProviderRunner
from ..transports import RunClock
from .audio_attempt import Attempt
from .duplex import CuePlayer
from .session import Session
from .tracks import Tracks

DELEGATED = "the delegated work"


class TurnHost(Protocol):
    """What the rule reads of its run (`audio.AudioRun`): its settings, clock, provider and tracks,
    the session and attempt under way (a handshake sets its own attempt, and no turn, while it
    waits), and its events."""

    config: RunSettings
    clock: RunClock
    provider: ProviderRunner
    tracks: Tracks
    session: Session | None
    attempt: Attempt | None
    turn_index: int | None

    def now(self) -> float: ...

    def ev(self, cls: type, turn_index: int | None = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...


class TurnEnd:
    """The end-of-turn rule and the watchdog for `run`'s attempts (the module docstring)."""

    def __init__(self, run: TurnHost) -> None:
        self.run = run

    async def handshake(self, turn_index: int | None) -> Attempt:
        """Wait out a session's kickoff response: the greeting (turn −1), or a seeded session's
        reply to `CONTINUE_PROMPT` (`turn_index` None: its events belong to no turn). It ends by
        the end-of-turn rule, or nothing started within `start_timeout_ms`, or at the cap
        `finish_timeout_ms` (a reply still going then would spill into the next turn: the session
        is replaced before it)."""
        run = self.run
        g = run.config.greeting
        prev, prev_turn = run.attempt, run.turn_index
        a = Attempt(turn_index=turn_index if turn_index is not None else GREETING_TURN, number=0, started_ms=run.now())
        run.attempt, run.turn_index = a, turn_index
        try:
            start_by = a.started_ms + self.wall_floor(g.start_timeout_ms)
            finish_by = a.started_ms + self.wall_floor(g.finish_timeout_ms)
            while True:
                await run.clock.sleep(20)
                now = run.now()
                self.advance(now)
                s = run.session
                if s is None or not s.alive():
                    break
                if not a.responded() and not self.output_active(a, s) and now >= start_by:
                    break
                if a.responded() and self.quiet(a, s, now, since=a.started_ms):
                    await run.clock.sleep(run.config.end_of_turn.drain_ms)
                    break
                if now >= finish_by:
                    if self.output_active(a, s):
                        self.slow_reply(a, s, now - a.started_ms)
                    break
            self.close_speech(a)
        finally:
            run.attempt, run.turn_index = prev, prev_turn
        return a

    async def wait(self, a: Attempt, s: Session, turn: Turn, fut: asyncio.Future[Interval],
                   cues: CuePlayer) -> tuple[Attempt, str]:
        """Wait for the end of the attempt `a` of `turn` (its audio `fut` placed, its duplex `cues`
        playing): (a, outcome). The cues count as the user's audio: while one is due or playing
        the turn goes on, and its end is where the waits count from."""
        run = self.run
        window = self.wall_floor(run.config.watchdog.extra_ms)
        cap = self.wall_floor(run.config.watchdog.max_turn_ms)
        last_active = 0.0  # the last tick with output under way
        while True:
            await run.clock.sleep(20)
            now = run.now()
            self.advance(now)
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
            if self.output_active(a, s):
                last_active = now
            if a.responded() and self.quiet(a, s, now, since=since):
                await run.clock.sleep(run.config.end_of_turn.drain_ms)
                self.close_speech(a)
                return a, ("ok" if a.has_content() else "empty")
            idle = now - max(last_active, self.last_output(a, since))
            if idle >= window:  # nothing at all for the whole window
                self.close_speech(a)
                if a.has_content():
                    return a, "ok"  # e.g. the calls were made; the reply after them never came
                return a, ("empty" if a.responded() else "no_response")
            if now - since >= cap:
                self.close_speech(a)
                if self.output_active(a, s):
                    self.slow_reply(a, s, now - since)
                if a.has_content():
                    return a, "ok"
                return a, ("empty" if a.responded() else "no_response")
            if not self.output_active(a, s):
                self.announce_overdue(a, turn, now, min(now - idle + window, since + cap))

    def wall_floor(self, ms: float) -> float:
        """A wait of `ms` audio time, but at least `min_wall_ms` of WALL time: running faster than
        real time does not make a provider compute faster."""
        config = self.run.config
        return max(ms, config.watchdog.min_wall_ms * config.speed)

    def slow_reply(self, a: Attempt, s: Session, waited_ms: float) -> None:
        """The cap was reached with the reply still coming: keep what arrived, say so, and have
        the session replaced before the next turn (its rest would be filed under that turn)."""
        s.retire = "slow_reply"
        self.run.publish(self.run.ev(ErrorEvent, where=SLOW_REPLY, fatal=False, message=(
            f"slow reply: still coming {waited_ms / 1000:,.0f} s (audio time) after the user's audio; kept what "
            "arrived, the session is replaced before the next turn")))

    def output_active(self, a: Attempt, s: Session) -> bool:
        """A reply is under way: a response open, a tool call being answered, or bot audio playing."""
        return a.response_active or a.pending_tools > 0 or (s.output is not None and s.output.busy())

    def last_output(self, a: Attempt, since: float) -> float:
        """When the model last produced anything of this attempt (or `since`)."""
        return max(since, a.heard.last_bot_ms or 0.0, a.last_response_end_ms or 0.0, a.last_tool_ms or 0.0)

    def quiet(self, a: Attempt, s: Session, now: float, since: float) -> bool:
        """The end-of-turn rule: transcript flushed and `quiet_ms` with no bot audio, and no reply
        still due after a tool answer (a model answers a tool result: that reply belongs to this
        turn however long it takes, up to the watchdog; a call that ends the session owes none)."""
        if self.output_active(a, s):
            return False
        if a.reply_due is not None and not a.ends_session:
            return False
        return now - self.last_output(a, since) >= self.run.config.end_of_turn.quiet_ms

    def tool_settled(self, a: Attempt) -> None:
        # the answer after a tool result is still to come (some providers end no response first)
        a.last_tool_ms = self.run.now()
        if a.pending_tools == 0 and a.tool_calls:
            a.reply_due = a.tool_calls[-1].name

    def announce_wait(self, a: Attempt, what: str, deadline: float) -> None:
        """Say once per wait what the engine is waiting on and when it gives up (`waiting`)."""
        if a.waiting_for != what:
            a.waiting_for = what
            self.run.publish(self.run.ev(Waiting, what=what, deadline_t_ms=deadline))

    def announce_overdue(self, a: Attempt, turn: Turn, now: float, deadline: float) -> None:
        """Past the usual end-of-turn window with nothing to show: the watchdog is what ends it."""
        quiet = self.run.config.end_of_turn.quiet_ms
        assert a.placed is not None
        if a.reply_due is not None and a.last_tool_ms is not None and now - a.last_tool_ms >= quiet:
            self.announce_wait(a, f"the reply after {a.reply_due}", deadline)
        elif not a.responded() and now - a.placed.end_ms >= quiet:
            self.announce_wait(a, f"a reply to turn {turn.turn_index}", deadline)

    def advance(self, now: float) -> None:
        """Move the bot's speech detector on to `now`, unless bot audio is still being played."""
        run = self.run
        s = run.session
        if s is not None and s.output is not None and s.output.busy():
            return
        run.tracks.advance(run.attempt.heard if run.attempt is not None else None, now)

    def close_speech(self, a: Attempt) -> None:
        self.run.tracks.close_bot_speech(a.heard, self.run.now())


class FullDuplexTurnEnd(TurnEnd):
    """The rule for a full-duplex model (the module docstring)."""

    def __init__(self, run: TurnHost) -> None:
        super().__init__(run)
        self._delegating = False  # the current attempt's model had delegated work in flight at the last tick

    def output_active(self, a: Attempt, s: Session) -> bool:
        """A call being answered, delegated work in flight, or the bot speaking (our timeline); when
        delegated work settles, the reply it brings is due."""
        busy = s.llm is not None and self.run.provider.delegating(s.llm)
        if self._delegating and not busy and a.reply_due is None:
            a.reply_due = DELEGATED
        self._delegating = busy
        return a.pending_tools > 0 or busy or a.heard.bot_speech_open is not None

    def last_output(self, a: Attempt, since: float) -> float:
        """When the model last said or did anything of this attempt: its audible audio, its words (a
        transcript fragment comes with its frame, and may be read before that frame is played), a
        call's answer; never a transcript turn's end."""
        return max(since, a.heard.last_bot_ms or 0.0, a.last_text_ms or 0.0, a.last_tool_ms or 0.0)
