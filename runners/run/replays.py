"""A run's sessions replaced, and what each new one is replayed: the session closed, a new one
opened with the finished turns' history cut to the replay budget (what was left out announced),
the rotation reported (`session_rotated`, `reconnected`); unplanned replacements in a row counted
until the run gives up (on an infrastructure failure, an `InfraError`). A seeded run's first
session (resumed, rehydrated) is given its seed's history, chosen once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from arena_tui.spine.events import ErrorEvent, Reconnected, ReplaySummary, RunEvent, SessionRotated
from arena_tui.spine.settings import Rotation

from ..base import HistoryItem, ProviderRunner, RunError
from ..rotation import History, select_replay, turn_span
from .history import Seed
from .infra import InfraError
from .session_base import SessionBase

UNPLANNED = ("disconnect", "error", "timeout", "retry", "slow_reply")  # rotation reasons that are failures, not policy

S = TypeVar("S", bound=SessionBase)


class ReplayHost(Protocol):
    """What the replacements read of their run (`base.RunBase`): its session and turn under way, its
    history and seed, its provider and rotation policy, and its events."""

    provider: ProviderRunner
    rotation: Rotation
    history: History
    seed: Seed | None
    turn_index: int | None

    @property
    def session(self) -> SessionBase | None: ...

    def ev(self, cls: type, turn_index: int | None = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...


class Replays:
    """`run`'s session replacements: `reconnects` (every one) and `failing` (unplanned ones in a row
    without a finished turn: the turn loop sets it back to 0 when a turn is answered)."""

    def __init__(self, run: ReplayHost) -> None:
        self.run = run
        self.reconnects = 0
        self.failing = 0  # consecutive unplanned reconnects without a finished turn
        self._seeded: tuple[list[HistoryItem], ReplaySummary] | None = None

    async def replace(self, reason: str, why: str, open_new: Callable[[list[HistoryItem], str], Awaitable[S]],
                      infra: str | None = None) -> S:
        """Close the session, open a new one with the history replayed (cut to the budget, drops
        announced), and report the rotation. Unplanned reasons count towards giving up; giving up
        on an infrastructure failure (`infra`, `infra.infra_failure`'s line) is an `InfraError`."""
        run = self.run
        old = run.session
        from_n = old.number if old else 0
        if old is not None:
            await old.close()
        self.reconnects += 1
        if reason in UNPLANNED:
            self.failing += 1
            if self.failing > run.rotation.max_reconnects:
                said = " ".join((infra or why).split())  # one line, whatever the library's message spans
                gave_up = f"turn {run.turn_index}: gave up after {self.failing - 1} reconnects in a row ({reason}: {said})"
                raise InfraError(gave_up, infra) if infra else RunError(gave_up)
        items, summary = self.of(run.history.items, "rotation")
        session = await open_new(items, f"rotation ({reason})")
        run.publish(run.ev(SessionRotated, reason=reason, from_session=from_n, to_session=session.number, replayed=summary))
        run.publish(run.ev(Reconnected, session=session.number, reason=reason, attempt=self.reconnects))
        return session

    def of(self, history: list[HistoryItem], what: str = "replay") -> tuple[list[HistoryItem], ReplaySummary]:
        """The part of `history` a new session is given (cut to the budget, drops announced).
        A seeded first session has no earlier one the provider could carry over: we send it."""
        run = self.run
        strategy = run.provider.replay_strategy()
        if what != "rotation" and strategy == "provider_resumption":
            strategy = "full_history"
        items, summary = select_replay(history, run.rotation.history_budget_chars, strategy)
        if summary.dropped_messages:
            summary = summary.model_copy(
                update={"note": f"{summary.dropped_messages} older message(s) left out: over the replay budget of "
                        f"{run.rotation.history_budget_chars:,} chars"}
            )
            run.publish(run.ev(ErrorEvent, where="engine", message=f"{what}: {summary.note}", fatal=False))
        return items, summary

    def seeded(self) -> tuple[list[HistoryItem], ReplaySummary]:
        """What the first session of a seeded run is given (chosen once, drops announced once)."""
        seed = self.run.seed
        assert seed is not None
        if self._seeded is None:
            self._seeded = self.of(seed.history)
        return self._seeded

    def seed_detail(self) -> str:
        """How the first session of a seeded run says it opened (`session_opened`'s detail)."""
        seed = self.run.seed
        assert seed is not None
        _, summary = self.seeded()
        span = turn_span(seed.turns())
        what = f"{summary.messages} msgs, {summary.tool_calls} calls, {summary.chars} chars"
        return f"{seed.detail or 'seeded'}: {span} replayed ({what})"
