"""A provider's preflight is the named checks it declares (`ProviderRunner.checks`, each a
`check_<name>` method): a runner leaves out what means nothing for it and asks another runner for
some of its checks by name, never by handing it doctored settings; the speed rule is said once;
a run the one preflight has checked is not checked again by the engine."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.settings import RunSettings
from runners import catalog
from runners.base import ProviderRunner, get_runner

ROOT = Path(__file__).resolve().parents[1]


def _runner_classes() -> list[type[ProviderRunner]]:
    for entry in catalog.PROVIDERS:
        importlib.import_module(entry.runner.partition(":")[0])
    importlib.import_module("runners.providers.service")
    seen, todo = [], [ProviderRunner]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo += cls.__subclasses__()
    return seen


def test_every_declared_check_is_a_check_of_the_runner() -> None:
    classes = _runner_classes()
    assert len(classes) > 15
    for cls in classes:
        missing = [name for name in cls.checks if not callable(getattr(cls, f"check_{name}", None))]
        assert missing == [], (cls.__name__, missing)


def test_no_runner_doctors_the_settings_it_checks() -> None:
    """`preflight` hands on the run's own settings: no `model_copy(update={"fake": …, "speed": …, "speaker": …})`."""
    doctored = []
    for path in sorted((ROOT / "runners").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and (node.name == "preflight" or node.name.startswith("check_")):
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "model_copy":
                        keys = [k.value for kw in call.keywords if isinstance(kw.value, ast.Dict)
                                for k in kw.value.keys if isinstance(k, ast.Constant)]
                        if set(keys) & {"fake", "speed", "speaker"}:
                            doctored.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert doctored == []


def test_the_speed_rule_is_said_once() -> None:
    said = [f"{p.relative_to(ROOT)}" for p in sorted((ROOT / "runners").rglob("*.py"))
            if "--speed must be 1" in p.read_text(encoding="utf-8")]
    assert said == ["runners/base.py"]


def test_a_text_model_and_a_cascade_check_what_applies_to_them(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    text = get_runner("gpt-4.1")
    assert text.preflight(RunSettings(model="gpt-4.1", speed=4.0)) == [
        "text: environment variable OPENAI_API_KEY is not set (the API key)"]  # a text run has no audio clock
    assert text.preflight(RunSettings(model="gpt-4.1", fake=True, speed=4.0)) == []
    alias = catalog.CASCADE_EXAMPLES[0]  # openai-stt + gpt-4.1-mini + openai-tts
    cascade = get_runner(alias)
    said = cascade.preflight(RunSettings(model=alias, speed=2.0))
    assert "cascade: text: environment variable OPENAI_API_KEY is not set (the API key)" in said  # its text model's key
    assert "cascade: --speed must be 1 against a real service (got 2.0)" in said
    assert cascade.preflight(RunSettings(model=alias, fake=True, speed=2.0)) == []
    assert cascade.preflight(RunSettings(model=alias, fake=True), only=("speed", "input")) == []


def test_a_run_checked_by_the_one_preflight_is_not_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[str] = []
    real = ProviderRunner.preflight

    def counted(self: ProviderRunner, config: RunSettings, only: object = None) -> list[str]:
        calls.append(self.name)
        return real(self, config, only)  # type: ignore[arg-type]

    monkeypatch.setattr(ProviderRunner, "preflight", counted)
    code = main(["--db", str(tmp_path / "a.db"), "run", "demo_bench", "--headless", "--judge", "none", "--speed", "20",
                 "--turns", "0", "--no-greeting"])
    assert code == 0, capsys.readouterr()
    assert len(calls) == 1, calls
