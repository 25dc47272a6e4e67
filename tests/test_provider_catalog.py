"""The provider catalog (`runners/catalog.py`) says what each provider class says, and
listing models from it imports no provider and no Pipecat."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import runners.providers
from runners.base import ProviderRunner, get_runner, known_models
from arena_tui.spine.settings import RunSettings
from runners import catalog

ROOT = Path(__file__).resolve().parents[1]
#: the catalog field → the class attribute it mirrors (the same name)
FIELDS = ("name", "aliases", "mode", "key_env", "setting_env", "any_key", "packages", "install_hint", "model_prefix",
          "model_env", "simulated", "fake_class", "manual_commit", "alias_family", "efforts", "caps", "price_scope")
KEYS = sorted({k for p in catalog.PROVIDERS for k in (*p.key_env, *p.setting_env)} | {"ARENA_TUI_TEXT_API_KEY"})


@pytest.mark.parametrize("provider", catalog.PROVIDERS, ids=lambda p: p.name)
def test_every_entry_equals_its_class(provider):
    cls = catalog.load(provider.runner)
    assert issubclass(cls, ProviderRunner)
    assert {f: getattr(provider, f) for f in FIELDS} == {f: getattr(cls, f) for f in FIELDS}
    fake = catalog.load(provider.fake_class)
    assert inspect.isclass(fake) and callable(getattr(fake, "start", None)) and callable(getattr(fake, "stop", None))
    folder = provider.runner.partition(":")[0].rsplit(".", 1)[0]
    assert provider.runner.startswith(f"{folder}.runner:"), "a provider's runner is its folder's runner.py"
    module = provider.fake_class.partition(":")[0]
    if module != "runners.simulator":  # OpenAI Realtime's fake is the simulator
        assert module == f"{folder}.fake", "a provider's fake is its folder's fake.py"


def test_every_provider_class_is_in_the_catalog():
    """A provider module whose runner the catalog forgot would never be listed or found."""
    listed = {p.runner for p in catalog.PROVIDERS}
    found = set()
    for info in pkgutil.walk_packages(runners.providers.__path__, "runners.providers."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, ProviderRunner) and obj.__module__ == module.__name__ and obj.aliases:
                found.add(f"{module.__name__}:{name}")
    assert found == listed


@pytest.mark.parametrize("fake", [False, True])
@pytest.mark.parametrize("keys_set", [False, True])
def test_listing_says_what_the_runner_preflight_says(monkeypatch, fake, keys_set):
    for env in KEYS:
        if keys_set:
            monkeypatch.setenv(env, "k-test")
        else:
            monkeypatch.delenv(env, raising=False)
    for alias in known_models():
        entry = catalog.find(alias)
        runner = get_runner(alias)
        assert type(runner) is catalog.load(entry.runner)
        assert entry.problems(fake=fake) == runner.preflight(RunSettings(model=alias, fake=fake)), alias
        assert entry.model_id(alias) == runner.resolve_model(alias), alias


def test_model_ids_follow_the_environment_and_prefix(monkeypatch):
    monkeypatch.setenv("ARENA_TUI_TEXT_MODEL", "my-model")
    assert catalog.find("text").model_id("text") == get_runner("text").resolve_model("text") == "my-model"
    assert catalog.find("gpt-4.1").model_id("gpt-4.1") == "gpt-4.1"
    assert get_runner("gemini-3.1-flash").resolve_model("gemini-3.1-flash") == "models/gemini-3.1-flash-live-preview"
    with pytest.raises(ValueError, match="unknown model 'nope'; known: "):
        get_runner("nope")


def test_installed_finds_a_submodule_without_importing_its_parents():
    code = (
        "import sys, json\n"
        "from runners.catalog import installed\n"
        "print(json.dumps([installed('pipecat.services.openai.realtime.llm'), installed('pipecat.services.no_such_x'),"
        " installed('no_such_pkg_x.sub'), 'pipecat' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [True, False, False, False]


def test_listing_models_imports_no_provider_and_no_pipecat():
    """`arena-tui models` (and `known_models`) read the catalog only: of a provider's folder, its
    package (a docstring) and its `entry.py` (plain data), never its runner, its fake or Pipecat."""
    code = (
        "import sys, json, contextlib, io\n"
        "from arena_tui import cli\n"
        "from runners.base import known_models\n"
        "from runners import catalog\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    rc = cli.main(['models'])\n"
        "aliases = known_models()\n"
        "entries = {f'runners.providers.{n}{part}' for n in catalog.FOLDERS for part in ('', '.entry')}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'pipecat' or m.startswith(('runners.providers.', 'runners.engine', 'runners.transports', 'runners.run')) and m not in entries)\n"
        "table = out.getvalue().split('\\n\\n')[0]  # the aliases' table; the cascade spelling follows it\n"
        "print(json.dumps({'rc': rc, 'loaded': loaded, 'aliases': len(aliases), 'lines': len(table.splitlines())}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    got = json.loads(out.splitlines()[-1])
    assert got["rc"] == 0 and got["loaded"] == []
    assert got["lines"] == got["aliases"] + 1 == len(known_models()) + 1
