"""What a fake records of each client connection: what crossed the wire, with the audio reduced
to counts, and when (marks on the fake's audio clock), so tests assert on what was actually sent
(replayed history after a reconnect included)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
