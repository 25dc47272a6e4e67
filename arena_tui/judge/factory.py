"""Which judge backend to build: `--judge` (the kinds of `arena_tui.spine.judges`) + `--judge-model`."""

from __future__ import annotations

import importlib
import os
from typing import TypedDict, Unpack

from arena_tui.spine.judges import AUTO, AUTO_ORDER, BACKENDS, BY_KIND, HEURISTIC
from .backends import JudgeBackend, PermanentError


def resolve_kind(kind: str) -> str:
    """auto = the first kind of `spine.judges.AUTO_ORDER` whose credentials are in the environment
    (openai, bedrock, anthropic, google), else the offline heuristic; never the keyless local judge."""
    if kind != AUTO:
        return kind
    return next((k for k, envs in AUTO_ORDER if any(os.environ.get(e) for e in envs)), HEURISTIC)


class BackendOptions(TypedDict, total=False):
    """Where and how a judge connects (`--judge-base-url`, …): each backend is given the ones it reads."""

    base_url: str | None
    api_key: str | None
    timeout_s: float | None
    region: str | None  # Bedrock's
    endpoint_url: str | None  # Bedrock's


def make_backend(kind: str, model: str | None = None, **options: Unpack[BackendOptions]) -> JudgeBackend:
    """The backend of `kind` (its row of `spine.judges.JUDGES`), given what it takes of `model` and
    `options` (base_url, api_key, region, endpoint_url, timeout_s). Raises PermanentError on bad setup
    (unknown judge, missing key). Each client library is imported only when its judge is chosen."""
    judge = BY_KIND.get(resolve_kind(kind))
    if judge is None:
        raise PermanentError(f"unknown judge {kind!r} (choose {', '.join(BACKENDS)})")
    module, _, name = judge.backend.partition(":")
    backend = getattr(importlib.import_module(f"{__package__}.{module}"), name)  # (its client library loads now)
    given = {"model": model, **options}
    made = backend(**{k: v for k, v in given.items() if k in judge.takes and v is not None})
    assert isinstance(made, JudgeBackend)
    return made
