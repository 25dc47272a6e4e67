"""`--judge …` command-line options, shared by every command that judges."""

from __future__ import annotations

import argparse
import os

from .backends import (
    DEFAULT_RETRY_AFTER_CAP_S,
    DEFAULT_TURN_DEADLINE_S,
    ENV_DEADLINE,
    ENV_RETRY_AFTER_CAP,
    JudgeBackend,
    PermanentError,
    RetryPolicy,
    parse_seconds,
)


def add_judge_arguments(parser: argparse.ArgumentParser, *, default: str = "auto") -> None:
    g = parser.add_argument_group("judge")
    g.add_argument("--judge", default=default, choices=["auto", "openai", "bedrock", "heuristic"],
                   help="judge backend; auto = openai if OPENAI_API_KEY is set, bedrock if AWS credentials "
                        "are in the environment, else the offline heuristic (default: %(default)s)")
    g.add_argument("--judge-model", help="model id (openai default gpt-5-mini; bedrock default Claude Sonnet 4.5)")
    g.add_argument("--judge-base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL also works)")
    g.add_argument("--judge-endpoint-url", help="Bedrock runtime endpoint URL")
    g.add_argument("--judge-region", help="AWS region for Bedrock (else the usual AWS chain)")
    g.add_argument("--judge-concurrency", type=int, default=2, help="turns judged at once (default: %(default)s)")
    g.add_argument("--judge-deadline", type=_seconds, metavar="SECONDS",
                   help=f"give up on a turn after this long, all attempts and waits included "
                        f"(env {ENV_DEADLINE}; default {DEFAULT_TURN_DEADLINE_S:g})")
    g.add_argument("--judge-retry-after-cap", type=_seconds, metavar="SECONDS",
                   help=f"longest Retry-After honoured; a server asking for more ends the turn's attempts "
                        f"(env {ENV_RETRY_AFTER_CAP}; default {DEFAULT_RETRY_AFTER_CAP_S:g})")


def _seconds(raw: str) -> float:
    try:
        return parse_seconds(raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def resolve_kind(kind: str) -> str:
    if kind != "auto":
        return kind
    if os.environ.get("OPENAI_API_KEY"):
        return "openai"
    if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return "bedrock"
    return "heuristic"


def policy_from_args(args: argparse.Namespace) -> RetryPolicy:
    """Raises PermanentError for a bad value in the environment."""
    return RetryPolicy.configured(getattr(args, "judge_deadline", None), getattr(args, "judge_retry_after_cap", None))


def backend_from_args(args: argparse.Namespace) -> JudgeBackend:
    """Raises PermanentError (a user error: missing key, region, unknown judge)."""
    from . import make_backend

    kind = resolve_kind(getattr(args, "judge", "auto") or "auto")
    return make_backend(
        kind,
        getattr(args, "judge_model", None),
        base_url=getattr(args, "judge_base_url", None),
        endpoint_url=getattr(args, "judge_endpoint_url", None),
        region=getattr(args, "judge_region", None),
        deadline_s=policy_from_args(args).deadline_s,
    )


__all__ = ["PermanentError", "add_judge_arguments", "backend_from_args", "policy_from_args", "resolve_kind"]
