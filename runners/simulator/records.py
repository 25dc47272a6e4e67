"""What the simulator saw and did, kept for assertions and for validating the engine's figures.

All times are AUDIO TIME: ms of input audio received on that connection (samples / 24),
so they do not depend on wall clock or on how fast the client streams.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runners.fakes.record import ReceivedAudio


class ClientEventRecord(BaseModel):
    """One client event as received. Audio appends keep only their byte count, and consecutive
    appends of a session are one record (their bytes summed, at the first one's audio time)."""

    session: int
    audio_ms: float
    type: str
    payload: dict[str, Any]


class ToolOutputRecord(BaseModel):
    call_id: str
    name: str | None = None  # the function the simulator called with this id, if it did
    turn_index: int | None = None
    output: str | None = None  # exactly what arrived
    parsed: Any = None  # output as JSON when it is JSON
    audio_ms: float = 0.0


class SimCall(BaseModel):
    """A function call the simulator made."""

    call_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    turn_index: int
    for_turn: int  # the turn whose expected call this is (differs on early/late_call)
    wrong: bool = False


class SessionRecord(BaseModel):
    """One websocket connection."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: int
    path: str = ""
    model: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)  # secrets redacted
    auth_present: bool = False
    session_updates: list[dict[str, Any]] = Field(default_factory=list)
    instructions: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    turn_detection: dict[str, Any] | None = None
    items: list[dict[str, Any]] = Field(default_factory=list)  # conversation.item.create items
    tool_outputs: dict[str, ToolOutputRecord] = Field(default_factory=dict)
    calls: list[SimCall] = Field(default_factory=list)
    truncations: list[dict[str, Any]] = Field(default_factory=list)
    errors_sent: list[dict[str, Any]] = Field(default_factory=list)  # error events the server sent
    audio_ms: float = 0.0
    received: ReceivedAudio = Field(default_factory=ReceivedAudio, exclude=True)  # the user audio itself, bounded
    closed: bool = False
    close_code: int | None = None
    close_reason: str | None = None
    #: when the simulator took the connection and when its handler ended (this host's monotonic
    #: clock, wall s; None: still open): how many sessions it held at once, as a provider counts them
    opened_s: float = 0.0
    closed_s: float | None = None

    def item_texts(self) -> list[str]:
        out: list[str] = []
        for item in self.items:
            for part in item.get("content") or []:
                txt = part.get("text") or part.get("transcript")
                if txt:
                    out.append(txt)
        return out


class TurnTruth(BaseModel):
    """What the simulator did on one attempt of one turn (turn -1: the greeting)."""

    turn_index: int
    session: int
    attempt: int = 1
    identified_by: str = "fingerprint"  # fingerprint | fallback | greeting | manual_commit
    match_offset_ms: float | None = None  # where in the WAV the matched onset lies
    speech_start_ms: float | None = None  # VAD: speech began (audio time)
    speech_started_event_ms: float | None = None  # when speech_started was sent (start + 100 ms)
    speech_end_ms: float | None = None  # VAD: last speech before the silence
    speech_stopped_ms: float | None = None  # speech_stopped sent: end + silence_duration_ms
    fault: str | None = None
    injected_delay_ms: float = 0.0  # audio time waited on purpose (trigger -> first delta, minus tool round trip)
    response_due_ms: float | None = None  # trigger + injected delay
    first_audio_ms: float | None = None  # audio time when the first audio delta was sent
    # time.monotonic() once the first audio delta has left (CLOCK_MONOTONIC is the machine's: a client on
    # this machine can place it on its own timeline, whatever lag the simulator's audio clock has under load)
    first_audio_sent_mono: float | None = None
    first_audio_after_stop_ms: float | None = None  # first_audio_ms - speech_stopped_ms
    first_audio_after_start_ms: float | None = None  # first_audio_ms - speech_start_ms (barge-in)
    calls_sent_ms: float | None = None  # function calls went out (audio time)
    tool_roundtrip_ms: float = 0.0  # calls sent -> the client's outputs and response.create in
    leading_silence_ms: float = 0.0  # silence at the head of the reply audio
    reply_audio_ms: float = 0.0  # audio actually sent
    reply_full_ms: float = 0.0  # audio the reply would have had
    text: str = ""  # transcript the simulator sent
    voice: str | None = None
    calls: list[SimCall] = Field(default_factory=list)
    status: str = "pending"  # pending | answered | no_response | empty | truncated | disconnected | cancelled
    response_ids: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def audible_after_stop_ms(self) -> float | None:
        """First audible reply sample relative to speech_stopped (delay + leading silence)."""
        if self.first_audio_after_stop_ms is None:
            return None
        return self.first_audio_after_stop_ms + self.leading_silence_ms


class ResponseRecord(BaseModel):
    """Every response the simulator produced, including ones tied to no turn."""

    session: int
    response_id: str
    turn_index: int | None
    kind: str  # speech | calls | empty | greeting | none
    status: str = "in_progress"
    audio_ms_created: float = 0.0
    audio_ms_first_delta: float | None = None  # first output_audio.delta sent (audio time)
    audio_ms_last_delta: float | None = None
    audio_ms_done: float | None = None  # response.done sent


class DuplexTruth(BaseModel):
    """What the simulator did about one duplex cue it heard (user speech scripted into a reply).

    Audio times are the session's (input received); `*_mono` are this machine's monotonic clock
    (a client on it places them on its own timeline whatever lag the audio clock has under load).
    """

    turn_index: int  # the turn whose cue it is
    cue: int  # its place in the turn's `duplex` list
    kind: str  # interruption | backchannel | side_speech
    session: int
    clip_start_ms: float  # where the cue's WAV began in the input (fingerprint: exact to the sample)
    speech_start_ms: float  # where the VAD heard its speech begin
    speech_end_ms: float | None = None
    reply_audible: bool = False  # a reply was playing at its onset (by what was sent and when)
    reacted: bool = False  # taken as a turn (the behaviour's `reacts`): stopped for and answered; else not heard
    yield_after_ms: float | None = None  # the behaviour's setting on this turn (None: never)
    yield_ms: float | None = None  # audio time the reply was stopped (speech_started sent, response cancelled)
    yield_mono: float | None = None
    # how far before the stop the reply's speech had already gone quiet (a pause between words:
    # the stop is then heard where the last word ended), by the client's own bot speech rule
    quiet_before_yield_ms: float = 0.0
    answered: bool = False  # a reply to it went out

    def stop_on(self, t0_mono: float, speed: float) -> float | None:
        """Where the reply's speech stopped, on a run timeline that began at `t0_mono` (the
        client's `RunClock.t0`, this machine's monotonic clock) and runs at `speed`: when the
        simulator stopped it, less the pause it was already in. None: it never stopped one."""
        if self.yield_mono is None:
            return None
        return (self.yield_mono - t0_mono) * 1000.0 * speed - self.quiet_before_yield_ms
