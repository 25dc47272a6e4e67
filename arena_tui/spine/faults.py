"""Fault plans for the simulator: which turn misbehaves, how, and on which attempts.

In the spine because two parts read a plan: the simulator plays it (`runners/simulator`), and
the monitor says on the turn that got a fault which one and what it does (`RecordedRun.turn_faults`,
`MEANING`), so a failure by design reads as such.

A plan is parsed from a compact spec so it fits on a command line and in a stored run
config, e.g. ``"3:no_response,5:barge_in,7:slow_first_audio=1500,9:disconnect*,expire=120"``.
A per-turn fault applies to the first attempt of its turn only, so a retry or a new
session recovers — unless it is marked sticky with ``*``, which makes it apply every time.

    no_response          VAD events, user item and transcript, then nothing (an explicit
                         response.create still gets the answer)
    empty_response[=TOK] a completed response with no audio; transcript empty or <TOK>
    early_call           this turn also makes the NEXT turn's expected calls (which then makes none)
    late_call            this turn's calls are made on the next turn instead
    wrong_call           one compared argument changed (IDs first); no expected call -> an
                         unexpected call to the first tool
    barge_in[=MS]        the reply starts MS (default 500) of audio after speech START
    truncated[=FRAC]     FRAC (default 0.5) of the reply's audio, then response.done `incomplete`
    slow_first_audio=MS  first audio MS of audio time after speech_stopped (instead of 300)
    disconnect[=FRAC]    the socket is dropped (no close frame) after FRAC of the reply's audio
    expire=SECONDS       every session gets the API's `session_expired` error and a 1001 close
                         after SECONDS of its audio
    yield=MS|never       user speech during a reply (a benchmark's duplex cues) stops it MS of
                         audio after the speech's onset (default 0: as soon as the VAD confirms
                         it), or never (`runners/fakes/duplex.py`); `N:yield=MS` for turn N only
    backchannel=yield|ignore      a backchannel cue stops the reply like any speech (default), or not
    side_speech=answer|ignore     side speech is a turn like any other (default), or is not heard
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict

BACKCHANNELS = ("yield", "ignore")
SIDE_SPEECH = ("answer", "ignore")


@dataclass(frozen=True)
class DuplexBehaviour:
    """How a fake model meets user speech during its own reply (a benchmark's duplex cues;
    `runners/fakes/duplex.py` plays it): `yield_after_ms` stop the reply this long after the
    speech's onset (None: never stop); `backchannels` "yield" (speech like any other) or "ignore"
    (talk on); `side_speech` "answer" (a turn like any other) or "ignore" (talk on, no reply)."""

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

FaultKind = Literal[
    "no_response",
    "empty_response",
    "early_call",
    "late_call",
    "wrong_call",
    "barge_in",
    "truncated",
    "slow_first_audio",
    "disconnect",
    "yield",
]

# kind -> (value required?, value allowed?, default value)
_KINDS: dict[str, tuple[bool, bool, float | str | None]] = {
    "no_response": (False, False, None),
    "empty_response": (False, True, None),  # optional value: a control token, e.g. ctrl46
    "early_call": (False, False, None),
    "late_call": (False, False, None),
    "wrong_call": (False, False, None),
    "barge_in": (False, True, 500.0),  # ms after speech start at which the bot starts
    "truncated": (False, True, 0.5),  # fraction of the reply's audio that is sent
    "slow_first_audio": (True, True, None),  # ms after VAD stop, audio time
    "disconnect": (False, True, 0.5),  # fraction of the reply's audio sent before the drop
    "yield": (True, True, None),  # ms after a duplex cue's onset at which this turn's reply stops
}

FAULT_KINDS: tuple[str, ...] = tuple(_KINDS)
#: what each fault does to its turn, in the words the monitor shows beside the turn
MEANING: dict[str, str] = {
    "no_response": "the simulator stays silent on the first attempt",
    "empty_response": "the reply comes back empty (no audio)",
    "early_call": "the next turn's calls are made on this one",
    "late_call": "this turn's calls are made on the next one",
    "wrong_call": "a call is made with one argument changed",
    "barge_in": "the reply starts while the user still speaks",
    "truncated": "the reply is cut short",
    "slow_first_audio": "the reply's first audio comes late",
    "disconnect": "the connection drops mid-reply",
    "yield": "the reply stops this long after the user speaks over it",
}


class FaultSpecError(ValueError):
    """A fault spec that cannot be parsed; the message names the offending item."""


class TurnFault(BaseModel):
    """One injected misbehaviour on one turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    kind: FaultKind
    value: float | str | None = None
    sticky: bool = False

    def applies(self, attempt: int) -> bool:
        """Attempts count from 1; non-sticky faults hit only the first."""
        return self.sticky or attempt <= 1

    def __str__(self) -> str:
        return f"{self.turn}:{self.label}"

    @property
    def label(self) -> str:
        """`wrong_call`, `barge_in=800`, `no_response*` (sticky): the fault as its spec names it."""
        val = "" if self.value is None or self.value == _KINDS[self.kind][2] else f"={_fmt(self.value)}"
        return f"{self.kind}{val}{'*' if self.sticky else ''}"

    @property
    def meaning(self) -> str:
        """`wrong_call: a call is made with one argument changed (every attempt)`."""
        return f"{self.label}: {MEANING[self.kind]}" + (" (every attempt)" if self.sticky else "")


class FaultPlan(BaseModel):
    """Per-turn faults plus session-level ones (expiry after N seconds of audio time)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: dict[int, TurnFault] = {}
    expire_s: float | None = None
    duplex: DuplexBehaviour = PLAIN_VAD  # how speech during a reply is met (`yield=`, `backchannel=`, `side_speech=`)

    def fault_for(self, turn: int, attempt: int) -> TurnFault | None:
        f = self.turns.get(turn)
        return f if f is not None and f.applies(attempt) else None

    def duplex_for(self, turn: int, attempt: int) -> DuplexBehaviour:
        """The behaviour on this turn's duplex cues (a `N:yield=MS` fault overrides the yield)."""
        f = self.fault_for(turn, attempt)
        if f is not None and f.kind == "yield" and f.value is not None:
            return self.duplex.with_yield(float(f.value))
        return self.duplex

    def __bool__(self) -> bool:
        return bool(self.turns) or self.expire_s is not None or not self.duplex.is_default

    def __str__(self) -> str:
        parts = [str(self.turns[t]) for t in sorted(self.turns)]
        if self.expire_s is not None:
            parts.append(f"expire={_fmt(self.expire_s)}")
        parts += self.duplex.spec()
        return ",".join(parts)


def _fmt(v: float | str) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


#: the largest delay a fault may ask (barge_in, slow_first_audio, yield), in ms, and the latest session
#: expiry, in s: ten minutes of silence is past any watchdog (a 90 s first audio is a test's), an hour past
#: any run's session; beyond them a value can only be a typo (1e300 ms overflowed the pacing clock)
MAX_MS = 600_000.0
MAX_EXPIRE_S = 3600.0


def _number(raw: str, item: str, spec: str, *, allow_zero: bool = False, most: float = MAX_MS, unit: str = "ms") -> float:
    try:
        v = float(raw)
    except ValueError:
        raise FaultSpecError(f"value {raw!r} in {item!r} is not a number (in {spec!r})") from None
    if v != v or v in (float("inf"), float("-inf")) or v < 0 or (v == 0 and not allow_zero):
        raise FaultSpecError(f"value {raw!r} in {item!r} must be a positive number (in {spec!r})")
    if v > most:
        raise FaultSpecError(f"value {raw!r} in {item!r} is more than the {_fmt(most)} {unit} it may be (in {spec!r})")
    return v


def parse_faults(spec: str | None) -> FaultPlan:
    """Parse a fault spec; errors name the item, e.g. ``unknown fault 'foo' in '3:foo'``."""
    if spec is None or not spec.strip():
        return FaultPlan()
    turns: dict[int, TurnFault] = {}
    expire: float | None = None
    session: dict[str, str] = {}  # expire, yield, backchannel, side_speech
    for raw_item in spec.split(","):
        item = raw_item.strip()
        if not item:
            raise FaultSpecError(f"empty item in fault spec {spec!r}")
        if ":" not in item:
            key, _, val = (p.strip() for p in item.partition("="))
            if key not in _SESSION_ITEMS:
                others = ", ".join(v for k, v in _SESSION_ITEMS.items() if k != "expire")
                raise FaultSpecError(f"expected 'TURN:FAULT' or 'expire=SECONDS' (or {others}), got {item!r} (in {spec!r})")
            if not val:
                raise FaultSpecError(f"'{key}' needs a value, e.g. '{_SESSION_ITEMS[key]}' (in {spec!r})")
            if key in session:
                raise FaultSpecError(f"'{key}' given twice in {spec!r}")
            session[key] = val
            if key == "expire":
                expire = _number(val, item, spec, most=MAX_EXPIRE_S, unit="s")
            continue
        turn_s, _, rest = item.partition(":")
        try:
            turn = int(turn_s.strip())
        except ValueError:
            raise FaultSpecError(f"turn {turn_s.strip()!r} in {item!r} is not an integer") from None
        rest = rest.strip()
        sticky = rest.endswith("*")
        if sticky:
            rest = rest[:-1].rstrip()
        kind, has_val, val = rest.partition("=")
        kind = kind.strip()
        if kind not in _KINDS:
            raise FaultSpecError(f"unknown fault {kind!r} in {item!r}; known: {', '.join(FAULT_KINDS)}; "
                                 f"for the whole run: {', '.join(_SESSION_ITEMS.values())}")
        required, allowed, default = _KINDS[kind]
        value: float | str | None = default
        if has_val:
            if not allowed:
                raise FaultSpecError(f"fault {kind!r} takes no value, got {item!r}")
            val = val.strip()
            if not val:
                raise FaultSpecError(f"empty value in {item!r}")
            if kind == "empty_response":
                value = val
            else:
                value = _number(val, item, spec, allow_zero=kind in ("truncated", "disconnect", "yield"))
                if kind in ("truncated", "disconnect") and not 0 <= value <= 1:
                    raise FaultSpecError(f"{kind} takes a fraction of the reply in [0, 1], got {item!r}")
        elif required:
            raise FaultSpecError(f"fault {kind!r} needs a value in ms, e.g. '{turn}:{kind}=1500'")
        if turn in turns:
            raise FaultSpecError(f"turn {turn} has two faults ({turns[turn]} and {item}) in {spec!r}")
        turns[turn] = TurnFault(turn=turn, kind=kind, value=value, sticky=sticky)
    return FaultPlan(turns=turns, expire_s=expire, duplex=_duplex(session, spec))


#: the items of a fault spec that are not per turn, with an example each
_SESSION_ITEMS = {"expire": "expire=SECONDS", "yield": "yield=MS|never",
                  "backchannel": "backchannel=yield|ignore", "side_speech": "side_speech=answer|ignore"}


def _duplex(items: dict[str, str], spec: str) -> DuplexBehaviour:
    """The duplex behaviour the spec's `yield=`, `backchannel=`, `side_speech=` items give."""
    b = PLAIN_VAD
    if "yield" in items:
        raw = items["yield"]
        b = b.with_yield(None if raw == "never" else _number(raw, f"yield={raw}", spec, allow_zero=True))
    for key, allowed in (("backchannel", BACKCHANNELS), ("side_speech", SIDE_SPEECH)):
        if key in items and items[key] not in allowed:
            raise FaultSpecError(f"{key} must be {' or '.join(allowed)}, got {items[key]!r} (in {spec!r})")
    match items.get("backchannel"):
        case "yield" | "ignore" as said:
            b = replace(b, backchannels=said)
    match items.get("side_speech"):
        case "answer" | "ignore" as told:
            b = replace(b, side_speech=told)
    return b
