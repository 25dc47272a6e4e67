"""The judge kinds are one table (`arena_tui.spine.judges.JUDGES`): `make_backend` builds each row's
class with what it takes, every surface offers every kind, and a backend names no key of its own."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from arena_tui.cli import build_parser
from arena_tui.judge import make_backend
from arena_tui.judge.choice import AUTO_WHY
from arena_tui.spine.judges import AUTO_ORDER, BY_KIND, DIALOG, JUDGES, KINDS_OR_NONE

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("judge", JUDGES, ids=[j.kind for j in JUDGES])
def test_each_kind_is_built_as_its_row_says(judge, monkeypatch) -> None:
    for env in judge.key_envs:
        monkeypatch.delenv(env, raising=False)
    if judge.key_envs:  # its key, the first of its names (AWS: a key pair)
        monkeypatch.setenv(judge.key_envs[0], "sk-test-not-a-secret")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-not-a-secret")
    backend = make_backend(judge.kind, base_url="http://127.0.0.1:9/v1", region="us-east-1", endpoint_url="http://127.0.0.1:9")
    assert type(backend).__name__ == judge.backend.partition(":")[2]
    assert backend.name == (judge.kind if judge.model is None else f"{judge.kind}:{judge.model}")


def test_every_surface_offers_every_kind() -> None:
    run = {a.dest: a for a in build_parser(["run"])._subparsers._group_actions[0].choices["run"]._actions}  # type: ignore[union-attr]
    assert tuple(run["judge"].choices) == KINDS_OR_NONE
    assert sorted(k for _, k in DIALOG) == sorted(KINDS_OR_NONE)
    assert [k for k, _ in AUTO_ORDER] == ["openai", "bedrock", "anthropic", "google"] and set(AUTO_WHY) == {k for k, _ in AUTO_ORDER}
    assert AUTO_WHY["bedrock"] == "auto: AWS credentials are set" and AUTO_WHY["google"] == "auto: GOOGLE_API_KEY or GEMINI_API_KEY is set"
    assert isinstance(run["judge"], argparse.Action) and all(j.kind in BY_KIND for j in JUDGES)


def test_no_backend_names_a_key_of_its_own() -> None:
    """A judge's key names are its row's (`key_envs`), read by the backend from there."""
    key = re.compile(r"^[A-Z][A-Z0-9_]*_(API_KEY|KEY)$")
    found = {}
    for path in sorted((ROOT / "arena_tui" / "judge").glob("*.py")):
        names = [n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) and key.match(n.value)]
        if names:
            found[path.name] = names
    assert found == {}
