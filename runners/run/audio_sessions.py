"""An audio run's sessions: each opened (its paced input's start is the session's audio time 0),
replaced when it died, was retired (a slow reply) or its rotation is due (`rotation.rotation_due`:
age, context size), with the history replayed, and settled before the next turn: the reply its
kickoff asked for waited out (the handshake), or, asked nothing, its setup taken in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.events import ErrorEvent, RunEvent
from arena_tui.spine.settings import Rotation

from ..base import HistoryItem, SessionSpec
from ..rotation import rotation_due
from .audio_attempt import Attempt
from .history import CONTINUE_PROMPT
from .session import AudioRunHooks, Session


class Replacing(Protocol):
    """Who replaces a session with the history replayed (`replays.Replays`)."""

    async def replace(self, reason: str, why: str, open_new: Callable[[list[HistoryItem], str], Awaitable[Session]],
                      infra: str | None = None) -> Session: ...


class SessionHost(AudioRunHooks, Protocol):
    """What the sessions take of their run (`audio.AudioRun`): what a session uses of it (it is
    each session's `run`), the session under way, and the run life's session bookkeeping
    (`base.RunBase`: numbers, specs, the opened event, its `replays`)."""

    benchmark: Benchmark
    rotation: Rotation
    session: Session | None

    def now(self) -> float: ...

    def ev(self, cls: type, turn_index: int | None = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...

    def next_session_number(self) -> int: ...

    def spec(self, kickoff: str | None, history: list[HistoryItem] | None = None) -> SessionSpec: ...

    def session_opened(self, session: Session, detail: str, t_ms: float | None = None) -> None: ...

    @property
    def replays(self) -> Replacing: ...


class Kickoffs(Protocol):
    """How a new session's kickoff reply is waited out (`turn_end.TurnEnd`)."""

    async def handshake(self, turn_index: int | None) -> Attempt: ...

    def advance(self, now: float) -> None: ...


class SessionKeeper:
    """Opens, replaces and settles `run`'s sessions."""

    def __init__(self, run: SessionHost, kickoffs: Kickoffs) -> None:
        self.run = run
        self.kickoffs = kickoffs

    async def open(self, kickoff: str | None, history: list[HistoryItem] | None = None, detail: str = "") -> Session:
        run = self.run
        session = Session(run, run.next_session_number(), run.spec(kickoff, history))
        run.session = session
        await session.open()
        # t_ms of session_opened is where the session's input audio starts (its audio time 0).
        assert session.input is not None and session.input.start_ms is not None
        run.session_opened(session, detail, t_ms=session.input.start_ms)
        return session

    async def rotate(self, reason: str) -> None:
        """Replace the current session, replaying the history, then settle it (`settle_opening`)."""
        old = self.run.session
        why = old.failed if old is not None and old.failed else "connection closed"
        await self.run.replays.replace(
            reason, why, lambda items, detail: self.open(self.continuation(items), items, detail=detail),
            old.infra if old is not None and not old.alive() else None,
        )
        await self.settle_opening()

    def continuation(self, items: list[HistoryItem]) -> str | None:
        """The kickoff of a session that goes on from `items`: none — the history is seeded and
        nothing asked, so no reply can land in the next turn — unless the provider takes history
        in only when asked to answer it (`history_needs_reply`)."""
        return CONTINUE_PROMPT if items and self.run.provider.history_needs_reply(self.run.config) else None

    async def settle_opening(self) -> None:
        """What the new session owes before the next turn: the reply its kickoff asked for (the
        handshake, on no turn), or, asked nothing, its setup (`settle`)."""
        assert self.run.session is not None
        if self.run.session.spec.kickoff is not None:
            await self.kickoffs.handshake(None)
        else:
            await self.settle()

    async def settle(self) -> None:
        """A session asked for nothing: wait until it has taken its setup and seeded history
        (`ProviderRunner.session_ready`), at most as long as a kickoff's reply may take to start."""
        run = self.run
        s = run.session
        floor = run.config.watchdog.min_wall_ms * run.config.speed  # provider setup is wall-clock bound
        wait = max(run.config.greeting.start_timeout_ms, floor)
        until = run.now() + wait
        while s is not None and s.alive() and s.llm is not None and not run.provider.session_ready(s.llm):
            if run.now() >= until:
                run.publish(run.ev(ErrorEvent, where="engine", fatal=False, message=(
                    f"session {s.number} did not report its setup done within {wait:,.0f} ms (audio time); "
                    "the next turn goes on, its first words may go unheard")))
                return
            await run.clock.sleep(20)
            self.kickoffs.advance(run.now())

    async def ensure(self) -> None:
        """Before a turn: a dead or retired session replaced, and one whose rotation is due."""
        s = self.run.session
        if s is None:
            return
        if not s.alive():
            await self.rotate("error" if s.failed else "disconnect")
            return
        if s.retire:
            await self.rotate(s.retire)
            return
        run = self.run
        reason = rotation_due(run.rotation, run.now() - s.opened_ms, len(run.benchmark.system_prompt) + s.context_chars())
        if reason:
            await self.rotate(reason)
