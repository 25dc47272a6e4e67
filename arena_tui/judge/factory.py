"""Which judge backend to build: `--judge openai|bedrock|heuristic|auto` (+ `--judge-model`)."""

from __future__ import annotations

import os
from typing import Any

from arena_tui.spine.judges import AUTO, BACKENDS, HEURISTIC
from .backends import JudgeBackend, PermanentError
from .heuristic import HeuristicJudge


def resolve_kind(kind: str) -> str:
    """auto = openai if OPENAI_API_KEY is set, bedrock if AWS credentials are in the environment,
    else the offline heuristic."""
    if kind != AUTO:
        return kind
    if os.environ.get("OPENAI_API_KEY"):
        return "openai"
    if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return "bedrock"
    return HEURISTIC


def make_backend(kind: str, model: str | None = None, **options: Any) -> JudgeBackend:
    """Raises PermanentError on bad setup (unknown judge, missing key)."""
    kind = resolve_kind(kind)
    if kind == HEURISTIC:
        return HeuristicJudge()
    if kind == "openai":
        # in-function: the openai client is imported only when that judge is chosen
        from .openai_judge import DEFAULT_OPENAI_MODEL, OpenAIJudge  # deferred: the OpenAI client loads only for this judge

        opts = {k: v for k, v in options.items() if k in ("base_url", "api_key", "timeout_s") and v is not None}
        return OpenAIJudge(model or DEFAULT_OPENAI_MODEL, **opts)
    if kind == "bedrock":
        # in-function: boto3 is imported only when that judge is chosen
        from .bedrock_judge import DEFAULT_BEDROCK_MODEL, BedrockJudge  # deferred: boto3 loads only for this judge

        opts = {k: v for k, v in options.items() if k in ("region", "endpoint_url", "timeout_s") and v is not None}
        return BedrockJudge(model or DEFAULT_BEDROCK_MODEL, **opts)
    raise PermanentError(f"unknown judge {kind!r} (choose {', '.join(BACKENDS)})")
