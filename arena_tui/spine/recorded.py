"""A stored run's settings, typed: the one reader of what a run recorded (`run_started.config`,
`RunSettings.public()` plus what its loop and an import added). Every surface, the judge, the
reports and resume read a run's settings through `RecordedRun`, never by key
(tests/test_recorded.py holds it), so each stored key has one default and one reading.

A stored run is data from any version (or another project's run folder, imported), so reading it
never raises: a key it lacks reads as the setting's default, a value this version cannot read as
the default too, kept in `unread` (and said so by its label: `spine.source.variant_labels`). The
settings a run is set from again (resume) are `settings()`, validated as a new run's are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache, cached_property
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from .conditions import Condition
from .faults import FaultPlan, TurnFault
from .provenance import IMPORT_MARKS, is_imported, provenance_text
from .settings import FULL_DUPLEX, Option, RunSettings

#: an imported reference run's wall-clock turn lengths (its `latency_ms`), turn -> ms (`timing.turn_durations`)
TURN_DURATION = "turn_duration_ms"
#: what a text loop records of itself (`runners/run/text.py`), and a rehydrated run (`RunSettings.public`)
MODALITY, TEXT = "modality", "text"
TURN_TAKING_SUPPORTED = "turn_taking_supported"
#: what an import records: one of ours exported (`imported_from`: its folder), the reference harness's run
#: (`imported`: its folder, judges, latency)
IMPORTED_FROM, IMPORTED = IMPORT_MARKS
_MISSING = object()
#: readers of the records read lately, by the record's identity (each holds its record, so an id is
#: never another's while cached): a surface asks again on every refresh, and reads once
_READ: dict[int, RecordedRun] = {}
_READ_MOST = 4096


@cache
def _adapter(field: str) -> TypeAdapter[Any]:
    """A validator of one RunSettings field alone (its type and bounds), built once per field."""
    info = RunSettings.model_fields[field]
    annotation: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    return TypeAdapter(annotation)


@cache
def _default(field: str) -> Any:
    """A RunSettings field's default, made once (what a reader hands out is read, never changed)."""
    return RunSettings.model_fields[field].get_default(call_default_factory=True)


class RecordedRun:
    """One stored run's settings and what its loop and an import recorded beside them, read once
    each (a property computes on first use). Built from a `run_started.config` (or a store row's
    `config`): `RunStarted.recorded`, `RunRow.recorded`."""

    @classmethod
    def of(cls, config: Mapping[str, Any] | None) -> RecordedRun:
        """The reader of `config`, the one made before for this very record when there is one."""
        found = _READ.get(id(config))
        if found is not None and found._raw is config:
            return found
        if len(_READ) >= _READ_MOST:
            del _READ[next(iter(_READ))]
        made = _READ[id(config)] = cls(config)
        return made

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        self._raw: Mapping[str, Any] = config if isinstance(config, Mapping) else {}
        #: stored values this version cannot read (a newer version's, a hand-edited import), by key
        self.unread: dict[str, Any] = {}
        self._settings: dict[str, Any] = {}

    # --- the run's settings, field by field ---------------------------------------------------

    def setting(self, field: str) -> Any:
        """The stored value of a RunSettings field, validated as the field is (so typed: a `Condition`,
        a `FaultPlan`); its default when the run stored none or one this version cannot read."""
        if field not in self._settings:
            raw = self._raw.get(field, _MISSING)
            value = _MISSING
            if raw is not _MISSING and raw is not None:
                try:
                    value = _adapter(field).validate_python(raw)
                except (ValidationError, ValueError):
                    self.unread[field] = raw
            self._settings[field] = _default(field) if value is _MISSING else value
        return self._settings[field]

    def value(self, option: Option) -> Any:
        """What the run recorded for `option` (its field's value, `vad.threshold` a part's; a key only
        its loop records, such as `full_duplex`: whether it said so)."""
        if not option.field:
            return bool(self._raw.get(option.key))
        field, *within = option.field.split(".")
        value = self.setting(field)
        for name in within:
            value = getattr(value, name)
        return value

    def unread_value(self, option: Option) -> Any:
        """What the run stored for `option` that this version cannot read (None: nothing such)."""
        return self.unread.get(option.field.split(".")[0]) if option.field else None

    def settings(self) -> RunSettings:
        """The run's settings as a new run would be given them (resume): every stored field validated
        together, an imported run's connection left out (`spine.provenance`); SettingsError naming the
        field it refuses."""
        return RunSettings.from_recorded(self._raw)

    @property
    def model(self) -> str:
        return str(self.setting("model"))

    @property
    def fake(self) -> bool:
        """Against the provider's local protocol fake (`--fake`)."""
        return bool(self.setting("fake"))

    @property
    def speaker(self) -> str:
        """Whose voice its user audio is: `tts` (also every run stored before speakers) or a human speaker's."""
        return str(self.setting("speaker"))

    @property
    def condition(self) -> Condition:
        """The acoustic condition its user audio was heard under (clean: also every run stored before conditions)."""
        return self.setting("condition")

    @property
    def condition_text(self) -> str:
        """The condition as a report column says it: its canonical spec, or as stored when this version cannot read it."""
        condition = self.condition  # (read first: a value it cannot read is then in `unread`)
        return str(self.unread["condition"]) if "condition" in self.unread else condition.label

    @property
    def effort(self) -> str:
        """The reasoning effort asked of the model ("" for the provider's default)."""
        return str(self.setting("effort") or "")

    @property
    def disable_vad(self) -> bool:
        return bool(self.setting("disable_vad"))

    @property
    def disable_vad_recorded(self) -> bool | None:
        """`disable_vad` as the reference's runtime.json has it: None when the run did not record it."""
        value = self._raw.get("disable_vad")
        return bool(value) if value is not None else None

    @property
    def faults(self) -> FaultPlan | None:
        """The simulator's fault plan it ran with (None: none)."""
        return self.setting("faults")

    @property
    def turn_faults(self) -> dict[int, TurnFault]:
        """turn -> the fault injected on it ({} for none, or for a plan this version cannot read)."""
        return dict(self.faults.turns) if self.faults else {}

    @property
    def fault_text(self) -> str:
        """The faults as the run screen says them: the plan's spec, or as stored when unreadable ("" for none)."""
        plan = self.faults
        return str(plan) if plan else str(self.unread.get("faults") or "")

    @property
    def mode(self) -> str:
        """`sequential`, `rehydrated`, or a reference harness run's own mode word, as it stored it."""
        mode = self._raw.get("mode")
        return mode if isinstance(mode, str) and mode else "sequential"

    @property
    def rehydrated(self) -> bool:
        """Each turn in its own seeded session: no cross-turn realignment, no turn-taking."""
        return self.mode == "rehydrated"

    @property
    def parallel(self) -> int | None:
        value = self._raw.get("parallel")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def speed(self) -> float | None:
        """The speed its settings say (streams from before `run_started.speed`); None when they say none."""
        value = self._raw.get("speed")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf:
            return float(value)
        return None

    @property
    def service(self) -> str | None:
        return self.setting("service")

    # --- what its loop recorded ---------------------------------------------------------------

    @property
    def audio(self) -> bool:
        """An audio run (not a text model's: `modality: text`)."""
        return self._raw.get(MODALITY) != TEXT

    @property
    def judges_turn_taking(self) -> bool:
        """Whether it can be scored on turn_taking: an audio run that does not say it has none (a rehydrated one)."""
        return self.audio and self._raw.get(TURN_TAKING_SUPPORTED) is not False

    @property
    def full_duplex(self) -> bool:
        """Played by the full-duplex turn loop: a turn is its window (`spine.duplex.FULL_DUPLEX_TURN`)."""
        return bool(self._raw.get(FULL_DUPLEX))

    # --- what an import recorded --------------------------------------------------------------

    @cached_property
    def reference(self) -> Mapping[str, Any] | None:
        """The reference harness's run it was imported from (`interop.read_run`: `from`, `harness`,
        `judges`, `speed`, `latency`, `derived`), None for any other run."""
        value = self._raw.get(IMPORTED)
        return value if isinstance(value, Mapping) else None

    def reference_judge(self, judge: str) -> Mapping[str, Any]:
        """What the reference run said of one of its judges (`judge_name`, `judge_model`, …), {} when nothing."""
        judges = self.reference.get("judges") if self.reference is not None else None
        found = judges.get(judge) if isinstance(judges, Mapping) else None
        return found if isinstance(found, Mapping) else {}

    @property
    def reference_latency(self) -> str | None:
        """Where an imported reference run's latencies came from (None: not such a run, or it says none)."""
        return str(self.reference.get("latency") or "") or None if self.reference is not None else None

    @property
    def run_dir(self) -> str | None:
        """The folder it was imported from (the reference's or one of our exports), None for a run recorded here."""
        if self.reference is not None:
            found = self.reference.get("from")
            return str(found) if found is not None else None
        value = self._raw.get(IMPORTED_FROM)
        return str(value) if value is not None else None

    @property
    def imported(self) -> bool:
        """It came from a file (`arena-tui import`): its connection settings are provenance, never settings."""
        return is_imported(self._raw)

    @property
    def provenance(self) -> str:
        """What an imported run's file named for its connection, said without credentials ("" for none)."""
        return provenance_text(self._raw)

    @property
    def turn_durations(self) -> dict[int, int]:
        """turn -> the wall-clock ms an imported run kept (the reference's `latency_ms`); {} for ours."""
        kept = self._raw.get(TURN_DURATION)
        if not isinstance(kept, Mapping):
            return {}
        return {int(k): int(v) for k, v in kept.items()
                if str(k).lstrip("-").isdigit() and isinstance(v, (int, float)) and not isinstance(v, bool)}

    @property
    def audio_source(self) -> str:
        """Where its user audio came from, as an export says it (`recorded` unless an import said otherwise)."""
        value = self._raw.get("audio_source")
        return str(value) if value is not None else "recorded"

    def stored(self) -> dict[str, Any]:
        """A copy of the record as stored (an export writes it whole; its connection is provenance there too)."""
        return {k: v for k, v in self._raw.items()}
