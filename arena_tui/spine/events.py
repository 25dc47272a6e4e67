"""The one stream of typed events that crosses from runners to store, UI and judge.

Every event carries `run_id`, `t_ms` (milliseconds since run start on the run's single
monotonic timeline) and `turn_index` (None outside a turn; -1 is the greeting). Events
are immutable pydantic models discriminated by `kind`; `parse_event` turns stored JSON
back into the right class, so a replay from SQLite is the same stream as a live run. The
records they carry (`TurnResult`, `ToolCallRecord`, `DimensionScore`, …) are `records.py`'s,
read from here with the rest of the stream.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Union

from pydantic import ConfigDict, Field, TypeAdapter

from .records import CallVerdict, DimensionScore, Model, ReplaySummary, TokenUsage, TurnResult, Usage
# the rest of the records, read from here as the whole stream is (their home: records.py)
from .records import DuplexOutcome as DuplexOutcome
from .records import Interval as Interval
from .records import Latencies as Latencies
from .records import ToolCallRecord as ToolCallRecord
from .records import TurnStatus as TurnStatus
from .records import Verdict as Verdict

if TYPE_CHECKING:
    from .recorded import RecordedRun

GREETING_TURN = -1

# Sentinels written as assistant text, as in the reference harness.
EMPTY_RESPONSE = "[EMPTY_RESPONSE: No valid response after max retries]"
MODEL_ENDED_SESSION = "[MODEL_ENDED_SESSION]"
MODEL_ENDED_SESSION_EARLY = "[MODEL_ENDED_SESSION_EARLY]"

Role = Literal["user", "assistant"]
Speaker = Literal["user", "bot"]

#: statuses of a turn (`TurnStatus`) that ran to its end; `interrupted`, `error` and `lost_pace`
#: turns are played again by a resume (one rule for resume, campaign cells and progress)
FINISHED = frozenset({"ok", "no_response", "empty_response", "ended_session", "ended_early"})
#: statuses of a turn the model answered (a reply, calls, or the call that ended the session): a run whose
#: turns of the model's are none of these never answered (the engine's run outcome, every figure's note)
ANSWERED_STATUSES = frozenset({"ok", "ended_session"})
LOST_PACE: Final = "lost_pace"
INFRA_ERROR: Final = "infra_error"


def unfinished(planned: list[int], rows: dict[int, TurnResult]) -> list[int]:
    """The planned turns (in plan order) without a stored row that ran to its end (`FINISHED`):
    what a resume plays again and what keeps a campaign cell from being complete. One rule for
    `arena-tui resume`, `campaign resume` and a cell's progress, so none skips what another replays."""
    return [i for i in planned if i not in rows or rows[i].status not in FINISHED]


class Event(Model):
    run_id: str
    t_ms: float
    turn_index: int | None = None


def wall_now() -> datetime:
    """The wall clock (UTC) that `run_started`/`run_ended` carry: the run timeline is audio time."""
    return datetime.now(UTC)


class RunStarted(Event):
    kind: Literal["run_started"] = "run_started"
    benchmark: str
    model: str
    provider: str
    simulator: bool = False
    turn_indices: list[int]
    #: the run's settings as stored (`spine.settings.RunSettings.public()`, read back by `from_recorded`),
    #: with what the loops add for display; never holds secrets
    config: dict[str, Any] = Field(default_factory=dict)
    # How many times faster than the wall clock the run timeline ran (wall ms = t_ms / speed);
    # latency measured at speed != 1 is not comparable. None: a stream recorded before the field.
    speed: float | None = None
    wall_time: datetime | None = None  # wall clock at t_ms = 0 (None: recorded before the field)

    @property
    def recorded(self) -> RecordedRun:
        """Its settings read (`spine.recorded`): how every consumer reads `config`."""
        from .recorded import RecordedRun  # deferred: the settings' parsers (numpy, for conditions) load only when a run's settings are read

        return RecordedRun.of(self.config)

    @property
    def timeline_speed(self) -> float | None:
        """The recorded speed; for older streams the config's `speed`; None when neither says."""
        return self.speed if self.speed is not None else self.recorded.speed
    # `Benchmark.snapshot()` of what ran (turns, tools, prompt, knowledge base): the store keeps it
    # once per content, so the run is judged and exported without the data folder
    benchmark_snapshot: dict[str, Any] | None = Field(default=None, repr=False)


class SessionOpened(Event):
    kind: Literal["session_opened"] = "session_opened"
    session: int
    detail: str = ""


class TurnStarted(Event):
    kind: Literal["turn_started"] = "turn_started"
    attempt: int = 0
    input_text: str = ""
    user_audio_ms: float = 0.0


class Level(Event):
    """RMS and peak of one ~50 ms block of played audio, for the meters."""

    kind: Literal["level"] = "level"
    source: Speaker
    rms_dbfs: float
    peak_dbfs: float
    block_ms: float = 50.0


class SpeechBoundary(Event):
    kind: Literal[
        "user_speech_started", "user_speech_stopped", "bot_speech_started", "bot_speech_stopped"
    ]
    origin: Literal["timeline", "vad", "provider"] = "timeline"


class TranscriptDelta(Event):
    kind: Literal["transcript_delta"] = "transcript_delta"
    role: Role
    text: str
    final: bool = False


class ToolCalled(Event):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    is_duplicate: bool = False
    made_by: Literal["front", "back"] | None = None  # a delegating model's: which of its models made it
    made_by_model: str | None = None


class ToolAnswered(Event):
    """The payload that was sent back to the model for this call."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    status: str
    response: Any = None


class Overlap(Event, Interval):
    """Both sides audible at once, over this span of the run timeline."""

    kind: Literal["overlap"] = "overlap"


class DuplexPlayed(Event):
    """A turn's duplex cue (`Turn.duplex`) began playing into the session; `t_ms` is where its WAV starts."""

    kind: Literal["duplex"] = "duplex"
    index: int
    cue: str  # interruption | backchannel | side_speech
    text: str = ""
    at_ms: float = 0.0  # the script's offset after the reply's first audible speech


class Interruption(Event):
    kind: Literal["interruption"] = "interruption"
    # bot_truncated: the reply was cut off; *_barge_in: that side started speaking over the other
    cause: Literal["bot_truncated", "user_barge_in", "bot_barge_in"]
    detail: str = ""


class SessionRotated(Event):
    kind: Literal["session_rotated"] = "session_rotated"
    reason: str  # age | context_budget | disconnect | error | retry | slow_reply | provider_go_away | provider_reset | provider_reconnect
    from_session: int
    to_session: int
    replayed: ReplaySummary


class Reconnected(Event):
    kind: Literal["reconnected"] = "reconnected"
    session: int
    reason: str
    attempt: int = 1


class Retry(Event):
    kind: Literal["retry"] = "retry"
    attempt: int
    reason: str
    session: int | None = None  # the session the retry plays into (a fresh one when the last heard the turn)


class Waiting(Event):
    """The engine is waiting on something past the usual end-of-turn window (a reply, the reply
    after a tool answer, a greeting) and gives up at `deadline_t_ms` (run timeline): the monitor
    shows what and how long is left instead of a frozen screen."""

    kind: Literal["waiting"] = "waiting"
    what: str  # e.g. "a reply to turn 3", "the reply after check_availability"
    deadline_t_ms: float


class TurnEnded(Event):
    kind: Literal["turn_ended"] = "turn_ended"
    result: TurnResult


class AudioChunk(Event):
    """Raw PCM16 for the store (per-turn user/bot audio, or a stereo conversation slice).

    `start_ms` is where the slice begins on the timeline. Conversation slices are in time order;
    the gap between two is silence, of which the reader keeps up to `spine.audio.SILENCE_KEPT_MS`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    kind: Literal["audio"] = "audio"
    track: Literal["user", "bot", "conversation"]
    sample_rate: int
    channels: int = 1
    start_ms: float = 0.0
    pcm: bytes


class UsageReported(Event):
    """A service said what it used (a realtime response's tokens, an STT's audio seconds, a TTS's
    characters), or a session closed after so long connected: one report, as it came, on the turn
    under way (None: between turns). What it cost is `arena_tui.cost`'s, never stored."""

    kind: Literal["usage"] = "usage"
    usage: Usage


PACE_LOST = "pacing"  # ErrorEvent.where: the engine's process fell behind the audio clock in this turn
SLOW_REPLY = "slow_reply"  # ErrorEvent.where: a reply still coming at the turn's cap (kept; the session is replaced)


class ErrorEvent(Event):
    kind: Literal["error"] = "error"
    where: str  # e.g. "provider", "engine", "judge", "store", PACE_LOST
    message: str
    fatal: bool = False


#: how much of the run the judge saw when it made a judgement (`Judgement.scope`):
#: - live: one turn as it arrived, with the run so far: provisional until the whole-run judgement lands
#: - turn: one turn re-judged on request (`judge RUN --turn N`, the TUI's `r`), with the run before it
#: - run: the whole run in one request (the reference's judgement: realigned across turns)
#: - isolated: a rehydrated run's turn alone, the golden turns before it its only history
JudgeScope = Literal["live", "turn", "run", "isolated"]
#: how a scope reads on screen
SCOPE_TEXT = {"live": "live, provisional", "turn": "one turn", "run": "whole run", "isolated": "turn in isolation"}
PROVISIONAL_NOTE = "provisional: scored live, turn by turn; the whole-run judgement replaces it when the run completes"
class Agreement(Model):
    """How a turn's repeated judgings agreed (`arena-tui judge RUN --repeat N`): the revision that
    carries it holds the majority verdict of each dimension (`arena_tui.judge.agreement`)."""

    asked: int  # N: the judgings asked for
    revisions: list[int]  # the verdict of each judging that gave one (its standing revision): n of them
    agree: dict[str, int] = Field(default_factory=dict)  # dimension -> judgings whose verdict is the majority's

    @property
    def judgings(self) -> int:
        return len(self.revisions)

    def share(self, dimension: str) -> float | None:
        """The share of the judgings that gave the majority verdict (None: not judged on it)."""
        n = self.agree.get(dimension)
        return n / self.judgings if n is not None and self.judgings else None


class Review(Model):
    """A person's verdict on a turn (`arena-tui review`): who gave it and why. The revision that
    carries it scores only the dimensions the person judged, and those verdicts win over the
    judge's, also over any later judging, until a later review `withdraw`s them
    (`arena_tui.verdicts.standing`; `arena_tui.judge.human` records both)."""

    by: str
    reason: str
    withdraw: bool = False  # takes the person's verdicts on this turn back: the judge's count again
    at: datetime | None = None  # the wall clock when it was given (None: recorded before the field)


class Judgement(Event):
    """One revision of one turn's scores. Newer revisions supersede; none is overwritten.

    A whole-run judgement also publishes one with `turn_index` None: the request's token usage,
    the judge's notes on the run (`notes`) or its error; no turn's verdict."""

    kind: Literal["judgement"] = "judgement"
    judge: str  # e.g. "openai:gpt-5-mini", "bedrock:claude-…", "heuristic"
    judge_version: str | None = None  # our rubric's version the judge was asked by (None: before it was kept)
    revision: int = 1
    phase: Literal[1, 2] = 1
    rule: str | None = None  # the phase-2 rule that produced this revision
    scores: dict[str, DimensionScore] = Field(default_factory=dict)
    root_cause: str | None = None
    fabricated_action: bool | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None  # set => judge_error: the turn is neither passed nor dropped
    heuristic: bool = False
    # Inputs to the phase-2 rules, kept so phase 2 can be re-run from the store.
    call_verdicts: list[CallVerdict] = Field(default_factory=list)
    unexecuted_reference: bool | None = None  # the turn asks about an earlier action that never ran
    words_contradict_actions: bool | None = None  # says it will wait for the user, yet makes the call in the same turn
    scope: JudgeScope | None = None  # what the judge saw (`JudgeScope`); None: before scopes were kept
    notes: str | None = None  # the judge's notes on the whole run (realignment, call tracking)

    @property
    def provisional(self) -> bool:
        """Scored live, turn by turn: the whole-run judgement that follows a completed run replaces it."""
        return self.scope == "live"
    agreement: Agreement | None = None  # a majority of repeated judgings (`rule="majority"`), how they agreed
    # why the turn failed, as the judge (or the person) named it: `arena_tui.spine.causes` names; the
    # causes code decides are read from the run (`arena_tui.judge.causes`), never stored here
    causes: list[str] = Field(default_factory=list)
    review: Review | None = None  # a person's verdict (`judge` is then "human:<by>"), not a judge's


class RunResumed(Event):
    """An interrupted run goes on in a new session from its first unfinished turn, the finished
    turns' history replayed (`replayed`: what the new session was given)."""

    kind: Literal["run_resumed"] = "run_resumed"
    from_turn: int
    turns: list[int]  # the turns this resumption runs
    replayed_turns: list[int]  # the finished turns whose history was replayed
    replayed: ReplaySummary


class RunEnded(Event):
    kind: Literal["run_ended"] = "run_ended"
    status: Literal["completed", "interrupted", "failed"]
    reason: str = ""
    wall_time: datetime | None = None  # wall clock of the end (None: recorded before the field)


class RunSuperseded(Event):
    """This run no longer counts: `by` replaced it (a campaign re-ran its cell from scratch, e.g.
    slower after our machine lost pace). Its record stays; comparisons leave it out
    (`runs.superseded_by`, `compare.selection`), so one cell is never counted twice."""

    kind: Literal["run_superseded"] = "run_superseded"
    by: str
    reason: str = ""


RunEvent = Annotated[
    Union[
        RunStarted,
        SessionOpened,
        TurnStarted,
        Level,
        SpeechBoundary,
        TranscriptDelta,
        ToolCalled,
        ToolAnswered,
        Overlap,
        DuplexPlayed,
        Interruption,
        SessionRotated,
        Reconnected,
        Retry,
        Waiting,
        TurnEnded,
        AudioChunk,
        UsageReported,
        ErrorEvent,
        Judgement,
        RunResumed,
        RunEnded,
        RunSuperseded,
    ],
    Field(discriminator="kind"),
]

_adapter: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def parse_event(data: dict[str, Any] | str | bytes) -> RunEvent:
    """Rebuild a typed event from a dict or its JSON."""
    if isinstance(data, (str, bytes)):
        return _adapter.validate_json(data)
    return _adapter.validate_python(data)


def event_kinds() -> list[str]:
    """Every kind the stream can carry (for filters and docs)."""
    kinds: list[str] = []
    for cls in RunEvent.__origin__.__args__:  # type: ignore[attr-defined]  # Annotated[Union[...]]: typing's runtime parts
        kinds.extend(cls.model_fields["kind"].annotation.__args__)
    return kinds
