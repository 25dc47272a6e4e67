"""What a campaign runs: benchmarks × models × repeats, from CLI flags or a TOML file.

One spec expands to cells `(benchmark, model, repeat)`, each one ordinary run. What the user's
audio is (a speaker, an acoustic condition) is part of a cell's benchmark, what is asked of the
model (a reasoning effort) part of its model: `demo_bench@person1 [telephony]` × `sim [effort=high]`
(`cell_benchmark`, `cell_model`; the defaults leave the names as they were). A TOML file
holds the same keys as the flags (`bench = ["demo_bench"]`, `model = [...]`, `repeats`, …);
flags given on the command line override the file's values.
"""

from __future__ import annotations

import math
import os

import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from arena_tui.spine.conditions import CLEAN, ConditionError, parse_condition
from arena_tui.spine.judges import KINDS_OR_NONE
from arena_tui.spine.provenance import CONNECTION
from arena_tui.spine.settings import OPTION_OF, OPTIONS, RunSettings, SettingsError, build_settings, parse_turns
from arena_tui.spine.source import ALL_SPEAKERS, TTS, variant_labels, variants_text


class SpecError(ValueError):
    """A spec that cannot run (names the file or the flag and the field)."""


#: a cell's benchmark spoken by a human speaker: `conversation_bench@person1` (TTS: the name alone)
SPEAKER_SEP = "@"


def cell_benchmark(name: str, speaker: str, condition: str = CLEAN.label) -> str:
    """The benchmark of a cell whose user audio is `speaker`'s heard under `condition`: the name
    alone for TTS and clean, so a campaign without them keeps the cells it always had."""
    key = name if speaker == TTS else f"{name}{SPEAKER_SEP}{speaker}"
    return key if condition == CLEAN.label else f"{key}{VARIANT_OPEN}{condition}{VARIANT_CLOSE}"


def cell_parts(benchmark: str) -> tuple[str, str]:
    """(benchmark name, speaker) of a cell's benchmark (`cell_benchmark` read back)."""
    benchmark, _ = _variant(benchmark)
    name, sep, speaker = benchmark.rpartition(SPEAKER_SEP)
    return (name, speaker) if sep and name and speaker else (benchmark, TTS)


def cell_condition(benchmark: str) -> str:
    """The acoustic condition of a cell's benchmark (`clean` when it names none)."""
    return _variant(benchmark)[1] or CLEAN.label


def cell_model(model: str, effort: str | None) -> str:
    """The model of a cell asked for `effort`: `sim [effort=high]` (the default effort: the alias alone)."""
    return model if not effort else f"{model} [{EFFORT_KEY}{effort}]"


def model_parts(model: str) -> tuple[str, str | None]:
    """(model alias, effort or None) of a cell's model (`cell_model` read back)."""
    alias, variant = _variant(model)
    return (alias, variant.removeprefix(EFFORT_KEY)) if variant.startswith(EFFORT_KEY) else (model, None)


#: a cell's variant after its name: `demo_bench [noise=10]`, `sim [effort=high]`
VARIANT_OPEN, VARIANT_CLOSE, EFFORT_KEY = " [", "]", "effort="


def _variant(key: str) -> tuple[str, str]:
    name, sep, rest = key.rpartition(VARIANT_OPEN)
    return (name, rest[:-1]) if sep and name and rest.endswith(VARIANT_CLOSE) else (key, "")


@dataclass(frozen=True)
class Cell:
    benchmark: str
    model: str
    repeat: int  # 1-based

    @property
    def label(self) -> str:
        """`demo_bench [telephony] × sim [effort=high] #1`: the cell's key as the CLI prints it."""
        return f"{self.benchmark} × {self.model} #{self.repeat}"

    @property
    def bench_name(self) -> str:
        """The benchmark's name alone (no speaker, no condition)."""
        return cell_parts(self.benchmark)[0]

    @property
    def alias(self) -> str:
        """The model's alias alone (no effort)."""
        return model_parts(self.model)[0]

    @property
    def variants(self) -> tuple[str, ...]:
        """How the cell's run differs from the default, named as every surface names a run's
        (`spine.source.variant_labels`): `("speech: person1", "telephony", "effort=high")`."""
        return variant_labels({"speaker": cell_parts(self.benchmark)[1], "condition": cell_condition(self.benchmark),
                               "effort": model_parts(self.model)[1]})

    @property
    def shown(self) -> str:
        """`demo_bench × sim (telephony, effort=high) #1`: the cell as a screen shows it, its variants
        after the model as a run's are (`spine.source.variants_text`)."""
        return f"{self.bench_name} × {self.alias}{variants_text(self.variants)} #{self.repeat}"


JUDGES = KINDS_OR_NONE
PACE_BUDGET = 16.0  # sessions × speed one worker process keeps in pace (scripts/bench_campaign.py)
MAX_PER_WORKER = 2  # sessions on one event loop at 1×: their audio steps queue behind each other
#: local worker processes per core at most: between processes the kernel preempts, within one loop
#: nothing does, so at 1× 16 sessions as 8 × 2 pace far better than as 2 × 8 on 2 cores
#: (scripts/bench_concurrency.py: input p99 2.4 vs 7.5 ms, latency error p95 20 vs 46 ms)
WORKERS_PER_CORE = 4
#: bounds on what a campaign may ask, checked from the typed counts before a cell is built: a cell
#: is a whole benchmark run (minutes of audio each), so 10,000 cells is already weeks of audio; past
#: that a typo (`--repeats 100000000`) would build its cells (and grow by ~110 MB/s) before anything ran
MAX_REPEATS = 1000
MAX_CELLS = 10_000


@dataclass(frozen=True)
class CampaignSpec:
    benchmarks: tuple[str, ...]
    models: tuple[str, ...]
    repeats: int = 1
    concurrency: int | None = None  # sessions per worker (None: as many as keep pace at this speed)
    judge: str = "auto"  # as `arena-tui run --judge`: a kind of `spine.judges.KINDS_OR_NONE`
    speed: float = 1.0
    turns: str | None = None  # turn subset, as `--turns`
    fake: bool = False
    greeting: bool = True
    executor: str = "local"  # local|ray
    ray_address: str | None = None
    workers: int | None = None  # local worker processes (default: `local_workers`)
    extra: dict[str, Any] = field(default_factory=dict)  # further run settings (`RunSettings` fields) from a TOML [config]
    #: whose voice the user audio is, one cell each: tts and/or human speakers (`all` is resolved
    #: by the command, per the benchmarks' recordings, before the spec is made)
    speakers: tuple[str, ...] = (TTS,)
    #: the acoustic conditions the user audio is heard under, one cell each (`spine.conditions` specs, stored canonical)
    conditions: tuple[str, ...] = (CLEAN.label,)
    #: the reasoning efforts asked of every model, one cell each (none: the provider's default; a
    #: model that takes none is refused by the run preflight, naming what it takes)
    efforts: tuple[str, ...] = ()
    #: server VAD off in every run (`--disable-vad`: our commit closes the user's turn); a model whose
    #: protocol has no client commit is refused by the run preflight (`orchestrator.preflight`)
    disable_vad: bool = False
    #: every other run option declared a campaign key (`spine.settings.OPTIONS`), by key, as given:
    #: one value for every cell, checked by the run settings' builder as a run's flag is
    options: dict[str, Any] = field(default_factory=dict)
    #: the most runs holding a session of one provider at once, across every worker (`--provider-cap
    #: NAME=N`, a `[provider_cap]` table): provider (or model alias) -> N, over the catalog's
    #: `max_sessions` (resolved by `arena_tui.orchestration.provider_caps`, which knows the catalog)
    provider_caps: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.benchmarks:
            raise SpecError("campaign: no benchmark (--bench a,b or bench = [...])")
        if not self.models:
            raise SpecError("campaign: no model (--model x,y or model = [...])")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or not 1 <= self.repeats <= MAX_REPEATS:
            raise SpecError(f"campaign: repeats must be a whole number from 1 to {MAX_REPEATS} (got {self.repeats!r})")
        if self.concurrency is not None and self.concurrency < 1:
            raise SpecError(f"campaign: concurrency must be 1 or more (got {self.concurrency})")
        if self.workers is not None and self.workers < 1:
            raise SpecError(f"campaign: workers must be 1 or more (got {self.workers})")
        if self.turns is not None and not str(self.turns).strip(",- \t"):
            raise SpecError(f"campaign: turns {self.turns!r} selects no turns (leave it out to run every turn)")
        if self.turns is not None:
            try:
                parse_turns(str(self.turns))
            except SettingsError as e:
                raise SpecError(f"campaign: {e}") from None
        if self.judge not in JUDGES:
            raise SpecError(f"campaign: judge must be one of {', '.join(JUDGES)} (got {self.judge!r})")
        if self.executor not in ("local", "ray"):
            raise SpecError(f"campaign: executor must be local or ray (got {self.executor!r})")
        if not self.speakers:
            raise SpecError("campaign: no speaker (--speaker tts,person1 or speaker = [...])")
        bad = [s for s in self.speakers if s == ALL_SPEAKERS or not s or SPEAKER_SEP in s]
        if bad:
            raise SpecError(f"campaign: speaker {bad[0]!r} is not a speaker's name (tts, person1, …)")
        if not self.conditions:
            raise SpecError("campaign: no condition (--condition clean,telephony or condition = [...])")
        # one cell per condition however it was typed; one it cannot read is refused by the run
        # settings' builder, in the words `run --condition` says (`cell_settings`, the preflight)
        object.__setattr__(self, "conditions", tuple(dict.fromkeys(_canonical(c) for c in self.conditions)))
        object.__setattr__(self, "efforts", tuple(dict.fromkeys(e.strip().lower() for e in self.efforts)))
        bad = [e for e in self.efforts if not e or VARIANT_OPEN.strip() in e or VARIANT_CLOSE in e]
        if bad:
            raise SpecError(f"campaign: effort {bad[0]!r} is not an effort (low, high, 2048, …)")
        if not isinstance(self.disable_vad, bool):
            raise SpecError(f"campaign: disable_vad must be true or false (got {self.disable_vad!r})")
        if not isinstance(self.provider_caps, dict):
            raise SpecError(f"campaign: provider_cap must be a table of provider = N (got {self.provider_caps!r})")
        for name, most in self.provider_caps.items():
            if isinstance(most, bool) or not isinstance(most, int) or most < 1:
                raise SpecError(f"campaign: provider_cap {name}: sessions at once must be a whole number 1 or more "
                                f"(got {most!r})")
        axes = {"benchmarks": len(self.benchmarks), "speakers": len(self.speakers), "conditions": len(self.conditions),
                "models": len(self.models), "efforts": max(1, len(self.efforts)), "repeats": self.repeats}
        if math.prod(axes.values()) > MAX_CELLS:
            said = " × ".join(f"{n} {k}" for k, n in axes.items() if n > 1)
            raise SpecError(f"campaign: {said} is {math.prod(axes.values()):,} cells, more than the {MAX_CELLS:,} "
                            "one campaign may hold (split it)")

    @property
    def per_worker(self) -> int:
        """Sessions one worker runs at once. Past its pace budget a process falls behind the
        audio clock, and behind it collapses: input bursts to catch up, replies time out into
        retries that add more work (demo_bench at 20×: one session 9.5 s, two 52 s with 3 false
        no-response retries each, eight recorded nothing in 45 s). So by default a faster run
        gets fewer sessions per worker; an explicit --concurrency is obeyed (see `pace_warning`)."""
        return self.concurrency if self.concurrency is not None else self._in_pace

    @property
    def local_workers(self) -> int:
        """Worker processes of the local executor: as given, else as many as keep within half the
        machine's pace budget at this speed (PACE_BUDGET per core: the other half is headroom for
        whatever else runs), at least one per core, at most WORKERS_PER_CORE per core, and no more
        than the cells need. So only slow campaigns get more processes than cores (1×: 4 per core)."""
        cores = os.cpu_count() or 1
        if self.workers is not None:  # as asked, but never more than the cells (one each) or the machine holds
            return max(1, min(self.workers, len(self.cells()), max_local_workers()))
        in_pace = int(cores * PACE_BUDGET / 2 / self.speed / self.per_worker)
        needed = -(-len(self.cells()) // self.per_worker)
        return max(1, min(needed, max(cores, min(cores * WORKERS_PER_CORE, in_pace))))

    @property
    def workers_note(self) -> str | None:
        """Why the local executor starts fewer workers than `--workers` asked, or None."""
        if self.executor != "local" or self.workers is None or self.local_workers >= self.workers:
            return None
        cells = len(self.cells())
        why = f"{cells} cell(s) need no more" if self.local_workers == cells else \
            f"this machine runs at most {max_local_workers()}"
        return f"{self.local_workers} worker process(es), not the {self.workers} asked: {why}"

    @property
    def _in_pace(self) -> int:
        return max(1, min(MAX_PER_WORKER, int(PACE_BUDGET // self.speed)))

    @property
    def pace_warning(self) -> str | None:
        """Why this speed or an explicit concurrency asks more of a process than it keeps pace
        with, or None (a sentence: the campaign's output prefixes it). (Admission control then gives busy workers fewer sessions and slower new
        runs, admission.py; turns that lose pace anyway are re-run.)"""
        load = self.per_worker * self.speed
        if load <= PACE_BUDGET:
            return None
        if self.per_worker > 1:
            return (f"{self.per_worker} sessions per worker at speed {self.speed:g} is {load:g}× real time "
                    f"per process (about {PACE_BUDGET:g}× keeps pace): admission control will give busy workers "
                    f"fewer; leave --concurrency unset to start at {self._in_pace}")
        return (f"speed {self.speed:g} is more than one process keeps pace with (about {PACE_BUDGET:g}× "
                "real time): a busy worker's new runs get a lower speed (each run records its own), and turns "
                "that lose pace are re-run")

    def choices(self) -> dict[str, Any]:
        """The campaign's own keys as the run builder takes them (option key -> value): every cell's."""
        return {o.key: getattr(self, o.key) if o.key in _FIELDS else self.options.get(o.key) for o in OPTIONS
                if o.applies("campaign")}

    def run_settings(self, model: str, speaker: str = TTS, condition: str = CLEAN.label,
                     effort: str | None = None) -> RunSettings:
        """The settings of one cell's run (`speaker`: whose recordings its user audio is, `condition`
        what it is heard under, `effort` what is asked of the model), by the one builder `arena-tui
        run` and the new-run dialog use; SettingsError naming what it refuses."""
        return build_settings(model, **self.choices(), speaker=speaker, condition=condition, effort=effort,
                              fields=self.extra)

    @property
    def variants(self) -> tuple[str, ...]:
        """How every run of it differs from the default, its axes apart (each cell says its own):
        `("manual commit",)` (`spine.source.variant_labels`); () when its settings cannot be built."""
        try:
            return variant_labels(self.run_settings(self.models[0]).public())
        except SettingsError:
            return ()

    def cell_settings(self, benchmark: str, model: str) -> RunSettings:
        """`run_settings` of a cell, from its benchmark and model (`cell_benchmarks`, `cell_models`)."""
        alias, effort = model_parts(model)
        return self.run_settings(alias, cell_parts(benchmark)[1], cell_condition(benchmark), effort)

    def cells(self) -> list[Cell]:
        """The matrix, benchmark-major then model then repeat (the order runs are submitted)."""
        return [Cell(b, m, r) for b in self.cell_benchmarks() for m in self.cell_models()
                for r in range(1, self.repeats + 1)]

    def cell_benchmarks(self) -> list[str]:
        """Each benchmark as each speaker says it under each condition (`cell_benchmark`), benchmark-major."""
        return [cell_benchmark(b, s, c) for b in self.benchmarks for s in self.speakers for c in self.conditions]

    def cell_models(self) -> list[str]:
        """Each model at each effort (`cell_model`), model-major."""
        return [cell_model(m, e) for m in self.models for e in (self.efforts or (None,))]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ray_address"] = _no_secret(d["ray_address"])
        if self.speakers == (TTS,):  # a spec without speakers stays the JSON it always was (found again by it)
            del d["speakers"]
        if not self.disable_vad:  # (the same for one with the server's VAD, clean audio, no effort)
            del d["disable_vad"]
        if self.conditions == (CLEAN.label,):
            del d["conditions"]
        if not self.efforts:
            del d["efforts"]
        if not self.options:  # (a spec of the campaign keys of old stays the JSON it was)
            del d["options"]
        if not self.provider_caps:
            del d["provider_caps"]
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CampaignSpec:
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in data.items() if k in known}
        d["benchmarks"], d["models"] = tuple(d["benchmarks"]), tuple(d["models"])
        for axis in ("speakers", "conditions", "efforts"):
            if axis in d:
                d[axis] = tuple(d[axis])
        return cls(**d)


def _canonical(condition: str) -> str:
    try:
        return parse_condition(condition).label
    except ConditionError:
        return condition.strip()


def _no_secret(address: str | None) -> str | None:
    """ray://user:token@host → ray://host (a credential in the address never reaches the DB)."""
    if address and "@" in address:
        scheme, _, rest = address.rpartition("//")
        return (scheme + "//" if scheme else "") + rest.split("@", 1)[1]
    return address


_FIELDS = {f.name for f in fields(CampaignSpec)}
#: the spec field a run option's campaign key sets: an axis its list (`speaker` -> `speakers`), a key
#: with a field of its own that field (what the pacing reads: `speed`), any other key `options`
OPTIONS_FIELD = "options"
_OPTION_KEYS = {o.key: f"{o.key}s" if o.applies("axis") else o.key if o.key in _FIELDS else OPTIONS_FIELD
                for o in OPTIONS if o.applies("campaign") or o.applies("axis")}
# TOML key / flag name -> spec field
_KEYS = {"bench": "benchmarks", "model": "models", "repeats": "repeats", "concurrency": "concurrency",
         "judge": "judge", "executor": "executor", "ray_address": "ray_address", "workers": "workers",
         "provider_cap": "provider_caps", **_OPTION_KEYS}
#: run settings a campaign sets by its own keys, never in [config]
_OWN_KEYS = {"model", *(o.field for o in OPTIONS if o.key in _OPTION_KEYS and "." not in o.field)}
_LISTS = ("bench", "model", *(o.key for o in OPTIONS if o.applies("axis")))  # TOML keys that are lists (or "a,b")
_LIST_FIELDS = ("benchmarks", "models", *(_KEYS[k] for k in _LISTS[2:]))


def spec_values(chosen: dict[str, Any]) -> dict[str, Any]:
    """A campaign's run options as typed (option key -> value, None: not given) as spec fields."""
    out: dict[str, Any] = {}
    for key, value in chosen.items():
        if key in _OPTION_KEYS and _OPTION_KEYS[key] == OPTIONS_FIELD:
            out.setdefault(OPTIONS_FIELD, {})[key] = value
        elif key in _OPTION_KEYS:
            out[_OPTION_KEYS[key]] = value
    return out


def parse_caps(pairs: list[str] | str) -> dict[str, int]:
    """`--provider-cap openai=2` (repeatable, or `openai=2,gemini=3`) as provider -> N; SpecError naming a bad one."""
    out: dict[str, int] = {}
    for pair in [p for item in ([pairs] if isinstance(pairs, str) else pairs) for p in item.split(",") if p.strip()]:
        name, sep, most = pair.partition("=")
        if not sep or not name.strip() or not most.strip().isdigit() or int(most) < 1:
            raise SpecError(f"--provider-cap {pair.strip()!r}: expected NAME=N, N a whole number 1 or more (e.g. openai=2)")
        out[name.strip()] = int(most)
    return out


def caps_given_text(caps: dict[str, int]) -> str:
    """Caps as given (`--provider-cap`), "" none: "at most 2 openai sessions at once"."""
    return f"at most {', '.join(f'{n} {name}' for name, n in caps.items())} sessions at once" if caps else ""


def listify(value: object, where: str) -> tuple[str, ...]:
    """A list key's names, from a list or `a,b`; one given that names nothing (`effort = ""`) is refused,
    never read as the default it would silently have become."""
    if isinstance(value, str):
        names = tuple(v.strip() for v in value.split(",") if v.strip())
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = tuple(value)
    else:
        raise SpecError(f"{where}: expected a list of names or 'a,b'")
    if not names:
        raise SpecError(f"{where}: names nothing (leave it out for the default)")
    return names


def load_toml(path: Path) -> dict[str, Any]:
    """The spec fields a TOML file sets (unknown keys are an error naming them)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "config":
            if not isinstance(value, dict):
                raise SpecError(f"{path}: [config] must be a table of run settings")
            if own := sorted(set(value) & _OWN_KEYS):
                raise SpecError(f"{path}: [config] {own[0]}: a campaign key: set it at the top (`{own[0]} = …`)")
            if aims := [k for k in CONNECTION if k in value]:  # a file is data: it never aims a key or names code
                raise SpecError(f"{path}: [config] {aims[0]}: a spec file never chooses where a key is sent or what "
                                f"is imported: give it on the command line (`campaign run {OPTION_OF[aims[0]]}`)")
            out["extra"] = value
        elif key == "provider_cap":
            if not isinstance(value, dict):
                raise SpecError(f"{path}: provider_cap must be a table of provider = N, e.g. [provider_cap] openai = 2")
            out["provider_caps"] = value
        elif _KEYS.get(key) == OPTIONS_FIELD:
            out.setdefault(OPTIONS_FIELD, {})[key] = value
        elif key in _KEYS:
            out[_KEYS[key]] = listify(value, f"{path}: {key}") if key in _LISTS else value
        else:
            raise SpecError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(_KEYS))}, [config])")
    if isinstance(out.get("turns"), list):
        out["turns"] = ",".join(str(t) for t in out["turns"])
    return out


def build_spec(file_values: dict[str, Any], flag_values: dict[str, Any]) -> CampaignSpec:
    """File values, overridden by every flag actually given (None = not given)."""
    merged = dict(file_values)
    for name, value in flag_values.items():
        if name == OPTIONS_FIELD:  # each given one over the file's
            merged[name] = {**merged.get(name, {}), **{k: v for k, v in value.items() if v is not None}}
        elif name == "provider_caps" and value is not None:  # (the same: a cap given over the file's)
            merged[name] = {**merged.get(name, {}), **(value if isinstance(value, dict) else parse_caps(value))}
        elif value is not None:
            merged[name] = listify(value, f"--{name}") if name in _LIST_FIELDS else value
    merged.setdefault("benchmarks", ())
    merged.setdefault("models", ())
    try:
        spec = CampaignSpec(**merged)
    except TypeError as e:
        raise SpecError(f"campaign: {e}") from None
    most = max_local_workers()
    if spec.executor == "local" and spec.workers is not None and spec.workers > most:
        raise SpecError(f"campaign: --workers {spec.workers} is more worker processes than this machine runs "
                        f"({os.cpu_count() or 1} core(s): at most {most}, {WORKERS_PER_CORE} per core; each loads the engine)")
    return spec


def max_local_workers() -> int:
    """The most local worker processes a campaign starts: `WORKERS_PER_CORE` per core. More only queue
    for the same cores, each a Python with the engine loaded (`--workers 10000` once spawned 238 of
    them, 12.5 GB in 56 s, before anything ran)."""
    return (os.cpu_count() or 1) * WORKERS_PER_CORE
