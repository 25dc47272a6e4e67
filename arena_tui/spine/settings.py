"""A run's settings: one typed model (`RunSettings`) from the flag, the new-run dialog or a
campaign spec to the provider's session, built by one builder (`build_settings`), validated once
there, stored with the run (`public`) and read back (`from_recorded`).

Secrets are deliberately absent: providers read keys from the environment when a session
opens, so nothing here can leak a key into SQLite, logs or exports.

The bounds live here, once, for the CLI, the TUI's dialog and campaigns alike: a setting that
would hang a run (speed inf), grow it without limit (speed 1000) or silently do nothing (a fault
on a turn that is not run) is refused with one line naming the setting. What needs the provider
(its keys, packages, protocol) is the engine's preflight; what needs the benchmark is
`RunSettings.check_benchmark`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .conditions import CLEAN, ConditionError, parse_condition
from .env_refs import ENV_PREFIX, is_env_ref
from .faults import parse_faults
from .provenance import usable
from .source import ALL_SPEAKERS, TTS

if TYPE_CHECKING:
    from .benchmark import Benchmark, Turn

SIM = "sim"  # the offline simulator's alias: faults are its alone, a protocol fake means nothing for it
MAX_SPEED = 50.0  # beyond this the pacing loop cannot keep up and buffers grow without bound
MAX_PARALLEL = 16  # rehydrated turns at once (the reference hangs at 32; 16 works)
#: the highest turn index `--turns` may name: the largest benchmark has 75 turns, and a range is built
#: as a set of its turns, so `0-100000000` is refused where it is typed, not after 100 million ints
MAX_TURN_INDEX = 9999

# The CLI option behind a field, so an error names what the user typed.
SERVICE_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")  # --service package.module:Class
SECRET_NAME = re.compile(r"(^|_)(key|token|secret|password|credentials?)($|_)", re.I)  # args only given as env:

OPTION_OF = {"speed": "--speed", "turns": "--turns", "faults": "--faults", "base_url": "--base-url",
             "rotation.max_age_s": "--rotate-after", "model": "--model", "parallel": "--parallel",
             "mode": "--rehydrate", "fake_timing": "--fake-timing", "speaker": "--speaker",
             "disable_vad": "--disable-vad", "service": "--service", "service_args": "--service-arg",
             "condition": "--condition", "seed": "--seed", "effort": "--effort"}
EFFORT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")  # a level (low, high) or a token budget (2048)


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


class RunSettings(Strict):
    """Everything a run is set to (what runs, against what, how fast, which turns, whose voice, the
    engine's timings). Frozen: validated once, where it is built (`build_settings`, `from_recorded`),
    then passed as it is to the session; a change is a `model_copy` (admission control's speed)."""

    model: str = SIM
    base_url: str | None = None  # override the provider endpoint (e.g. a local server)
    turns: list[int] | None = None  # subset of turn indices; None = all
    speed: float = Field(1.0, gt=0, le=MAX_SPEED)
    sample_rate: int = Field(24000, ge=8000, le=192_000)
    chunk_ms: float = Field(20.0, gt=0, le=1000)
    preroll_ms: float = Field(100.0, ge=0)
    vad: VadConfig = Field(default_factory=VadConfig)
    end_of_turn: EndOfTurn = Field(default_factory=EndOfTurn)
    watchdog: Watchdog = Field(default_factory=Watchdog)
    pace: Pace = Field(default_factory=Pace)
    greeting: Greeting = Field(default_factory=Greeting)
    rotation: Rotation = Field(default_factory=Rotation)
    faults: str | None = None  # simulator fault spec
    fake: bool = False  # run against the provider's in-process protocol fake, scripted from the benchmark
    # a --fake run: when the fake answers. "real": the provider's measured timing (slow first audio,
    # audio slower than real time in bursts, a late terminal event, its quirks); "instant": at
    # once, in one burst (fast tests of other things). None becomes "real" for a --fake run; for
    # `sim` it stays None (the simulator's own fixed delay) unless given.
    fake_timing: Literal["real", "instant"] | None = None
    sim_policy: str = "oracle"
    sim_voice: str = "auto"
    level_block_ms: float = Field(50.0, gt=0)
    vad_method: Literal["silero", "energy"] = "energy"  # speech_intervals method for user WAVs
    # sequential: one conversation, turn after turn. rehydrated: each turn in a fresh session
    # seeded with the golden turns before it, `parallel` turns at once (no turn-taking scored)
    mode: Literal["sequential", "rehydrated"] = "sequential"
    parallel: int = Field(1, ge=1, le=MAX_PARALLEL)
    # whose voice the user audio is: "tts" (the benchmark's audio/) or a human speaker's
    # recordings (real_audio/<speaker>/); the benchmark is loaded with it, the run records it
    speaker: str = Field(TTS, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    # the provider's server VAD off: the user's turn is closed by our commit at the end of the
    # speech in the user WAV (our VAD), as the reference's --disable-vad (the catalog's `manual_commit` providers)
    disable_vad: bool = False
    # a Pipecat LLM or realtime service class of the user's ("package.module:Class"), run in
    # place of a provider's (`--model` is then the model id it is given), with its constructor
    # arguments as typed (`--service-arg key=value`; `env:NAME` reads a variable when a session
    # opens, the only way a key may be given: the config is stored)
    service: str | None = None
    service_args: dict[str, str] = Field(default_factory=dict)
    # the acoustic condition the user's audio is heard under (`spine/conditions.py`: clean, noise=<SNR dB>[:kind],
    # telephony, loss=<percent>), stored as its canonical label; `seed` makes its noise and drops (each
    # turn's from it: `turn_seed`), the same for every run given it, so models are heard under the same audio
    condition: str = CLEAN.label
    seed: int = Field(0, ge=0, le=2**63 - 1)
    # reasoning effort / thinking level as the provider takes it (a level, or a token budget); None: the
    # provider's default. Which values a model takes is the provider catalog's (`runners/catalog.py`),
    # checked by the run's preflight
    effort: str | None = None

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise SettingsError(_one_line(e)) from None

    @field_validator("turns")
    @classmethod
    def _sorted_unique(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and any(i < 0 for i in v):
            raise ValueError(f"turn numbers are 0 or more, got {min(v)}")
        return None if v is None else sorted(set(v))

    @field_validator("service")
    @classmethod
    def _service_path(cls, v: str | None) -> str | None:
        if v is not None and not SERVICE_PATH.match(v):
            raise ValueError(f"expected package.module:Class, e.g. pipecat.services.anthropic.llm:AnthropicLLMService (got {v!r})")
        return v

    @field_validator("condition")
    @classmethod
    def _condition_label(cls, v: str) -> str:
        try:
            return parse_condition(v).label  # stored canonical: one row per condition however it was typed
        except ConditionError as e:
            raise ValueError(str(e).removeprefix("condition ")) from None

    @field_validator("effort")
    @classmethod
    def _effort_word(cls, v: str | None) -> str | None:
        if v is None:
            return None
        word = v.strip().lower()
        if not EFFORT.match(word):
            raise ValueError(f"{v!r} is not an effort (a level such as low, medium, high, or a token budget such as 2048)")
        return word

    @field_validator("faults")
    @classmethod
    def _fault_syntax(cls, v: str | None) -> str | None:
        if v:
            parse_faults(v)  # FaultSpecError is a ValueError naming the item
        return v

    @model_validator(mode="before")
    @classmethod
    def _fake_timing_of_a_fake(cls, data: object) -> object:
        """What a user of --fake gets: the provider's timing, not an instant echo."""
        if isinstance(data, Mapping) and data.get("fake") and data.get("model", SIM) != SIM and data.get("fake_timing") is None:
            return {**data, "fake_timing": "real"}
        return data

    @model_validator(mode="after")
    def _rules_between_settings(self) -> RunSettings:
        if self.faults and self.model != SIM:
            raise ValueError("--faults only applies to --model sim")
        if self.parallel > 1 and self.mode != "rehydrated":
            raise ValueError("--parallel only applies with --rehydrate")
        if self.fake_timing is not None and not (self.fake or self.model == SIM):
            raise ValueError("--fake-timing only applies to --fake runs and --model sim")
        if self.service_args and not self.service:
            raise ValueError("--service-arg only applies with --service")
        for name, value in self.service_args.items():
            if SECRET_NAME.search(name) and not is_env_ref(value):
                raise ValueError(f"--service-arg {name}: give a key as {ENV_PREFIX}VARIABLE (read when a session opens; "
                                 "a run's settings are stored, a key never is)")
        if self.speaker == ALL_SPEAKERS:
            raise ValueError("--speaker all is one run per speaker; a run takes one speaker (tts or a name)")
        return self

    def turns_of(self, benchmark: Benchmark) -> list[Turn]:
        """The benchmark's turns this run plays (all, or `turns` in benchmark order); SettingsError
        naming the turns it does not have."""
        if self.turns is None:
            return list(benchmark.turns)
        have = {t.turn_index for t in benchmark.turns}
        missing = [i for i in self.turns if i not in have]
        if missing:
            raise SettingsError(f"{benchmark.name}: no turn(s) {', '.join(map(str, missing))} ({_turns_are(have)})")
        wanted = set(self.turns)
        return [t for t in benchmark.turns if t.turn_index in wanted]

    def check_benchmark(self, benchmark: Benchmark) -> list[str]:
        """The settings against the benchmark, one line each: every turn asked for is one of its
        turns, and every fault names one (a typo would otherwise silently never fire; a turn left
        out by --turns is fine, so one spec serves every subset, as the demo's does)."""
        problems = []
        try:
            self.turns_of(benchmark)
        except SettingsError as e:
            problems.append(str(e))
        have = {t.turn_index for t in benchmark.turns}
        for turn in sorted(parse_faults(self.faults).turns):
            if turn not in have:
                problems.append(f"--faults: {benchmark.name} has no turn {turn} ({_turns_are(have)})")
                break
        return problems

    def public(self) -> dict[str, Any]:
        """What run_started records (the config never holds secrets; this is the contract)."""
        out = self.model_dump(mode="json")
        if self.mode == "rehydrated":  # each turn alone in its session: no turn-taking to judge
            out["turn_taking_supported"] = False
        return out

    @classmethod
    def from_recorded(cls, recorded: Mapping[str, Any]) -> RunSettings:
        """The settings of a stored run (`run_started.config`, as `public` wrote it), without what
        `public` and the loops added for display (labels, modality, …); a run stored before a
        setting existed gets its default. An imported run's endpoint, service class and its
        arguments are never read back (`spine.provenance`: a file never aims a key or names code
        to import). Raises SettingsError."""
        return cls(**{k: v for k, v in usable(recorded).items() if k in cls.model_fields})

    def aimed(self, *, base_url: str | None = None, service: str | None = None,
              service_args: Iterable[str] = ()) -> RunSettings:
        """These settings connected where the user typed (`resume --base-url/--service/--service-arg`):
        `base_url` replaces the endpoint, `service` the class and its arguments (`service_args`
        alone: the arguments); validated as `build_settings` does. SettingsError naming the flag."""
        args = list(service_args)
        if not (base_url or service or args):
            return self
        data = self.model_dump()
        if base_url:
            data["base_url"] = base_url
        if service:
            data["service"], data["service_args"] = service, {}
        if args:
            data["service_args"] = service_arg_pairs(args)
        return RunSettings(**data)


def _one_line(err: ValidationError) -> str:
    """The first error of a ValidationError as `--speed: must be ... (got inf)`."""
    e = err.errors()[0]
    field = ".".join(str(p) for p in e["loc"])
    name = OPTION_OF.get(field, field)
    if e["type"] == "value_error" and "error" in e.get("ctx", {}):
        msg = str(e["ctx"]["error"])
    else:
        msg = e["msg"][0].lower() + e["msg"][1:]
    if e["type"] == "extra_forbidden":
        msg = "unknown setting"
    got = "" if e["type"] in ("model_type", "value_error") else f" (got {e['input']!r})"
    more = len(err.errors()) - 1
    return (f"{name}: " if name else "") + f"{msg}{got}" + (f" (and {more} more)" if more else "")


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


def _turns_are(have: set[int]) -> str:
    return f"turns are {min(have)}-{max(have)}" if have else "it has no turns"


def build_settings(
    model: str = SIM,
    *,
    speed: float | str = 1.0,
    turns: str | Iterable[int] | None = None,
    faults: str | None = None,
    fake: bool = False,
    fake_timing: str | None = None,
    greeting: bool = True,
    base_url: str | None = None,
    rotate_after: float | None = None,
    rehydrate: bool = False,
    parallel: int = 1,
    speaker: str | None = None,
    disable_vad: bool = False,
    service: str | None = None,
    service_args: Iterable[str] | Mapping[str, str] = (),
    condition: str | None = None,
    seed: int | str | None = None,
    effort: str | None = None,
    fields: Mapping[str, Any] | None = None,
) -> RunSettings:
    """The settings of a run as a user chose them, validated once: the one builder behind
    `arena-tui run|demo` (flags), the new-run dialog (its fields, as typed) and a campaign (its
    spec, per cell). Each choice is named as its option (`turns="0,5-9"` as typed or a list,
    `speed` as typed, `greeting=False` for --no-greeting, `rotate_after`, `rehydrate`,
    `service_args` as `KEY=VALUE` pairs or a mapping, `condition` and `effort` as typed, "" their
    default, `seed` a number or as typed); `fields` are further settings as stored
    (a campaign's [config] table, the demo's watchdog), under what the named choices set.
    `fake` means nothing for the simulator (always local) and is dropped for it.
    SettingsError: one line naming the option."""
    data: dict[str, Any] = dict(fields or {})
    data["model"] = model
    data["speed"] = _number(speed, "--speed", 1.0)
    if turns is not None:
        data["turns"] = _turn_list(turns)
    if faults and faults.strip():
        data["faults"] = faults.strip()
    if fake and model != SIM:
        data["fake"] = True
    if fake_timing:
        data["fake_timing"] = fake_timing
    if not greeting:
        data["greeting"] = {**dict(data.get("greeting") or {}), "enabled": False}
    if base_url:
        data["base_url"] = base_url
    if rotate_after is not None:
        data["rotation"] = {**dict(data.get("rotation") or {}), "max_age_s": rotate_after}
    if rehydrate:
        data["mode"] = "rehydrated"
    if parallel != 1:
        data["parallel"] = parallel
    if speaker:
        data["speaker"] = speaker
    if disable_vad:
        data["disable_vad"] = True
    if service:
        data["service"] = service
    if service_args:
        data["service_args"] = dict(service_args) if isinstance(service_args, Mapping) else service_arg_pairs(service_args)
    if condition and condition.strip():
        data["condition"] = condition.strip()
    if seed is not None and str(seed).strip():
        data["seed"] = _whole(seed, "--seed")
    if effort and effort.strip():
        data["effort"] = effort.strip()
    return RunSettings(**data)


def _number(raw: float | str, option: str, empty: float) -> float:
    """A number as typed (a dialog's field: "" is the default); SettingsError naming the option."""
    if not isinstance(raw, str):
        return raw
    try:
        return float(raw.strip()) if raw.strip() else empty
    except ValueError:
        raise SettingsError(f"{option}: {raw.strip()!r} is not a number") from None


def _whole(raw: int | str, option: str) -> int:
    """A whole number as typed; SettingsError naming the option."""
    if isinstance(raw, int):
        return raw
    try:
        return int(raw.strip())
    except ValueError:
        raise SettingsError(f"{option}: {raw.strip()!r} is not a whole number") from None


def _turn_list(turns: str | Iterable[int]) -> list[int] | None:
    """`--turns` as typed (`all` or nothing: every turn) or as a list of indices."""
    if not isinstance(turns, str):
        return list(turns)
    text = turns.strip()
    return None if text in ("", "all") else parse_turns(text)


def service_arg_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """`--service-arg key=value` (repeated) as a dict; one line naming a malformed one (SettingsError)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise SettingsError(f"--service-arg {pair!r}: expected KEY=VALUE (e.g. base_url=http://127.0.0.1:8000/v1)")
        out[key.strip()] = value
    return out
