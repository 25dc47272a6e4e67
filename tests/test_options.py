"""A run option is declared once (`spine.settings.OPTIONS`): its flag on every command it applies
to, its field in the new-run dialog, its campaign key and its label after a run's model are all
made from that row, and none is written by hand again."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from arena_tui.campaign import spec as campaign_spec
from arena_tui.campaign.spec import CampaignSpec, build_spec, load_toml
from arena_tui.cli import build_parser
from arena_tui.screens.dialogs.new_run import FIELDS
from arena_tui.spine.option_flags import offered
from arena_tui.spine.recorded import RecordedRun
from arena_tui.spine.settings import OPTIONS, RunSettings, SettingsError, build_settings, options
from arena_tui.spine.source import variant_labels

ROOT = Path(__file__).resolve().parents[1]
#: a campaign key's value (a key without a spec field of its own needs one here to be tested)
SAMPLE: dict[str, object] = {"vad_threshold": 0.4}
#: a value of each option whose label says it (a row needs a label option's value here to be tested)
LABELLED = {"speaker": "person1", "condition": "telephony", "effort": "high", "disable_vad": True, "full_duplex": True,
            "service": "a.b:C", "faults": "1:no_response", "vad_threshold": 0.5}


def _flags(argv: list[str]) -> dict[str, argparse.Action]:
    parser = build_parser(argv)
    for action in parser._actions:  # the command's own parser (and `campaign run`'s)
        if isinstance(action, argparse._SubParsersAction):
            parser = action.choices[argv[0]]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parser = action.choices[argv[1]]
    return {s: a for a in parser._actions for s in a.option_strings}


@pytest.mark.parametrize("argv,command", [(["run"], "run"), (["demo"], "demo"), (["campaign", "run"], "campaign")])
def test_every_option_is_a_flag_of_each_command_it_applies_to(argv, command) -> None:
    flags = _flags(argv)
    for option in offered(command):
        assert option.flag in flags and flags[option.flag].dest == option.key, (command, option.key)
    others = [o.flag for o in OPTIONS if o.flag and o not in offered(command)]
    assert [f for f in others if f in flags] == [], f"{command} takes a flag of an option not declared for it"


def test_no_command_writes_an_options_flag_by_hand() -> None:
    """`run`, `demo` and `campaign run` add their run options' flags from the table alone."""
    flags = {o.flag for o in OPTIONS if o.flag}
    for name in ("run", "demo", "campaign"):
        tree = ast.parse((ROOT / "arena_tui" / "commands" / f"{name}.py").read_text(encoding="utf-8"))
        hand = [a.value for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "add_argument"
                for a in n.args if isinstance(a, ast.Constant) and a.value in flags]
        assert hand == [], (name, hand)


def test_every_dialog_option_is_a_field_of_the_new_run_dialog() -> None:
    assert [key for key, _ in FIELDS] == [o.key for o in options("dialog")]
    assert len({f.id for _, f in FIELDS}) == len(FIELDS)  # (each field its own widget)


def test_every_campaign_option_is_a_key_of_a_spec_file_and_reaches_every_cell(tmp_path: Path) -> None:
    keys = [o for o in OPTIONS if o.applies("campaign") or o.applies("axis")]
    assert {o.key for o in keys} <= set(campaign_spec._KEYS)
    assert {o.field for o in keys if "." not in o.field} <= campaign_spec._OWN_KEYS  # never also in [config]
    for option in options("axis"):  # a list: one cell each
        toml = tmp_path / f"{option.key}.toml"
        toml.write_text(f'bench = ["demo_bench"]\nmodel = ["sim"]\n{option.key} = ["a", "b"]\n')
        assert len(getattr(build_spec(load_toml(toml), {}), campaign_spec._KEYS[option.key])) == 2, option.key


def test_a_campaign_key_without_a_field_of_its_own_is_kept_and_given_to_every_run(tmp_path: Path) -> None:
    """A new campaign key needs no line in the spec: its value is kept in `options`, stored with the
    campaign (the spec JSON of a campaign without it unchanged) and built into each cell's settings."""
    plain = CampaignSpec(("demo_bench",), ("sim",))
    assert "options" not in plain.to_json()
    toml = tmp_path / "spec.toml"
    generic = [o for o in options("campaign") if campaign_spec._KEYS[o.key] == campaign_spec.OPTIONS_FIELD]
    if not generic:
        pytest.skip("every campaign key has a spec field of its own")
    option = generic[0]
    value = SAMPLE[option.key]
    toml.write_text(f'bench = ["demo_bench"]\nmodel = ["sim"]\n{option.key} = {value!r}\n')
    spec = build_spec(load_toml(toml), {})
    assert spec.options == {option.key: value} and CampaignSpec.from_json(spec.to_json()) == spec
    assert spec.cell_settings("demo_bench", "sim") == build_settings("sim", **{option.key: value})


def test_every_label_option_is_said_after_a_runs_model_and_only_when_not_its_default() -> None:
    labelled = options("label")
    assert {o.key for o in labelled} == set(LABELLED), "give each label option a value here"
    for option in labelled:
        record = RunSettings().public()
        if option.field:
            *parts, last = option.field.split(".")
            into = record
            for part in parts:
                into = into[part]
            into[last] = LABELLED[option.key]
        else:
            record[option.key] = LABELLED[option.key]
        expected = option.label(RecordedRun(record).value(option)) if option.label else None
        assert expected and variant_labels(record) == (expected,), (option.key, variant_labels(record))
    assert variant_labels(RunSettings().public()) == ()


def test_a_choice_is_built_by_its_options_field() -> None:
    """The builder sets each option's field from its value as typed (one generic rule, no line per option)."""
    settings = build_settings("sim", turns="0-2", speed="2", greeting=False, rotate_after=30, rehydrate=True, parallel=2,
                              seed="7", condition="Telephony", faults="1:no_response", vad_threshold="0.3")
    assert (settings.turns, settings.speed, settings.greeting.enabled, settings.rotation.max_age_s, settings.mode,
            settings.parallel, settings.seed, settings.condition.label, str(settings.faults), settings.vad.threshold) == \
        ([0, 1, 2], 2.0, False, 30.0, "rehydrated", 2, 7, "telephony", "1:no_response", 0.3)
    with pytest.raises(SettingsError, match=r"^--vad-threshold: input should be less than or equal to 1 \(got 1.5\)$"):
        build_settings("sim", vad_threshold=1.5)
    assert build_settings("sim", speed="", turns="", condition="", seed="") == RunSettings()  # "": the default
    with pytest.raises(TypeError, match="no run option 'speeed'"):
        build_settings("sim", speeed=2)


async def test_the_vad_threshold_reaches_the_server_vad_and_a_cascades_silero(demo, tmp_path: Path) -> None:
    """`--vad-threshold` (the option added as two product files: its row and the cascade's reading of
    it): the simulator's session is opened with it and runs its VAD at it, the run records and says it,
    and a cascade's Silero VAD takes it as its confidence."""
    from arena_tui.commands.run import settings_of
    from arena_tui.spine.bus import EventBus
    from runners import catalog
    from runners.base import SessionSpec, get_runner
    from runners.engine import run_benchmark

    argv = ["run", "demo_bench", "--model", "sim", "--vad-threshold", "0.4", "--speed", "15", "--turns", "0", "--no-greeting"]
    settings = settings_of(build_parser(argv).parse_args(argv))
    runner, bus = get_runner("sim"), EventBus()
    sub = bus.subscribe()
    await run_benchmark(demo, settings, bus, provider=runner)
    started = next(e for e in sub.drain() if e.kind == "run_started")
    assert runner.fake is not None and runner.fake.sessions
    assert all(rec.turn_detection is not None and rec.turn_detection["threshold"] == 0.4 for rec in runner.fake.sessions)
    assert "vad=0.4" in variant_labels(started.recorded) and started.recorded.settings() == settings
    alias = catalog.CASCADE_EXAMPLES[0]
    cascade = get_runner(alias)
    config = build_settings(alias, fake=True, turns=[0], vad_threshold=0.4)
    await cascade.start(config, demo)
    try:
        spec = SessionSpec(model=cascade.resolve_model(alias), system_prompt=demo.system_prompt, tools=demo.tools, config=config)
        pipeline = cascade.session_pipeline(spec, cascade.build_service(spec), None, None)
        assert pipeline.processors[2]._params.vad_analyzer.params.confidence == 0.4
    finally:
        await cascade.stop()
