"""What a fake records of each client connection: what crossed the wire, with the audio reduced
to counts, and when (marks on the fake's audio clock), so tests assert on what was actually sent
(replayed history after a reconnect included)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: sound a connection keeps of what it received (`ReceivedAudio`): ~87 s at 24 kHz, however long the run
KEPT_BYTES = 4 * 1024 * 1024


class ReceivedAudio:
    """The user audio one connection received, sample for sample as it arrived (PCM16 mono at
    `rate`): what the model heard, so a test compares it with what the run meant to play (a
    condition's noise, a speaker's voice). Digital silence (the stream between clips) is counted,
    not kept, and sound past `KEPT_BYTES` is not kept either (`full`): bounded on any run."""

    def __init__(self) -> None:
        self.rate = 0
        self.total = 0  # bytes received, silence included
        self.spans: list[tuple[int, bytearray]] = []  # (byte offset in the stream, the sound there)
        self.kept = 0
        self.full = False

    def add(self, pcm: bytes, rate: int = 0) -> None:
        self.rate = rate or self.rate
        if pcm.count(0) != len(pcm):  # some sound in it
            if self.kept + len(pcm) > KEPT_BYTES:
                self.full = True
            elif self.spans and self.spans[-1][0] + len(self.spans[-1][1]) == self.total:
                self.spans[-1][1].extend(pcm)
                self.kept += len(pcm)
            else:
                self.spans.append((self.total, bytearray(pcm)))
                self.kept += len(pcm)
        self.total += len(pcm)

    def stream(self) -> bytes:
        """Everything received, silence back in its place (a test's: as long as the connection)."""
        out = bytearray(self.total)
        for at, pcm in self.spans:
            out[at : at + len(pcm)] = pcm
        return bytes(out)


class Mark(BaseModel):
    """Something the fake did or heard, at AUDIO time on its clock (for timing assertions)."""

    t_ms: float
    what: str  # reply_start, audio, terminal, user_end, tool_result, and each fake's own names
    reply: int | None = None
    audio_ms: float = 0.0


class ConnectionRecord(BaseModel):
    """Everything one client connection sent, with the audio reduced to counts."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int  # 1-based across the fake's life
    path: str = ""
    query: dict[str, str] = Field(default_factory=dict)
    auth_present: bool = False  # whether credentials were sent; the value is never kept
    setup: dict[str, Any] = Field(default_factory=dict)
    system_instruction: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    history: list[dict[str, Any]] = Field(default_factory=list)  # {role, text} replayed by the client
    resumed_from: str | None = None  # session-resumption handle presented on connect
    audio_in_bytes: int = 0
    audio_in_rate: int = 0
    audio_in_chunks: int = 0
    audio_chunk_ms: list[float] = Field(default_factory=list)  # per request, where the protocol batches
    tool_results: list[dict[str, Any]] = Field(default_factory=list)  # {call_id, name, result}
    user_turns: int = 0  # ends of user speech (VAD, commit, activityEnd)
    replies: list[int] = Field(default_factory=list)  # reply numbers answered on this connection
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON received, audio elided
    closed: str | None = None  # who closed it and how, e.g. "server:1011", "client"
    errors: list[str] = Field(default_factory=list)  # protocol errors the fake reported back
    timeline: list[Mark] = Field(default_factory=list)  # what was sent and heard when (audio time)
    duplex: list[Any] = Field(default_factory=list)  # user speech over a reply and what was done (`duplex.CueHeard`)
    received: ReceivedAudio = Field(default_factory=ReceivedAudio, exclude=True)  # the audio itself, bounded

    def heard(self, pcm: bytes, rate: int) -> None:
        """User audio arrived: counted, and kept (`received`)."""
        self.audio_in_rate = rate
        self.audio_in_bytes += len(pcm)
        self.received.add(pcm, rate)

    def mark(self, t_ms: float, what: str, reply: int | None = None, audio_ms: float = 0.0) -> None:
        self.timeline.append(Mark(t_ms=t_ms, what=what, reply=reply, audio_ms=audio_ms))

    def marks(self, what: str, reply: int | None = None) -> list[Mark]:
        return [m for m in self.timeline if m.what == what and (reply is None or m.reply == reply)]

    @property
    def audio_in_ms(self) -> float:
        """Received user audio in audio time (PCM16 mono)."""
        if not self.audio_in_rate:
            return 0.0
        return self.audio_in_bytes / 2 / self.audio_in_rate * 1000.0
