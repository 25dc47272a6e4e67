"""`--judge …` command-line options, shared by every command that judges."""

from __future__ import annotations

import argparse

from arena_tui.spine.flags import positive_int
from arena_tui.spine.judges import AUTO_ORDER, DEFAULT_MODELS, DESCRIPTIONS, KINDS, KINDS_OR_NONE
from arena_tui.spine.local_llm import LOCAL_LLM_URL, LOCAL_LLM_URL_ENV
from . import limits
from .backends import JudgeBackend, PermanentError
from .factory import make_backend, resolve_kind


def add_judge_arguments(parser: argparse.ArgumentParser, *, default: str = "auto", allow_none: bool = False) -> None:
    """allow_none: commands that judge as a side effect (run, demo) can also turn it off."""
    g = parser.add_argument_group("judge")
    g.add_argument("--judge", default=default,
                   choices=list(KINDS_OR_NONE if allow_none else KINDS),
                   help="judge backend: " + "; ".join(f"{k} = {d}" for k, d in DESCRIPTIONS.items())
                        + "; auto = the first of " + ", ".join(k for k, _ in AUTO_ORDER)
                        + " whose key is set, else heuristic (never local)"
                        + ("; none = do not judge" if allow_none else "") + " (default: %(default)s)")
    g.add_argument("--judge-model", help="model id; defaults: " + ", ".join(f"{k} {m}" for k, m in DEFAULT_MODELS.items()))
    g.add_argument("--judge-base-url", help="the judge API's base URL (openai, anthropic, google, local; OPENAI_BASE_URL "
                                            f"also works for openai; local: else {LOCAL_LLM_URL_ENV}, else {LOCAL_LLM_URL})")
    g.add_argument("--judge-endpoint-url", help="Bedrock runtime endpoint URL")
    g.add_argument("--judge-region", help="AWS region for Bedrock (else the usual AWS chain)")
    g.add_argument("--judge-concurrency", type=positive_int, default=2, help="turns judged at once (default: %(default)s)")
    limits.add_arguments(g)


def backend_from_args(args: argparse.Namespace) -> JudgeBackend:
    """Raises PermanentError (a user error: missing key, region, unknown judge)."""
    kind = resolve_kind(getattr(args, "judge", "auto") or "auto")
    return make_backend(
        kind,
        getattr(args, "judge_model", None),
        base_url=getattr(args, "judge_base_url", None),
        endpoint_url=getattr(args, "judge_endpoint_url", None),
        region=getattr(args, "judge_region", None),
        timeout_s=limits.request_timeout(getattr(args, "judge_deadline", None)),
    )


__all__ = ["PermanentError", "add_judge_arguments", "backend_from_args", "resolve_kind"]
