"""A run's settings: one typed model (`RunSettings`) from the flag, the new-run dialog or a
campaign spec to the provider's session, built by one builder (`build_settings`), validated once
there, stored with the run (`public`) and read back (`spine.recorded.RecordedRun`).

The options a user sets them by are declared once, here (`OPTIONS`): each option's name, the
field it sets, how a typed value is read, its help, and where it applies (`run`'s flags, the
demo's, a campaign key or axis, the new-run dialog, a row's label). The CLI flags, the dialog's
fields, the campaign keys and the variant labels are made from that table, so a new option is its
field and its row here, and its consumer (docs/architecture.md, "a run setting").

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import Field, PlainSerializer, PlainValidator, ValidationError, field_validator, model_validator

from .conditions import CLEAN, Condition, ConditionError, parse_condition
from .env_refs import ENV_PREFIX, is_env_ref
from .faults import FaultPlan, parse_faults
from .flags import named_values, turn_subset
from .provenance import usable
from .setting_parts import (
    ALL_SPEAKERS, TTS, EndOfTurn, Greeting, Pace, Rotation, SettingsError, Strict, VadConfig, Watchdog, number, parse_turns,
    service_arg_pairs, text, turn_list, turns_are, whole,
)

if TYPE_CHECKING:
    from .benchmark import Benchmark, Turn

__all__ = [
    "ALL_SPEAKERS", "FULL_DUPLEX", "FULL_DUPLEX_LABEL", "OPTIONS", "OPTION_OF", "SIM", "TTS", "DialogField", "EndOfTurn", "Greeting", "Option", "Pace",
    "Rotation", "RunSettings", "SettingsError", "VadConfig", "Watchdog", "build_settings", "parse_turns",
    "service_arg_pairs",
]

#: `run_started.config` of a run in the full-duplex turn loop (`runners/run/full_duplex.py`): its label's key
FULL_DUPLEX, FULL_DUPLEX_LABEL = "full_duplex", "full duplex"
SIM = "sim"  # the offline simulator's alias: faults are its alone, a protocol fake means nothing for it
MAX_SPEED = 50.0  # beyond this the pacing loop cannot keep up and buffers grow without bound
MAX_PARALLEL = 16  # rehydrated turns at once (the reference hangs at 32; 16 works)
SERVICE_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")  # --service package.module:Class
SECRET_NAME = re.compile(r"(^|_)(key|token|secret|password|credentials?)($|_)", re.I)  # args only given as env:
EFFORT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")  # a level (low, high) or a token budget (2048)
#: when a fake answers (`fake_timing`; `runners/fakes/timing.py` makes each): its provider's measured timing, or at once
FakeTiming = Literal["real", "instant"]
FAKE_TIMINGS: tuple[str, ...] = get_args(FakeTiming)


def _condition(value: object) -> Condition:
    """A condition as typed or stored (its spec), parsed once: the run holds the `Condition` itself."""
    if isinstance(value, Condition):
        return value
    try:
        return parse_condition(str(value))
    except ConditionError as e:
        raise ValueError(str(e).removeprefix("condition ")) from None


def _faults(value: object) -> FaultPlan | None:
    """A fault spec as typed or stored, parsed once (None: no faults; FaultSpecError names the item)."""
    if value is None or isinstance(value, FaultPlan):
        return value or None
    return parse_faults(str(value)) or None


#: stored as its canonical label (`noise=10`, one row per condition however it was typed), held parsed
ConditionSetting = Annotated[Condition, PlainValidator(_condition), PlainSerializer(lambda c: c.label, return_type=str)]
#: stored as its canonical spec (`3:no_response,expire=120`), held parsed
FaultSetting = Annotated[FaultPlan | None, PlainValidator(_faults),
                         PlainSerializer(lambda p: str(p) if p else None, return_type=str | None)]


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
    faults: FaultSetting = None  # the simulator's fault plan (`spine.faults`)
    fake: bool = False  # run against the provider's in-process protocol fake, scripted from the benchmark
    # a --fake run: when the fake answers. "real": the provider's measured timing (slow first audio,
    # audio slower than real time in bursts, a late terminal event, its quirks); "instant": at
    # once, in one burst (fast tests of other things). None becomes "real" for a --fake run; for
    # `sim` it stays None (the simulator's own fixed delay) unless given.
    fake_timing: FakeTiming | None = None
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
    # telephony, loss=<percent>); `seed` makes its noise and drops (each turn's from it: `turn_seed`), the
    # same for every run given it, so models are heard under the same audio
    condition: ConditionSetting = CLEAN
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

    @field_validator("effort")
    @classmethod
    def _effort_word(cls, v: str | None) -> str | None:
        if v is None:
            return None
        word = v.strip().lower()
        if not EFFORT.match(word):
            raise ValueError(f"{v!r} is not an effort (a level such as low, medium, high, or a token budget such as 2048)")
        return word

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
            raise SettingsError(f"{benchmark.name}: no turn(s) {', '.join(map(str, missing))} ({turns_are(have)})")
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
        for turn in sorted(self.faults.turns if self.faults else ()):
            if turn not in have:
                problems.append(f"--faults: {benchmark.name} has no turn {turn} ({turns_are(have)})")
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
        to import). Raises SettingsError. (Read a stored run through `spine.recorded.RecordedRun`.)"""
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


# --- the options, declared once ----------------------------------------------------------------

#: where an option applies: `run`'s flags; the demo's; a campaign key (one value for every cell, a
#: flag and a top-level key of its spec); a campaign axis (a list, one cell each); a campaign flag
#: never read from a spec file (where a session connects: `spine.provenance.CONNECTION`); the
#: new-run dialog; the variant label every surface puts after a run's model (`spine.source.variant_labels`)
Where = Literal["run", "demo", "campaign", "axis", "connection", "dialog", "label"]


@dataclass(frozen=True)
class DialogField:
    """An option's field in the new-run dialog (`screens/dialogs/new_run.py` makes the widget):
    an `Input` (`placeholder`, `initial`) or a `Select` of `choices` ((label, value), or `SPEAKERS`:
    those the chosen benchmark has), `choice` reading the widget's value as the option's, shown
    `always`, only for the simulator (`sim`), only for another model (`not_sim`), or only for a
    model whose protocol lets our commit close the user's turn (`manual_commit`)."""

    label: str
    id: str
    placeholder: str = ""
    initial: str = ""
    choices: tuple[tuple[str, str], ...] | Literal["speakers"] | None = None
    choice: Callable[[str], Any] = str
    shown: Literal["always", "sim", "not_sim", "manual_commit"] = "always"


#: a dialog field offering the chosen benchmark's speakers (`benchmarks.registry.speakers`)
SPEAKERS: Literal["speakers"] = "speakers"


def _on(value: object) -> bool | None:
    return True if value else None


def _as_pairs(value: object) -> dict[str, str] | None:
    if isinstance(value, Mapping):
        pairs = dict(value)
    else:
        given = value if isinstance(value, (list, tuple)) else () if value is None else (value,)
        pairs = service_arg_pairs(str(pair) for pair in given)
    return pairs or None


@dataclass(frozen=True)
class Option:
    """One run option: `key` (the builder's keyword, the flag's dest, the campaign's key) sets the
    RunSettings `field` (dotted into a part: `rotation.max_age_s`; a key the run's loop records
    for a label alone has none) to `parse(value as typed)`, None meaning not chosen (its default).
    `cli`: argparse's keywords besides help; `axis_help` a campaign axis's help (a list, one cell
    each); `label` what a stored value says after the model (None: the default, said nothing)."""

    key: str
    field: str
    flag: str
    help: str
    where: frozenset[Where]
    parse: Callable[[Any], Any] = text
    cli: Mapping[str, Any] | None = None
    axis_help: str = ""
    dialog: DialogField | None = None
    label: Callable[[Any], str | None] | None = None

    def applies(self, where: Where) -> bool:
        return where in self.where


def _is(*where: Where) -> frozenset[Where]:
    return frozenset(where)


CONDITIONS_ARE = ("clean (default), noise=<SNR dB>[:white|pink|babble], telephony (8 kHz mu-law, 300-3400 Hz) or "
                  "loss=<percent> (dropped 20 ms frames); seeded, so reproducible")
#: every run option, in the order the dialog shows them and a row's labels read
OPTIONS: tuple[Option, ...] = (
    Option("fake", "fake", "--fake", "run against the provider's local protocol fake, scripted from the benchmark (no key)",
           _is("run", "campaign", "dialog"), _on, {"action": "store_const", "const": True},
           dialog=DialogField("against", "against", initial="service", shown="not_sim", choice=lambda v: v == "fake",
                              choices=(("the real service (key from the environment)", "service"),
                                       ("its local protocol fake (no key; scripted answers)", "fake")))),
    Option("turns", "turns", "--turns", "turn subset, e.g. 0,5-9", _is("run", "demo", "campaign", "dialog"), turn_list,
           {"type": turn_subset, "metavar": "TURNS"}, dialog=DialogField("turns", "turns", placeholder="all, or e.g. 0-4,7")),
    Option("speed", "speed", "--speed", "audio speed-up (sim or --fake only; default 1)", _is("run", "demo", "campaign", "dialog"),
           lambda v: number(v, "--speed"), {"type": float},
           dialog=DialogField("speed", "speed", placeholder="1.0 = real time", initial="1.0")),
    Option("speaker", "speaker", "--speaker", "whose voice the user audio is: tts (default, the benchmark's audio/), a human "
           "speaker's recordings (e.g. person1: real_audio/person1/), or all (one run per speaker the benchmark has)",
           _is("run", "axis", "dialog", "label"), cli={"metavar": "tts|NAME|all"},
           axis_help="whose voice the user audio is, one cell each: tts (default), human speakers' recordings "
           "(person1,person2: real_audio/<name>/), or all (tts and every speaker the benchmarks have)",
           dialog=DialogField("speaker", "speaker", initial=TTS, choices=SPEAKERS),
           label=lambda v: f"speech: {v}" if v != TTS else None),
    Option("condition", "condition", "--condition", f"the acoustic condition the user audio is heard under: {CONDITIONS_ARE}",
           _is("run", "axis", "dialog", "label"), cli={"type": named_values, "metavar": "SPEC"},
           axis_help=f"the acoustic condition the user audio is heard under, one cell each: {CONDITIONS_ARE}",
           dialog=DialogField("condition", "condition", placeholder="clean, or noise=10[:white|pink|babble], telephony, loss=5"),
           label=lambda c: c.label if c != CLEAN else None),
    Option("effort", "effort", "--effort", "reasoning effort / thinking level, as the model takes it (e.g. low, high, or a "
           "token budget; `arena-tui models` says which); refused for a model without one",
           _is("run", "axis", "dialog", "label"), cli={"type": named_values, "metavar": "VALUE"},
           axis_help="reasoning effort / thinking level, one cell each, as the model takes it (e.g. low, high, or a "
           "token budget; `arena-tui models` says which); refused for a model without one",
           dialog=DialogField("effort", "effort", placeholder="the model's default (this model takes no effort)"),
           label=lambda v: f"effort={v}" if v else None),
    Option("disable_vad", "disable_vad", "--disable-vad", "server VAD off (a model whose protocol lets the client commit the "
           "user's turn: `arena-tui models` says manual commit): the user's turn is closed by our commit + response.create "
           "at the end of the speech in the user WAV", _is("run", "campaign", "dialog", "label"), _on,
           {"action": "store_const", "const": True},
           dialog=DialogField("server VAD", "vad", initial="server", shown="manual_commit", choice=lambda v: v == "off",
                              choices=(("on: the model's server VAD closes the user's turn", "server"),
                                       ("off: our commit at the end of the speech (--disable-vad)", "off"))),
           label=lambda v: "manual commit" if v else None),
    Option(FULL_DUPLEX, "", "", "a full-duplex model's turns, delimited by their windows (recorded by "
           "its turn loop, `arena_tui.spine.duplex.FULL_DUPLEX_TURN`; not chosen)", _is("label"),
           label=lambda v: FULL_DUPLEX_LABEL if v else None),
    Option("vad_threshold", "vad.threshold", "--vad-threshold", "the server VAD's activation threshold, 0-1 (default 0.7, "
           "the reference's): higher needs louder speech to open the user's turn; sent to the providers whose server VAD "
           "takes one, a cascade's Silero confidence", _is("run", "campaign", "label"), lambda v: number(v, "--vad-threshold"),
           {"type": float, "metavar": "0-1"}, label=lambda v: f"vad={v:g}" if v != VadConfig().threshold else None),
    Option("service", "service", "--service", "a Pipecat LLM or realtime service class of your own, run in place of --model's "
           "provider (--model is then the model id it is given); a preflight says what it needs",
           _is("run", "connection", "label"), cli={"metavar": "package.module:Class"},
           label=lambda v: f"service: {v.rpartition(':')[2]}" if v else None),
    Option("service_args", "service_args", "--service-arg", "a constructor argument of --service's class (repeatable; JSON "
           "values as JSON, env:NAME reads a variable: the only way to give a key)", _is("run", "connection"), _as_pairs,
           {"action": "append", "metavar": "KEY=VALUE"}),
    Option("base_url", "base_url", "--base-url", "provider endpoint override (e.g. ws://127.0.0.1:PORT/v1/realtime)",
           _is("run", "connection")),
    Option("fake_timing", "fake_timing", "--fake-timing", "when the fake answers (--fake or sim): real = the provider's "
           "measured timing (default for --fake), instant = at once, in one burst", _is("run"),
           cli={"choices": FAKE_TIMINGS}),
    Option("greeting", "greeting.enabled", "--no-greeting", "skip the greeting handshake", _is("run", "campaign"),
           lambda v: None if v else False, {"action": "store_const", "const": False}),
    Option("rotate_after", "rotation.max_age_s", "--rotate-after", "rotate sessions older than this",
           _is("run"), lambda v: number(v, "--rotate-after"), {"type": float, "metavar": "SECONDS"}),
    Option("rehydrate", "mode", "--rehydrate", "each turn in a fresh session seeded with the golden turns before it "
           "(no turn-taking scored)", _is("run"), lambda v: "rehydrated" if v else None, {"action": "store_const", "const": True}),
    Option("parallel", "parallel", "--parallel", "rehydrated turns at once (default 1)", _is("run"),
           lambda v: whole(v, "--parallel"), {"type": int, "metavar": "N"}),
    Option("seed", "seed", "--seed", "the seed of the condition's noise and drops (default 0: every run of a condition "
           "hears the same audio)", _is("run"), lambda v: whole(v, "--seed"), {"type": int}),
    Option("faults", "faults", "--faults", "simulator faults, e.g. '3:no_response,5:barge_in,expire=120' (sim only)",
           _is("run", "demo", "dialog", "label"),
           dialog=DialogField("simulator faults", "faults", placeholder="e.g. 1:no_response,2:barge_in", shown="sim"),
           label=lambda p: f"faults: {p}" if p else None),
)
BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
#: the option behind a field, so an error names what the user typed
OPTION_OF: dict[str, str] = {"model": "--model", **{o.field: o.flag for o in OPTIONS if o.field and o.flag}}


def options(where: Where) -> tuple[Option, ...]:
    """The options that apply `where`, in the table's order."""
    return tuple(o for o in OPTIONS if o.applies(where))


def build_settings(model: str = SIM, *, fields: Mapping[str, Any] | None = None, **choices: object) -> RunSettings:
    """The settings of a run as a user chose them, validated once: the one builder behind
    `arena-tui run|demo` (flags), the new-run dialog (its fields, as typed) and a campaign (its
    spec, per cell). Each choice is an option's key (`OPTIONS`) and its value as typed (`turns="0,5-9"`
    or a list, `speed="2"`, `greeting=False` for --no-greeting, `service_args` as `KEY=VALUE` pairs
    or a mapping); None or "" is its default. `fields` are further settings as stored (a campaign's
    [config] table, the demo's watchdog), under what the choices set. `fake` means nothing for the
    simulator (always local) and is dropped for it. SettingsError: one line naming the option."""
    data: dict[str, Any] = dict(fields or {})
    data["model"] = model
    for key, raw in choices.items():
        option = BY_KEY.get(key)
        if option is None or not option.field:
            raise TypeError(f"build_settings: no run option {key!r}")
        value = None if raw is None else option.parse(raw)
        if value is None or (key == "fake" and model == SIM):
            continue
        *parts, last = option.field.split(".")
        into = data
        for part in parts:  # a part's other values (a campaign's [config] table) kept
            into[part] = dict(into.get(part) or {})
            into = into[part]
        into[last] = value
    return RunSettings(**data)
