"""How a fake model reacts to user speech during its own reply (a benchmark's duplex cues).

Real services differ here: a plain server VAD stops the reply at any speech (a backchannel
"mm-hmm" included) and answers whatever it heard, a better model talks on through a
backchannel and leaves speech that is not addressed to it unanswered, a half-duplex one
never stops. The simulator and the provider fakes play a `DuplexBehaviour` so that the
engine's duplex figures (`arena_tui.spine.duplex`) can be checked against what they did:

    yield_after_ms   stop the reply this long after the speech's onset (the simulator: at the
                     earliest when its VAD confirms speech, 100 ms in); None: never stop
    backchannels     "yield": a backchannel is speech like any other; "ignore": talk on
    side_speech      "answer": side speech is a turn like any other; "ignore": talk on, no reply

A reacted-to cue is a user turn: the reply stops and, once the speech ends, the fake answers
it (the simulator, an oracle, says the turn's golden answer again). An ignored one is not
heard at all: no VAD event, no reply. The default is the plain server VAD's.

The behaviour itself is data (`arena_tui.spine.faults.DuplexBehaviour`, the run's settings hold it):
as simulator faults `yield=MS|never`, `backchannel=yield|ignore`, `side_speech=answer|ignore`, and
per turn `N:yield=MS`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from arena_tui.spine.faults import DuplexBehaviour

from runners.fakes.timing import FakeClock

@dataclass
class CueHeard:
    """One stretch of user speech a fake heard over its own reply, and what it did (its audio time)."""

    kind: str  # the reply's next cue kind (interruption | backchannel | side_speech)
    start_ms: float  # its endpointer heard the speech begin
    reacted: bool  # taken as a turn (stopped for, then answered), per the behaviour; else not heard at all
    yield_ms: float | None = None  # the reply was stopped (the provider's barge-in signal sent)
    yield_mono: float | None = None  # ... on this machine's monotonic clock
    answered: bool = False


class Floor:
    """A fake session's own reply as its client hears it, and the user speaking over it.

    The fake tells it when a reply with duplex cues starts (`replying`, the cue kinds in order:
    `ScriptedReply.duplex`) and each audio part it sends (`sent`: the client plays each part
    from when it was sent, after the audio before it); its endpointer's edges go to `speech`
    first, which says whether an edge belongs to a cue (then it is no user turn for the fake).
    A cue the behaviour reacts to stops the reply `yield_after_ms` after its onset (`stop`: the
    provider's barge-in signal, the reply's task cancelled) and is answered once it ends
    (`answer`: the same reply again); one it ignores is not heard at all. What was done goes to
    `heard` (the connection's `ConnectionRecord.duplex`).
    """

    def __init__(self, behaviour: DuplexBehaviour, clock: FakeClock, heard: list[CueHeard], *,
                 stop: Callable[[], Awaitable[None]], answer: Callable[[], Awaitable[None]], flushes: bool = True) -> None:
        """`heard`: where each cue's `CueHeard` goes (the connection's record); `flushes`: the
        provider's barge-in signal makes the client drop the audio it holds (False: there is none,
        the fake only stops sending, and what was sent plays out)."""
        self.behaviour, self.clock, self.heard, self._stop, self._answer = behaviour, clock, heard, stop, answer
        self.flushes = flushes
        self.kinds: list[str] = []
        self.until_ms = -math.inf  # the client plays the reply until then (audio time)
        #: the reply is under way though nothing plays (a duplex model silent while its backend works):
        #: speech then is a cue too; None: only speech over audio it sent is
        self.busy: Callable[[], bool] | None = None
        self.cue: CueHeard | None = None  # the cue being heard
        self._yielded = asyncio.Event()
        self._tasks: set[asyncio.Future[Any]] = set()

    def replying(self, kinds: list[str]) -> None:
        """A new reply (not an answer to a cue) begins: these cues may come during it."""
        self.kinds = list(kinds)

    def sent(self, dur_ms: float) -> None:
        self.until_ms = max(self.until_ms, self.clock.ms) + dur_ms

    def speech(self, edge: str | None) -> bool:
        """An endpointer edge ("started" / "stopped" / None); True when it is a cue's (not a turn's)."""
        if edge == "started" and self.kinds and (self.clock.ms < self.until_ms or (self.busy is not None and self.busy())):
            kind = self.kinds.pop(0)
            self.cue = CueHeard(kind=kind, start_ms=self.clock.ms, reacted=self.behaviour.reacts(kind))
            self.heard.append(self.cue)
            if self.cue.reacted:
                self._yielded.clear()
                self._spawn(self._yield_to(self.cue))
            return True
        if edge == "stopped" and self.cue is not None:
            cue, self.cue = self.cue, None
            if cue.reacted:
                self._spawn(self._answer_after_yield(cue))
            return True
        return edge is not None and self.cue is not None

    async def _yield_to(self, cue: CueHeard) -> None:
        await self.clock.until(cue.start_ms + (self.behaviour.yield_after_ms or 0.0))
        now, mono = self.clock.ms, time.monotonic()
        if now < self.until_ms:  # still playing: this is where it stops (or, unflushed, where what was sent ends)
            ahead = 0.0 if self.flushes else self.until_ms - now
            cue.yield_ms, cue.yield_mono = now + ahead, mono + ahead / 1000.0 / self.clock.speed
        if self.flushes:
            self.until_ms = now
        await self._stop()
        self._yielded.set()

    async def _answer_after_yield(self, cue: CueHeard) -> None:
        await self._yielded.wait()
        cue.answered = True
        await self._answer()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        for t in list(self._tasks):
            t.cancel()


class ReplyTask:
    """A fake session's reply in progress (what a duplex cue's stop cancels) and the reply being
    spoken (what the cue's answer speaks again)."""

    def __init__(self, tasks: set[Any]) -> None:
        self.tasks = tasks  # the session's own, cancelled when it ends
        self.task: asyncio.Task[Any] | None = None
        self.current: tuple[int, Any] | None = None  # (reply number, ScriptedReply)

    def start(self, coro: Coroutine[object, object, None]) -> None:
        self.task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(self.task)
        self.task.add_done_callback(self.tasks.discard)

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def pick(self, again: tuple[int, Any] | None, next_reply: Callable[[], tuple[int, Any]], floor: Floor) -> tuple[int, Any]:
        """The reply to speak: `again` without its calls (a cue's answer), else the script's next,
        whose cues the floor then listens for."""
        if again is not None:
            n, reply = again[0], again[1].model_copy(update={"tool_calls": [], "user_transcript": None})
        else:
            n, reply = next_reply()
            floor.replying(reply.duplex)
        self.current = (n, reply)
        return n, reply
