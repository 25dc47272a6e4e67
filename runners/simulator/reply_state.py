"""What a simulator reply works with: the session's socket as a reply sees it (`Outbox`), the
server's reply settings (`ReplySettings`: voice, delays, the timing profile and fault plan's
stalls), and a reply's own state: calls waiting for their outputs (`ToolWait`), the audio the
client is playing (`Playing`), and the response in progress (`Active`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena_tui.spine.faults import TurnFault
from arena_tui.spine.speech import SpeechDetector
from runners.fakes.timing import ReplyPlan, TimingProfile

from .protocol import RATE
from .records import ResponseRecord, TurnTruth
from .voice import VoiceKind


class Outbox(Protocol):
    """The session's socket as a reply uses it (the session satisfies this)."""

    async def send(self, type_: str, **fields: object) -> None: ...
    def abort(self) -> None: ...  # drop the socket without a close frame


@dataclass(frozen=True)
class ReplySettings:
    """How the simulator answers (the server's constructor arguments)."""

    voice: VoiceKind  # what the audio really is
    response_delay_ms: float  # speech_stopped -> first delta, audio time
    leading_silence_ms: float
    chunk_ms: float
    wait_for_turn_end: bool  # hold a recognised turn's reply at a mid-WAV pause
    timing: TimingProfile | None = None  # a profile's per-turn plans instead of response_delay_ms

    def plan(self, turn_index: int) -> ReplyPlan | None:
        return self.timing.plan(turn_index) if self.timing is not None else None

    def stall(self, turn_index: int, attempt: int) -> TurnFault | None:
        """A plan's `no_output` as the `no_response` fault, on the turn's first attempt only."""
        plan = self.plan(turn_index)
        if plan is None or not plan.no_output or attempt > 1:
            return None
        return TurnFault(turn=turn_index, kind="no_response")

    def first_delay_ms(self, turn_index: int) -> float:
        """Trigger -> calls or first audio, audio time."""
        plan = self.plan(turn_index)
        return plan.first_audio_ms if plan is not None else self.response_delay_ms


@dataclass
class ToolWait:
    """A turn whose calls went out: its speech waits for their outputs and a response.create."""

    truth: TurnTruth
    fault: TurnFault | None
    call_ids: list[str]
    stopped_ms: float | None


@dataclass
class Playing:
    """A spoken reply as the client plays it, by what was sent when: each delta plays from when
    it was sent, after the audio before it (a speaker's queue), all in the session's audio time."""

    pcm: bytes  # the whole reply (leading silence included)
    start_ms: float  # its first delta
    lead_ms: float  # leading silence
    until_ms: float = 0.0  # the end of what was sent, as played

    def sent(self, at_ms: float, dur_ms: float) -> None:
        self.until_ms = max(self.until_ms, at_ms) + dur_ms

    def audible(self, t_ms: float) -> bool:
        """Speech was playing at `t_ms` (past its leading silence, before the end of what was sent)."""
        return self.start_ms + self.lead_ms <= t_ms < self.until_ms

    def quiet_before(self, t_ms: float) -> float:
        """How long before `t_ms` the reply's speech had gone quiet (a pause between words), by the
        client's own bot speech rule (`arena_tui.spine.speech.SpeechDetector`) on what played."""
        pos = t_ms - self.start_ms
        played = self.pcm[: max(0, round(pos * RATE / 1000.0)) * 2]
        detector = SpeechDetector(RATE)
        stops = [t for kind, t in detector.feed(played, 0.0) + detector.flush(pos) if kind == "stop"]
        return max(0.0, pos - stops[-1]) if stops else pos


@dataclass
class Active:
    """The one response in progress on a session (the API allows one at a time)."""

    record: ResponseRecord
    task: asyncio.Task[None] | None = None
    truth: TurnTruth | None = None
    armed: asyncio.Event = field(default_factory=asyncio.Event)  # set once it only waits on input
    item: dict[str, Any] | None = None
    sent_audio_bytes: int = 0
    said: str = ""  # transcript sent so far
    outputs: list[dict[str, Any]] = field(default_factory=list)
