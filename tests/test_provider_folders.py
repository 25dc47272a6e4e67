"""Adding a model is one folder (`runners/providers/<name>/`, docs/providers.md "Adding a
provider"): every catalog alias comes from a folder's `entry.py`, has its fake in that folder (the
simulator for OpenAI Realtime's protocol), is in the provider contract's lists, and is named in
README.md or docs/providers.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from runners import catalog
from runners.base import known_models
from tests import test_provider_contract as contract

ROOT = Path(__file__).resolve().parents[1]
SHARED_FAKE = "runners.simulator"  # OpenAI Realtime's fake, shared by every alias on its protocol


def _params(test) -> list[str]:
    """The aliases a parametrized contract test runs over."""
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
    return list(mark.args[1])


@pytest.mark.parametrize("alias", known_models())
def test_every_alias_has_its_folder_and_its_fake(alias):
    entry = catalog.find(alias)
    folder = entry.runner.partition(":")[0].rsplit(".", 1)[0]
    name = folder.removeprefix("runners.providers.")
    assert name in catalog.FOLDERS, f"{alias}: its runner {entry.runner} is in no provider folder"
    assert entry.fake_class, f"{alias}: no local fake"
    module = entry.fake_class.partition(":")[0]
    assert module in (f"{folder}.fake", SHARED_FAKE), f"{alias}: its fake {entry.fake_class} is outside {folder}"
    path = ROOT / Path(*module.split(".")) if module == SHARED_FAKE else ROOT / Path(*folder.split(".")) / "fake.py"
    assert path.exists(), path


def test_every_alias_is_in_the_contract_tests():
    """The contract covers every alias by listing the catalog, never by naming providers: the
    loopback test takes every alias, and the per-provider tests one alias of every runner class."""
    aliases = set(known_models())
    assert aliases <= set(_params(contract.test_every_alias_with_fake_builds_a_service_on_loopback))
    runners = {catalog.find(a).runner for a in aliases}
    per_provider = _params(contract.test_every_fake_makes_every_expected_call_of_a_turn)
    assert {catalog.find(a).runner for a in per_provider if a in aliases} == runners
    rotated = _params(contract.test_a_rotated_session_gets_the_history_and_is_asked_nothing)
    audio = {catalog.find(a).runner for a in aliases if catalog.find(a).mode == "audio"}
    assert {catalog.find(a).runner for a in rotated} == audio


def test_the_contract_tests_name_no_provider():
    """No per-provider branch: the contract test module compares no alias or provider name."""
    tree = ast.parse((ROOT / "tests" / "test_provider_contract.py").read_text(encoding="utf-8"))
    names = {p.name for p in catalog.PROVIDERS} | set(known_models())
    branches = [ast.unparse(node.test) for node in ast.walk(tree) if isinstance(node, ast.If | ast.IfExp)]
    assert [b for b in branches if any(re.search(rf"['\"]{re.escape(n)}['\"]", b) for n in names)] == []


@pytest.mark.parametrize("alias", known_models())
def test_every_alias_is_named_in_the_docs(alias):
    text = (ROOT / "README.md").read_text(encoding="utf-8") + (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    assert re.search(r"(?<![\w.:-])" + re.escape(alias) + r"(?![\w.-])", text), f"{alias} is named in neither README.md nor docs/providers.md"


def test_every_folder_package_loads_nothing():
    """A folder's `__init__.py` is a docstring: the catalog imports it to read the entry, and
    listing models must load no runner, fake or Pipecat; an `entry.py` imports only the entry types."""
    for name in catalog.FOLDERS:
        folder = ROOT / "runners" / "providers" / name
        init = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
        assert all(isinstance(n, ast.Expr) for n in init.body), f"{name}/__init__.py does more than a docstring"
        entry = ast.parse((folder / "entry.py").read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(entry) if isinstance(n, ast.ImportFrom)} | {
            a.name for n in ast.walk(entry) if isinstance(n, ast.Import) for a in n.names}
        assert imported <= {"__future__", "runners.provider_entry"}, (name, imported)
