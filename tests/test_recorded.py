"""A stored run's settings are read in one place, typed (`arena_tui.spine.recorded.RecordedRun`):
no other module reads a run's recorded config by key, each key has one default, a value this
version cannot read is said as stored, and resume sets a run from them as a new run is set."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena_tui.spine.conditions import CLEAN, parse_condition
from arena_tui.spine.events import RunStarted
from arena_tui.spine.recorded import RecordedRun
from arena_tui.spine.settings import SettingsError, build_settings
from arena_tui.spine.source import source_label, variant_labels

ROOT = Path(__file__).resolve().parents[1]
#: the reader, and the trust rule it applies to the record as stored (`spine.provenance`: what an
#: imported run's file may decide), the only modules that read a recorded config by key
READERS = {"arena_tui/spine/recorded.py", "arena_tui/spine/provenance.py"}
#: where a `config` is a wire protocol's session configuration, not a run's settings: a provider's
#: local fake and the simulator read what their client sent
WIRE = ("runners/simulator/", "runners/fakes/")
#: where a run's `config` is touched whole, never by key: the events and store rows it is read from
#: (their `.recorded`), and the store writing it as it came (scrubbed of secrets)
WHOLE = {"arena_tui/spine/events.py", "arena_tui/store/reader.py", "arena_tui/store/projections.py",
         "arena_tui/store/writer.py"}


def _is_config(node: ast.expr) -> bool:
    """A run's recorded config as code names it: `config`, `cfg`, anything's `.config`, `(config or {})`."""
    if isinstance(node, ast.BoolOp):
        return any(_is_config(v) for v in node.values)
    if isinstance(node, ast.Name):
        return node.id in ("config", "cfg")
    return isinstance(node, ast.Attribute) and node.attr == "config"


def key_reads(source: str) -> list[str]:
    """Each read of a config by key in `source`: `config["x"]`, `config.get("x")`, `"x" in config`
    (writing one, as an import builds its record, is not a read)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        receiver = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            receiver = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            receiver = node.func.value
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            receiver = node.comparators[0]
        if receiver is not None and _is_config(receiver):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def config_touches(source: str) -> list[str]:
    """Each `<something>.config` read (not `self.config`: a runner's typed RunSettings, a fake's own)."""
    return [f"{n.lineno}: {ast.unparse(n)}" for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Attribute) and n.attr == "config" and isinstance(n.ctx, ast.Load)
            and not (isinstance(n.value, ast.Name) and n.value.id == "self")]


def _modules(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py"))


def _wire(rel: str) -> bool:
    return rel.startswith(WIRE) or (rel.startswith("runners/providers/") and Path(rel).name.startswith("fake"))


def test_no_module_but_the_reader_reads_a_runs_settings_by_key() -> None:
    offenders = {}
    for path in _modules("arena_tui", "runners", "benchmarks", "scripts"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in READERS or _wire(rel):
            continue
        if reads := key_reads(path.read_text(encoding="utf-8")):
            offenders[rel] = reads
    assert offenders == {}, "read a run's settings through spine.recorded.RecordedRun (`.recorded`), not by key"


def test_a_runs_config_is_handed_on_whole_or_read_through_the_reader() -> None:
    offenders = {}
    for path in _modules("arena_tui", "scripts"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in READERS | WHOLE:
            continue
        if touches := config_touches(path.read_text(encoding="utf-8")):
            offenders[rel] = touches
    assert offenders == {}, "a run's config is read as `.recorded` (spine.recorded.RecordedRun)"


def test_the_scans_find_what_they_look_for() -> None:
    """The two scans are not vacuous: each way of reading a config by key is found, a write is not."""
    src = ("a = config['speaker']\nb = run.row.config.get('fake')\nc = (cfg or {}).get('effort')\n"
           "d = 'faults' in ev.config\nconfig['imported'] = {}\nconfig.setdefault('note', 'x')\n")
    assert [r.split(": ", 1)[1] for r in key_reads(src)] == [
        "config['speaker']", "run.row.config.get('fake')", "(cfg or {}).get('effort')", "'faults' in ev.config"]
    assert [t.split(": ", 1)[1] for t in config_touches("x = row.config\ny = self.config\n")] == ["row.config"]


def test_an_empty_or_old_record_reads_as_the_defaults() -> None:
    for record in ({}, None, {"model": "sim", "speed": 2.0}):
        run = RecordedRun(record)
        assert (run.speaker, run.condition, run.effort, run.fake, run.disable_vad, run.faults, run.mode) == \
            ("tts", CLEAN, "", False, False, None, "sequential")
        assert run.audio and run.judges_turn_taking and not run.full_duplex and run.unread == {}
        assert variant_labels(run) == () and source_label(False, run) is None
    assert RecordedRun({"speed": 2}).speed == 2.0 and RecordedRun({"speed": float("inf")}).speed is None


def test_settings_read_back_typed_and_what_the_loops_added_beside_them() -> None:
    settings = build_settings("sim", speaker="person1", condition="Noise=10:babble", effort="High", faults="2:no_response*",
                              rehydrate=True, parallel=2, disable_vad=True)
    run = RecordedRun({**settings.public(), "modality": "text"})
    assert run.condition == parse_condition("noise=10:babble") and run.condition_text == "noise=10:babble"
    assert (run.speaker, run.effort, run.disable_vad, run.mode, run.parallel) == ("person1", "high", True, "rehydrated", 2)
    assert run.fault_text == "2:no_response*" and list(run.turn_faults) == [2] and run.turn_faults[2].sticky
    assert not run.audio and not run.judges_turn_taking and run.rehydrated
    assert variant_labels(run) == ("speech: person1", "noise=10:babble", "effort=high", "manual commit",
                                   "faults: 2:no_response*")
    assert variant_labels(run, faults=False)[-1] == "manual commit"
    assert run.settings() == settings  # what resume sets the run from: as a new run's were built


def test_a_value_this_version_cannot_read_is_its_default_and_said_as_stored() -> None:
    run = RecordedRun({"condition": "underwater", "speaker": "bad name!", "faults": "1:explode", "fake": "maybe"})
    assert run.condition == CLEAN and run.condition_text == "underwater" and run.fault_text == "1:explode"
    assert variant_labels(run) == ("speaker: bad name!", "condition: underwater", "faults: 1:explode")
    assert not run.fake and run.unread["fake"] == "maybe"
    with pytest.raises(SettingsError, match=r"^--faults: unknown fault 'explode'.*\(and 3 more\)$"):
        run.settings()  # resume refuses what a new run would be refused


def test_an_imported_reference_run_reads_its_folder_judges_and_latency_source() -> None:
    record = {"imported": {"from": "/runs/x", "judges": {"claude": {"judge_model": "opus"}}, "latency": "derived"},
              "turn_duration_ms": {"0": 1500, "1": 2000.4, "bad": 3, "2": True}, "mode": "sequential"}
    run = RecordedRun(record)
    assert run.reference is not None and run.run_dir == "/runs/x" and run.imported
    assert run.reference_judge("claude") == {"judge_model": "opus"} and run.reference_judge("gpt") == {}
    assert run.reference_latency == "derived" and run.turn_durations == {0: 1500, 1: 2000}
    ours = RecordedRun({"imported_from": "/exports/y", "base_url": "http://127.0.0.1:9/v1"})
    assert ours.run_dir == "/exports/y" and ours.imported and ours.reference is None
    assert "base_url" not in ours.settings().model_fields_set  # a file never aims a key (spine.provenance)


def test_an_event_and_a_row_read_their_config_once() -> None:
    ev = RunStarted(run_id="r", t_ms=0.0, benchmark="b", model="sim", provider="sim", turn_indices=[0],
                    config={"speaker": "person1", "speed": 4.0})
    assert ev.recorded is ev.recorded and ev.recorded.speaker == "person1" and ev.timeline_speed == 4.0
    copy = ev.model_copy(update={"config": {"speaker": "person2"}})
    assert copy.recorded.speaker == "person2" and ev.recorded.speaker == "person1"
    assert copy == RunStarted(**{**ev.model_dump(), "config": {"speaker": "person2"}})  # the reader is no part of the event
