"""Which judge backend to build: `--judge` (the kinds of `arena_tui.spine.judges`) + `--judge-model`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

from arena_tui.spine.judges import AUTO, AUTO_ORDER, BACKENDS, HEURISTIC
from .backends import JudgeBackend, PermanentError
from .heuristic import HeuristicJudge


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


def _pick(options: Mapping[str, object], *names: str) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in names and v is not None}


def make_backend(kind: str, model: str | None = None, **options: Unpack[BackendOptions]) -> JudgeBackend:
    """Raises PermanentError on bad setup (unknown judge, missing key). Each client library is
    imported only when its judge is chosen."""
    kind = resolve_kind(kind)
    if kind == HEURISTIC:
        return HeuristicJudge()
    if kind == "openai":
        from .openai_judge import OpenAIJudge  # deferred: the OpenAI client loads only for this judge

        return OpenAIJudge(model, **_pick(options, "base_url", "api_key", "timeout_s"))
    if kind == "local":
        from .openai_judge import LocalJudge  # deferred: the OpenAI client loads only for this judge

        return LocalJudge(model, **_pick(options, "base_url", "timeout_s"))
    if kind == "anthropic":
        from .anthropic_judge import AnthropicJudge  # deferred: the anthropic client loads only for this judge

        return AnthropicJudge(model, **_pick(options, "base_url", "api_key", "timeout_s"))
    if kind == "google":
        from .google_judge import GoogleJudge  # deferred: google-genai loads only for this judge

        return GoogleJudge(model, **_pick(options, "base_url", "api_key", "timeout_s"))
    if kind == "bedrock":
        from .bedrock_judge import DEFAULT_BEDROCK_MODEL, BedrockJudge  # deferred: boto3 loads only for this judge

        return BedrockJudge(model or DEFAULT_BEDROCK_MODEL, **_pick(options, "region", "endpoint_url", "timeout_s"))
    raise PermanentError(f"unknown judge {kind!r} (choose {', '.join(BACKENDS)})")
