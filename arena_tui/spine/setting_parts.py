"""The parts of a run's settings (`spine.settings.RunSettings`): the engine's timings grouped as
they are stored (`vad`, `end_of_turn`, `watchdog`, `pace`, `greeting`, `rotation`), the speakers'
vocabulary, and how a choice typed as text (`--turns 0,5-9`, `--service-arg k=v`, a dialog's
number field) is read; a value it cannot read is a `SettingsError` naming the option.

Apart from `settings.py` so that module holds a run's fields and the option table that offers them
(the declaration of a run option, `OPTIONS`) and stays small enough to read at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

#: the speaker of a run whose user audio is the benchmark's synthesised (TTS) voice: the default
TTS = "tts"
#: `--speaker all`: one run per speaker the benchmark has (tts first); never a run's own speaker
ALL_SPEAKERS = "all"
#: the highest turn index `--turns` may name: the largest benchmark has 75 turns, and a range is built
#: as a set of its turns, so `0-100000000` is refused where it is typed, not after 100 million ints
MAX_TURN_INDEX = 9999


class SettingsError(ValueError):
    """A run setting out of bounds: one line naming the setting and the value given."""


class Strict(BaseModel):
    """A part of the settings: unknown keys refused, no inf/nan, frozen (a change is a `model_copy`)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class VadConfig(Strict):
    """Server VAD sent to providers that take it (reference: 0.7 / 500 / 800)."""

    threshold: float = Field(0.7, ge=0, le=1)
    prefix_padding_ms: int = Field(500, ge=0)
    silence_duration_ms: int = Field(800, ge=0)


class EndOfTurn(Strict):
    """When the next user turn may start: transcript flushed, then `quiet_ms` without bot audio, then `drain_ms`."""

    quiet_ms: float = Field(2000.0, ge=0)
    drain_ms: float = Field(500.0, ge=0)


class Watchdog(Strict):
    """How long a turn may wait, and its retries. `extra_ms`: the inactivity window (nothing at
    all from the model for this long after the user's audio or its last output ends the wait);
    `max_turn_ms`: the overall cap after the user's audio (a reply still streaming then is kept,
    with a "slow reply" notice, and the session is replaced before the next turn)."""

    extra_ms: float = Field(30000.0, ge=0)
    max_turn_ms: float = Field(180000.0, gt=0)
    min_wall_ms: float = Field(10000.0, ge=0)  # floor in wall time when running faster than real time
    backoff_ms: float = Field(2000.0, ge=0)
    max_retries: int = Field(3, ge=0)


class Pace(Strict):
    """When a run has lost pace with its audio clock (`runners/pace.py`): the paced input behind
    its schedule by more than max(`max_lag_ms`, `min_wall_ms` × speed) ms of audio ends it failed."""

    max_lag_ms: float = Field(5000.0, gt=0)  # audio ms
    min_wall_ms: float = Field(8000.0, ge=0)  # floor in wall time: at high speed a busy machine's hiccup is no runaway


class Greeting(Strict):
    """The greeting handshake (turn -1); not a benchmark turn."""

    enabled: bool = True
    prompt: str = "Greet the user briefly."
    start_timeout_ms: float = Field(8000.0, gt=0)
    finish_timeout_ms: float = Field(90000.0, gt=0)  # the cap; a reply still going then rotates the session


class Rotation(Strict):
    """When to replace a live session at a turn boundary (a dead one is always replaced)."""

    max_age_s: float | None = Field(None, gt=0)  # audio-time age of a session
    max_context_chars: int | None = Field(None, gt=0)  # prompt + history chars
    history_budget_chars: int = Field(128_000, ge=0)  # what a replay may carry
    max_reconnects: int = Field(5, ge=0)  # per run; beyond this the run fails


# --- a choice as typed ------------------------------------------------------------------------


def parse_turns(spec: str) -> list[int]:
    """`"0,5-9"` → `[0, 5, 6, 7, 8, 9]`; SettingsError naming the bad part."""
    out: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
            else:
                lo = hi = int(part)
        except ValueError:
            raise SettingsError(f"bad turn range {part!r} in --turns {spec!r} (use e.g. 0,5-9)") from None
        if hi > MAX_TURN_INDEX:
            raise SettingsError(f"turn {hi} in --turns {spec!r} is past the last turn any benchmark has "
                                f"(turn indices go up to {MAX_TURN_INDEX})")
        out.update(range(lo, hi + 1))
    if not out:
        raise SettingsError(f"--turns {spec!r} selects no turns")
    return sorted(out)


def turns_are(have: set[int]) -> str:
    """`turns are 0-9`: what a benchmark has, said in a refusal of a turn it has not."""
    return f"turns are {min(have)}-{max(have)}" if have else "it has no turns"


def turn_list(turns: str | Iterable[int]) -> list[int] | None:
    """`--turns` as typed (`all` or nothing: every turn, None) or as a list of indices."""
    if not isinstance(turns, str):
        return list(turns)
    text = turns.strip()
    return None if text in ("", "all") else parse_turns(text)


def number(raw: float | str, option: str) -> float | None:
    """A number as typed (a dialog's field: "" is the default, None); SettingsError naming the option."""
    if not isinstance(raw, str):
        return float(raw)
    try:
        return float(raw.strip()) if raw.strip() else None
    except ValueError:
        raise SettingsError(f"{option}: {raw.strip()!r} is not a number") from None


def whole(raw: int | str, option: str) -> int | None:
    """A whole number as typed ("" is the default, None); SettingsError naming the option."""
    if isinstance(raw, int):
        return raw
    if not raw.strip():
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise SettingsError(f"{option}: {raw.strip()!r} is not a whole number") from None


def text(raw: str | None) -> str | None:
    """A text choice as typed, stripped; "" (a dialog's empty field) is the default, None."""
    return raw.strip() or None if isinstance(raw, str) else raw


def service_arg_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """`--service-arg key=value` (repeated) as a dict; one line naming a malformed one (SettingsError)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise SettingsError(f"--service-arg {pair!r}: expected KEY=VALUE (e.g. base_url=http://127.0.0.1:8000/v1)")
        out[key.strip()] = value
    return out
