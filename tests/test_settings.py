"""A run's settings are one typed `RunSettings`, built by one builder from the three ways of
starting a run — `arena-tui run`'s flags, the new-run dialog, a campaign spec — and checked by one
preflight: the same choices give the same settings, and the same bad input the same refusal, in
whichever way it was typed. Stored with the run, they read back as they were (older runs too)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Select

from arena_tui.app import ArenaApp
from arena_tui.campaign.spec import build_spec, load_toml
from arena_tui.cli import build_parser, main
from arena_tui.commands.run import settings_of
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.dialogs.new_run import NewRunDialog
from arena_tui.screens.runs import RunsScreen
from arena_tui.spine.settings import RunSettings, SettingsError, build_settings
from tests.pilot import until
from tests.spoken import make_spoken

#: one way of starting a run as each entry point spells it: the flags after `run demo_bench`, the
#: dialog's fields, the campaign's flags (cells of demo_bench, speaker as a cell's)
CHOICES = {
    "sim_person1_manual_commit": (
        ["--model", "sim", "--speed", "2.5", "--turns", "0-2", "--speaker", "person1", "--disable-vad"],
        {"model": "sim", "speed": "2.5", "turns": "0-2", "speaker": "person1", "vad": "off"},
        {"models": "sim", "speed": 2.5, "turns": "0-2", "speakers": "person1", "disable_vad": True},
    ),
    "a_provider_fake": (
        ["--model", "gpt-realtime", "--fake", "--turns", "1,3"],
        {"model": "gpt-realtime", "against": "fake", "turns": "1,3"},
        {"models": "gpt-realtime", "fake": True, "turns": "1,3"},
    ),
    "sim_telephony_high_effort": (
        ["--model", "sim", "--condition", "Telephony", "--effort", "high"],
        {"model": "sim", "condition": "Telephony", "effort": "high"},
        {"models": "sim", "conditions": "Telephony", "efforts": "high"},
    ),
    "babble_noise_of_a_fake": (
        ["--model", "gemini-3.1-flash", "--fake", "--condition", "noise=5:babble", "--effort", "low"],
        {"model": "gemini-3.1-flash", "against": "fake", "condition": "noise=5:babble", "effort": "low"},
        {"models": "gemini-3.1-flash", "fake": True, "conditions": "noise=5:babble", "efforts": "low"},
    ),
    "defaults": ([], {}, {"models": "sim"}),
}

#: one bad input as each entry point takes it (flags, dialog fields, campaign flags or its TOML
#: [config]), and the words of the refusal every one of them says
BAD = {
    "speed_0": (["--speed", "0"], {"speed": "0"}, {"speed": 0.0},
                "--speed: input should be greater than 0 (got 0.0)"),
    "speed_too_fast": (["--speed", "100"], {"speed": "100"}, {"speed": 100.0},
                       "--speed: input should be less than or equal to 50 (got 100.0)"),
    "turn_range_backwards": (["--turns", "3-1"], {"turns": "3-1"}, {"turns": "3-1"},
                             "bad turn range '3-1' in --turns '3-1' (use e.g. 0,5-9)"),
    "turn_not_in_the_benchmark": (["--turns", "99"], {"turns": "99"}, {"turns": "99"},
                                  "demo_bench: no turn(s) 99 (turns are 0-9)"),
    "unknown_fault": (["--faults", "1:explode"], {"faults": "1:explode"}, {"config": 'faults = "1:explode"'},
                      "--faults: unknown fault 'explode' in '1:explode'"),
    "fault_on_a_turn_not_there": (["--faults", "42:no_response"], {"faults": "42:no_response"},
                                  {"config": 'faults = "42:no_response"'},
                                  "--faults: demo_bench has no turn 42 (turns are 0-9)"),
    "bad_condition": (["--condition", "noise=abc"], {"condition": "noise=abc"}, {"condition": "noise=abc"},
                      "--condition: 'noise=abc': 'abc' is not an SNR in dB"),
    "unknown_condition": (["--condition", "underwater"], {"condition": "underwater"}, {"condition": "underwater"},
                          "--condition: 'underwater': expected clean, noise=<SNR dB>[:white|pink|babble], telephony or "
                          "loss=<percent>"),
    "effort_where_the_protocol_has_none": (
        ["--model", "grok", "--fake", "--effort", "high"], {"model": "grok", "against": "fake", "effort": "high"},
        {"models": "grok", "fake": True, "effort": "high"}, "grok: --effort high: grok takes no reasoning effort"),
    "effort_the_model_does_not_take": (
        ["--effort", "max"], {"effort": "max"}, {"effort": "max"},
        "sim: --effort max: sim takes minimal|low|medium|high|xhigh (its session.reasoning.effort)"),
    "no_key": (["--model", "gpt-realtime"], {"model": "gpt-realtime"}, {"models": "gpt-realtime"},
               "openai: environment variable OPENAI_API_KEY is not set (the API key)"),
}


@pytest.fixture
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def from_flags(flags: list[str]) -> RunSettings:
    argv = ["run", "demo_bench", *flags]
    return settings_of(build_parser(argv).parse_args(argv))


def from_campaign(flags: dict, tmp_path: Path) -> RunSettings:
    spec = campaign_spec(flags, tmp_path)
    return spec.cell_settings(spec.cell_benchmarks()[0], spec.cell_models()[0])


def campaign_spec(flags: dict, tmp_path: Path):
    toml = tmp_path / "spec.toml"
    toml.write_text("[config]\n" + flags.get("config", ""))
    given = {k: v for k, v in flags.items() if k != "config"}
    return build_spec(load_toml(toml), {"benchmarks": "demo_bench", "models": "sim", **given})


async def open_dialog(app: ArenaApp, pilot) -> NewRunDialog:
    await until(pilot, lambda: isinstance(app.screen, RunsScreen))
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, NewRunDialog) and app.screen.choices)
    return app.screen


def spoken_app(tmp_path: Path) -> ArenaApp:
    """The monitor over a --data folder whose demo_bench has human speakers' recordings (the dialog
    offers the chosen benchmark's speakers)."""
    if not (tmp_path / "data" / "demo_bench").is_dir():
        make_spoken(tmp_path / "data" / "demo_bench")
    return ArenaApp(tmp_path / "arena.db", tmp_path / "data", launcher=EngineLauncher())


async def fill(dialog: NewRunDialog, pilot, fields: dict[str, str]) -> None:
    """The dialog's fields as a user sets them: the benchmark and the model first (they decide
    which fields show, and whose voices are offered)."""
    defaults = {"benchmark": "demo_bench", "model": "sim", "against": "service", "speaker": "tts", "vad": "server",
                "faults": "", "turns": "", "speed": "1.0", "condition": "", "effort": ""}
    values = {**defaults, **fields}
    for name in ("benchmark", "model", "against", "speaker", "vad"):
        dialog.query_one(f"#{name}", Select).value = values[name]
        await pilot.pause()
    for name in ("faults", "turns", "speed", "condition", "effort"):
        dialog.query_one(f"#{name}", Input).value = values[name]
    await pilot.pause()


def text_of(widget) -> str:
    from rich.console import Console

    console = Console(width=400, record=True, file=open(os.devnull, "w"))
    console.print(widget.render())
    return " ".join(console.export_text().split())


async def test_the_three_entry_points_build_the_same_settings(tmp_path: Path) -> None:
    app = spoken_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        for name, (flags, fields, campaign) in CHOICES.items():
            await fill(dialog, pilot, fields)
            bench, typed = dialog._form()
            settings = from_flags(flags)
            assert bench == "demo_bench" and typed == settings, name
            assert from_campaign(campaign, tmp_path) == settings, name
    # what each case chose reached the settings (not three entry points agreeing on the defaults)
    assert from_flags(CHOICES["sim_person1_manual_commit"][0]).model_dump(include={"speed", "turns", "speaker", "disable_vad"}) \
        == {"speed": 2.5, "turns": [0, 1, 2], "speaker": "person1", "disable_vad": True}
    fake = from_flags(CHOICES["a_provider_fake"][0])
    assert (fake.model, fake.fake, fake.fake_timing, fake.turns) == ("gpt-realtime", True, "real", [1, 3])
    heard = from_flags(CHOICES["babble_noise_of_a_fake"][0])
    assert (heard.condition.label, heard.effort, heard.seed) == ("noise=5:babble", "low", 0)  # held parsed
    assert from_flags(CHOICES["sim_telephony_high_effort"][0]).condition.label == "telephony"
    assert heard.public()["condition"] == "noise=5:babble"  # stored canonical


async def test_the_three_entry_points_refuse_a_bad_input_alike(tmp_path: Path, capsys, no_openai_key) -> None:
    said: dict[str, list[str]] = {name: [] for name in BAD}
    for name, (flags, _, campaign, _says) in BAD.items():
        code = await asyncio.to_thread(
            main, ["--db", str(tmp_path / "run.db"), "run", "demo_bench", "--headless", "--judge", "none", *flags])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, (name, err)
        said[name].append(err[0])
        toml = tmp_path / f"{name}.toml"
        toml.write_text('bench = ["demo_bench"]\nmodel = ["sim"]\n[config]\n' + campaign.get("config", ""))
        argv = ["--db", str(tmp_path / "campaign.db"), "campaign", "run", str(toml), "--judge", "none"]
        for key, value in campaign.items():
            if key != "config":
                flag = {"models": "--model"}.get(key, f"--{key}")
                argv += [flag] if value is True else [flag, str(value)]
        assert await asyncio.to_thread(main, argv) == 2, name  # (the command runs its own event loop)
        said[name].append(capsys.readouterr().err)
    app = spoken_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        for name, (_, fields, _, _) in BAD.items():
            await fill(dialog, pilot, fields)
            dialog.query_one("#new-run-error").update("")
            await pilot.click("#start")
            await until(pilot, lambda: "cannot start" in text_of(dialog.query_one("#new-run-error")), 60)
            await until(pilot, lambda: not dialog.query_one("#start", Button).disabled)
            said[name].append(text_of(dialog.query_one("#new-run-error")))
        assert app.live == {}  # nothing was started
    for name, (*_, says) in BAD.items():
        assert all(says in line for line in said[name]), (name, said[name])


def test_stored_settings_read_back_as_they_were_and_old_runs_still_read() -> None:
    settings = build_settings("gpt-realtime", fake=True, turns="0-2", speed="2", greeting=False, rotate_after=30,
                              service_args=(), fields={"watchdog": {"extra_ms": 6000.0}})
    assert RunSettings.from_recorded(settings.public()) == settings
    heard = build_settings("sim", condition="noise=5:babble", seed="11", effort="high")
    assert RunSettings.from_recorded(heard.public()) == heard  # a resumed run hears the same audio
    # a run stored before speakers, fake timing and services, with what its loop added for display
    old = {"model": "sim", "speed": 2.0, "turns": [0, 1], "faults": "1:no_response", "fake": False,
           "greeting": {"enabled": False}, "modality": "text", "turn_taking_supported": False}
    back = RunSettings.from_recorded(old)
    assert (back.model, back.speed, back.turns, str(back.faults), back.speaker, back.greeting.enabled) == \
        ("sim", 2.0, [0, 1], "1:no_response", "tts", False)
    assert (back.condition.label, back.seed, back.effort) == ("clean", 0, None)  # stored before conditions: clean
    with pytest.raises(SettingsError, match="^--speed: input should be greater than 0"):
        RunSettings.from_recorded({**old, "speed": 0})


def test_settings_are_validated_where_they_are_built_and_never_change_after() -> None:
    settings = build_settings(turns=[3, 1, 1])
    assert settings.turns == [1, 3]
    with pytest.raises(Exception, match="frozen"):
        settings.speed = 99.0  # type: ignore[misc]
    with pytest.raises(SettingsError, match=r"^--service-arg 'x': expected KEY=VALUE"):
        build_settings(service="a.b:C", service_args=["x"])
    assert build_settings("sim", fake=True).fake is False  # the simulator is always local: --fake means nothing to it
