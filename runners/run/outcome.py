"""What a turn's ending means and what a run's does, one rule each: a turn's status from how its
last attempt ended (`turn_status`: an attempt lost to infrastructure is never the model's
silence), whether the model answered it (`answered`), the run-outcome rule (`unanswered_run`: a
run in which no turn got an answer failed), and the status and reason of a run that raised."""

from __future__ import annotations

from arena_tui.spine.events import TurnStatus
from arena_tui.spine.events import ANSWERED_STATUSES, EMPTY_RESPONSE, INFRA_ERROR, LOST_PACE, MODEL_ENDED_SESSION, TurnResult

from ..base import RunError
from ..pace import LostPace
from ..rotation import turn_span
from .infra import InfraError


def turn_status(outcome: str, ends_session: bool, infra: str | None = None) -> tuple[TurnStatus, str | None]:
    """(TurnResult status, sentinel) for how a turn's last attempt ended. `infra`: the
    infrastructure failure every attempt of the turn was lost to (`infra.infra_failure`; None when
    the model got to answer once): such a turn is `infra_error`, never the model's no_response."""
    if ends_session:
        return "ended_session", MODEL_ENDED_SESSION
    if outcome == "ok":
        return "ok", None
    if infra is not None:
        return INFRA_ERROR, None
    return ("empty_response" if outcome == "empty" else "no_response"), EMPTY_RESPONSE


def answered(status: str) -> bool:
    """Whether a turn got an answer from the model: a reply, calls, or the call that ended the session."""
    return status in ANSWERED_STATUSES


def unanswered_run(results: list[TurnResult]) -> str | None:
    """The run-outcome rule: a run in which no turn got an answer (an unreachable endpoint, a model
    that never replied) failed, whatever its loop: why, naming the turns and the last error. None:
    it completed (one answered turn is enough; so is the model ending the session with a call)."""
    # a turn our machine lost pace on is no word on the model either way: it is played again
    played = [r for r in results if r.turn_index >= 0 and r.status not in ("ended_early", "lost_pace")]
    if not played or any(answered(r.status) for r in played):
        return None
    counts: dict[str, int] = {}
    for r in played:
        counts[r.status] = counts.get(r.status, 0) + 1
    ended = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    error = next((r.error for r in reversed(played) if r.error), None)
    turns = sorted(r.turn_index for r in played)
    return f"no turn got an answer: {turn_span(turns)} ended {ended}" + (f" (last error: {error})" if error else "")


def failure_message(e: BaseException) -> str:
    """What a failed run says: our own RunError as written, anything else with its type."""
    return str(e) if isinstance(e, RunError) else f"{type(e).__name__}: {e}"


def failed_status(e: BaseException) -> TurnStatus:
    """The status of the turn under way when the run fails with `e`: `lost_pace` (our machine),
    `infra_error` (an infrastructure failure the run gave up on), else `error`; none is a verdict."""
    return LOST_PACE if isinstance(e, LostPace) else INFRA_ERROR if isinstance(e, InfraError) else "error"


def run_failure(e: BaseException, results: list[TurnResult]) -> BaseException:
    """Why a run that raised `e` failed, as it is recorded and said: a run given up on an
    infrastructure failure in which no turn got an answer fails by the run-outcome rule
    (`unanswered_run`: "no turn got an answer: …", naming that failure); anything else as raised."""
    if isinstance(e, InfraError) and (why := unanswered_run(results)) is not None:
        return InfraError(why, e.failure)
    return e
