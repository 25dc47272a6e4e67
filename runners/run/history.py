"""What a run's sessions are told of the conversation: the history rule (`replayable`: a turn
the model answered is replayed with its answer, any other as the user's words alone), and the
conversations a first session starts from (`Seed`: a resumed run's finished turns, `history_from_results`; a rehydrated turn's golden
one, `golden_history`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from arena_tui.spine.benchmark import Turn
from arena_tui.spine.events import ToolCallRecord, TurnResult

from ..base import HistoryItem
from ..rotation import History
from ..tools import success_payload
from .outcome import answered

#: the kickoff of a session seeded with history, only for a provider that takes history in
#: only when asked to answer it (`ProviderRunner.history_needs_reply`); its reply is the
#: session's handshake. Every other seeded session is asked nothing.
CONTINUE_PROMPT = "Please continue our conversation."


def replayable(status: str) -> bool:
    """The history rule: a turn that got an answer (`answered`) is replayed with it (reply text,
    tool calls and results); one that got none is replayed as the user's words alone."""
    return answered(status)


def remember_turn(
    history: History, turn_index: int, user_text: str, status: str, assistant_text: str, tool_calls: list[ToolCallRecord]
) -> None:
    """Add a finished turn to `history` by the history rule (`replayable`)."""
    if replayable(status):
        history.add_turn(turn_index, user_text, assistant_text, tool_calls)
    else:
        history.add_turn(turn_index, user_text, "", [])


def history_from_results(results: list[TurnResult]) -> list[HistoryItem]:
    """The history of finished turns as a resumed run replays it: what `RunBase.remember` kept
    when each turn ended (the same rule, `replayable`), from the stored results."""
    history = History()
    for r in sorted(results, key=lambda r: r.turn_index):
        if r.turn_index < 0:
            continue  # the greeting is not replayed (rotations never replay it either)
        remember_turn(history, r.turn_index, r.user_text, r.status, r.assistant_text, r.tool_calls)
    return history.items


def golden_history(turns: list[Turn]) -> list[HistoryItem]:
    """The golden conversation of `turns` (a rehydrated turn's seed): each turn's input, its
    expected calls answered with their scripted results, then its golden reply."""
    history = History()
    for t in turns:
        calls = [
            ToolCallRecord(
                call_id=f"golden_{t.turn_index}_{i}", name=c.name, args=c.args, status="matched",
                response=resp if resp is not None else success_payload(), expected_index=i,
            )
            for i, (c, resp) in enumerate(zip(t.expected_calls, t.expected_responses, strict=True))
        ]
        history.add_turn(t.turn_index, t.input, t.golden_text, calls)
    return history.items


@dataclass(frozen=True)
class Seed:
    """A run (or one rehydrated turn) whose first session starts from a conversation already
    held, replayed through the provider's replay path like a rotation's.

    `resumed_from` set: an interrupted run goes on at that turn (`run_resumed` instead of
    `run_started`; the finished turns' history, and their records in `done`: the run's outcome
    counts them). Unset: a rehydrated turn (golden history). `start_ms` is where the run's
    timeline continues, so its events stay in time order; `last_session` is the highest session
    number the run already recorded, so the resumption's sessions are numbered after it (a
    session number names one session of the run, never two)."""

    history: list[HistoryItem]
    start_ms: float = 0.0
    resumed_from: int | None = None
    detail: str = ""
    done: list[TurnResult] = field(default_factory=list)
    last_session: int = 0

    def turns(self) -> list[int]:
        return sorted({h.turn_index for h in self.history})
