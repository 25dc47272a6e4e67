"""The records the event stream carries: a turn's result (`TurnResult`: its status, calls,
latencies, speech intervals, duplex outcomes), what a rotated session was given (`ReplaySummary`),
token counts, and the judge's say on a dimension or a call. Immutable pydantic models; the events
that carry them are `events.py`'s, and every layer reads them from there."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TurnStatus = Literal[
    "ok",  # answered (speech and/or tool calls)
    "no_response",  # nothing at all after the retries
    "empty_response",  # responded, but no speech (e.g. control tokens only)
    "ended_session",  # the model called end_session on this turn
    "ended_early",  # a later turn never ran because the model ended the session
    "error",  # the engine could not run the turn
    "interrupted",  # the run was stopped while this turn was under way
    "lost_pace",  # our machine sent the user audio late: what was recorded is kept, but it is no
    # measurement of the model (counted in no pass rate or latency) and the turn is played again
    "infra_error",  # lost to an infrastructure failure (endpoint unreachable, auth refused, provider
    # 5xx): the model never got to answer; `error` names the failure; never a verdict on the model
]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Interval(Model):
    """A span on the run timeline, in ms."""

    start_ms: float
    end_ms: float

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms


class ToolCallRecord(Model):
    """One function call the model made and what it was answered with."""

    call_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    # matched | unexpected_tool_call | arg_mismatch | not_available | duplicate_skipped | end_session
    status: str
    response: Any = None
    is_duplicate: bool = False
    expected_index: int | None = None  # which expected call of the turn it satisfied
    t_ms: float | None = None
    #: which of a delegating model's two models made it: "front" (the conversational model) or "back"
    #: (the backend it handed the work to); None: the model is one model
    made_by: Literal["front", "back"] | None = None
    made_by_model: str | None = None  # that model's id


class Latencies(Model):
    """Each figure named for what it measures; all from our own timeline except provider_ttfb_ms."""

    voice_to_voice_ms: float | None = None  # user speech end (VAD) -> audible bot speech (VAD)
    pipeline_ttfb_ms: float | None = None  # user speech end (VAD) -> first bot audio frame played
    provider_ttfb_ms: float | None = None  # what the provider/Pipecat reported; not ours
    leading_silence_ms: float | None = None  # first bot frame -> audible bot speech
    # a cascade's stages on our clock, each from the previous one's mark (they add up to the
    # pipeline TTFB): user speech end (VAD) -> the STT's final transcript -> the user turn's end
    # (Pipecat's VAD and turn strategy hand the LLM its context) -> the LLM's first text token
    # (tool round trips included) -> the TTS's first audio frame played
    stt_ms: float | None = None
    turn_ms: float | None = None
    llm_ms: float | None = None
    tts_ms: float | None = None

    def stages(self) -> dict[str, float] | None:
        """A cascade's stage breakdown (stt, turn, llm, tts), or None for a run without stages."""
        got = {"stt": self.stt_ms, "turn": self.turn_ms, "llm": self.llm_ms, "tts": self.tts_ms}
        known = {k: v for k, v in got.items() if v is not None}
        return known if len(known) == len(got) else None


class DuplexOutcome(Model):
    """One duplex cue of a turn (user speech scripted into the bot's reply) as our own timeline
    measured it; the rules are `arena_tui.spine.duplex`. None where it could not be measured."""

    index: int  # the cue's place in the turn's `duplex` list
    kind: str  # interruption | backchannel | side_speech
    played: Interval | None = None  # where its WAV played (None: never: the reply never became audible)
    speech: Interval | None = None  # its speech (VAD), on the timeline
    bot_speaking: bool = False  # the bot was speaking at its onset (else there was nothing to yield)
    bot_stop_ms: float | None = None  # where that stretch of bot speech stopped
    yield_ms: float | None = None  # its onset -> the bot's audio stopped, when within `YIELD_WINDOW_MS`
    yielded: bool | None = None  # None: the bot was not speaking at its onset
    answered: bool | None = None  # the bot, having stopped, spoke again soon after it ended


class TurnResult(Model):
    """Everything measured about one benchmark turn; the payload of `turn_ended`."""

    turn_index: int
    status: TurnStatus
    user_text: str  # the turn's scripted input
    user_transcript: str | None = None  # what the provider heard, when it says
    assistant_text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    latencies: Latencies = Field(default_factory=Latencies)
    user_audio: Interval | None = None  # where the user WAV was played
    user_speech: list[Interval] = Field(default_factory=list)  # VAD inside the WAV
    bot_speech: list[Interval] = Field(default_factory=list)
    overlap_ms: float = 0.0
    interrupted: bool = False
    no_audio: bool = False  # the reply had words but no audio at all (e.g. GLM air's audio backend down)
    retries: int = 0
    reconnects: int = 0
    session: int = 1
    tokens: dict[str, int] = Field(default_factory=dict)
    sentinel: str | None = None
    error: str | None = None
    # duplex (None: a turn recorded before these fields, or not measured): each scripted cue's
    # outcome, and how many times the bot's speech began while the user was speaking
    duplex: list[DuplexOutcome] | None = None
    agent_interruptions: int | None = None
    #: how long before the user finished the bot began its reply (ms; None: it waited, or not measured)
    early_start_ms: float | None = None


class ReplaySummary(Model):
    """What a new session was given of the old one, so a rotation can be verified."""

    strategy: str  # full_history | tool_priority | zero_context | provider_resumption | none
    messages: int = 0
    tool_calls: int = 0
    chars: int = 0
    dropped_messages: int = 0
    note: str = ""


class TokenUsage(Model):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0


UsageService = Literal["llm", "stt", "tts", "session"]


class Usage(Model):
    """What one service said it used, as it said it (the `usage` event's payload): an LLM's
    tokens as Pipecat's `LLMTokenUsage` carries them (`prompt_tokens` gross of the prompt cache
    or net of it as the provider reports, `total_tokens` gross either way; the audio share of
    input, output and cache reads), an STT's audio seconds, a TTS's characters; a `session`
    record is the seconds a session stayed connected, on our clock in wall time (what services
    billed by the minute charge, and report nothing of). Priced by `arena_tui.cost` alone."""

    service: UsageService = "llm"
    model: str = ""  # the model the service named (its Pipecat `model_name`)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_tokens: int = 0
    input_audio_tokens: int = 0
    output_audio_tokens: int = 0
    cache_read_input_audio_tokens: int = 0
    audio_seconds: float = 0.0  # stt: seconds of audio sent to it
    characters: int = 0  # tts: characters sent to it
    session_seconds: float = 0.0  # session: wall seconds connected


Verdict = Literal["pass", "fail", "na"]


class DimensionScore(Model):
    verdict: Verdict
    reasoning: str = ""
    by: str | None = None  # the person whose verdict this is (`Review`); None: the judge's or code's


class CallVerdict(Model):
    """The judge's say on whether an actual call means the same as an expected one.

    Only consulted by phase 2 where canonical matching fails; IDs must still match exactly.
    """

    call_id: str
    expected_turn: int
    expected_index: int = 0
    equivalent: bool
    reasoning: str = ""
