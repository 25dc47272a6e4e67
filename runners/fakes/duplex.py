"""How a fake model reacts to user speech during its own reply (a benchmark's duplex cues).

Real services differ here: a plain server VAD stops the reply at any speech (a backchannel
"mm-hmm" included) and answers whatever it heard, a better model talks on through a
backchannel and leaves speech that is not addressed to it unanswered, a half-duplex one
never stops. The simulator and the provider fakes play a `DuplexBehaviour` so that the
engine's duplex figures (`arena_tui.spine.duplex`) can be checked against what they did:

    yield_after_ms   stop the reply this long after the speech's onset (the simulator: at the
                     earliest when its VAD confirms speech, 100 ms in); None: never stop
    backchannels     "yield": a backchannel is speech like any other; "ignore": talk on
    side_speech      "answer": side speech is a turn like any other; "ignore": talk on, no reply

A reacted-to cue is a user turn: the reply stops and, once the speech ends, the fake answers
it (the simulator, an oracle, says the turn's golden answer again). An ignored one is not
heard at all: no VAD event, no reply. The default is the plain server VAD's.

As simulator faults (`runners/simulator/faults.py`): `yield=MS|never`, `backchannel=yield|ignore`,
`side_speech=answer|ignore`, and per turn `N:yield=MS`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

BACKCHANNELS = ("yield", "ignore")
SIDE_SPEECH = ("answer", "ignore")


@dataclass(frozen=True)
class DuplexBehaviour:
    yield_after_ms: float | None = 0.0
    backchannels: Literal["yield", "ignore"] = "yield"
    side_speech: Literal["answer", "ignore"] = "answer"

    def reacts(self, kind: str) -> bool:
        """Whether speech of this cue kind during the reply is taken as a turn (stop, then answer)."""
        if self.yield_after_ms is None:
            return False
        if kind == "backchannel":
            return self.backchannels == "yield"
        if kind == "side_speech":
            return self.side_speech == "answer"
        return True

    def with_yield(self, ms: float | None) -> DuplexBehaviour:
        return replace(self, yield_after_ms=ms)

    @property
    def is_default(self) -> bool:
        return self == PLAIN_VAD

    def spec(self) -> list[str]:
        """The fault-spec items that give this behaviour (none for the default)."""
        out = []
        if self.yield_after_ms != PLAIN_VAD.yield_after_ms:
            out.append("yield=never" if self.yield_after_ms is None else f"yield={_fmt(self.yield_after_ms)}")
        if self.backchannels != PLAIN_VAD.backchannels:
            out.append(f"backchannel={self.backchannels}")
        if self.side_speech != PLAIN_VAD.side_speech:
            out.append(f"side_speech={self.side_speech}")
        return out


#: a plain server VAD: any speech stops the reply at once and is answered
PLAIN_VAD = DuplexBehaviour()


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)
