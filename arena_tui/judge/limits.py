"""How long judging may take: the turn deadline, the whole-run deadline, the Retry-After cap, the retry policy.

Each comes from a `--judge-…` flag, else the environment, else the default here, so the CLI,
the TUI and the live worker judge under the same limits.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .errors import PermanentError

DEFAULT_TURN_DEADLINE_S = 90.0  # every attempt and every wait of one turn
DEFAULT_RETRY_AFTER_CAP_S = 30.0  # a server asking for a longer wait ends the turn's attempts
DEFAULT_REQUEST_TIMEOUT_S = 120.0  # one HTTP request, unless the turn deadline is shorter
# one whole-run request (every turn at once: its reply alone is ~200 output tokens a turn, minutes
# for a long run), every attempt and wait included; its attempts may each take that long
DEFAULT_RUN_DEADLINE_S = 900.0
ENV_DEADLINE = "ARENA_TUI_JUDGE_DEADLINE_S"
ENV_RUN_DEADLINE = "ARENA_TUI_JUDGE_RUN_DEADLINE_S"
ENV_RETRY_AFTER_CAP = "ARENA_TUI_JUDGE_RETRY_AFTER_CAP_S"


@dataclass
class RetryPolicy:
    """How long one turn may take: attempts, back-off, an overall deadline, a Retry-After cap.

    The deadline covers every attempt and every wait of a turn, so a judge server that hangs
    or asks to come back in an hour costs at most `deadline_s` per turn. A Retry-After above
    `retry_after_cap_s` ends the turn at once: retrying sooner than the server asked is futile.
    """

    attempts: int = 4  # first try + 3 retries
    base_delay_s: float = 1.0
    max_delay_s: float = 20.0
    deadline_s: float = DEFAULT_TURN_DEADLINE_S
    retry_after_cap_s: float = DEFAULT_RETRY_AFTER_CAP_S
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    what: str = "turn"  # what the deadline is for, as its error says it ("the turn deadline of 90 s passed")

    def delay(self, attempt: int) -> float:
        """Exponential back-off with jitter, so concurrent turns do not retry in lockstep."""
        d = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return d * (0.75 + 0.5 * random.random())


def parse_seconds(raw: str) -> float:
    """A positive, finite number of seconds; ValueError saying why otherwise."""
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{raw!r} is not a positive, finite number of seconds")
    return value


def _configured(explicit: float | None, env: str, default: float) -> float:
    if explicit is not None:
        return explicit
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        return parse_seconds(raw)
    except ValueError as e:
        raise PermanentError(f"{env}: {e}") from None


def policy(deadline_s: float | None = None, retry_after_cap_s: float | None = None) -> RetryPolicy:
    """The retry policy under the configured limits; PermanentError for a bad environment value."""
    return RetryPolicy(
        deadline_s=_configured(deadline_s, ENV_DEADLINE, DEFAULT_TURN_DEADLINE_S),
        retry_after_cap_s=_configured(retry_after_cap_s, ENV_RETRY_AFTER_CAP, DEFAULT_RETRY_AFTER_CAP_S),
    )


def run_policy(deadline_s: float | None = None, retry_after_cap_s: float | None = None) -> RetryPolicy:
    """The retry policy of a whole-run request: the run deadline (`--judge-deadline` when given,
    else ARENA_TUI_JUDGE_RUN_DEADLINE_S, else 900 s) over all its attempts and waits."""
    return RetryPolicy(
        deadline_s=_configured(deadline_s, ENV_RUN_DEADLINE, DEFAULT_RUN_DEADLINE_S),
        retry_after_cap_s=_configured(retry_after_cap_s, ENV_RETRY_AFTER_CAP, DEFAULT_RETRY_AFTER_CAP_S),
        what="whole-run",
    )


def request_timeout(deadline_s: float | None = None) -> float:
    """One HTTP request's timeout: never longer than the turn deadline.

    The deadline cancels a waiting OpenAI request, but a Bedrock call runs in a thread that
    cannot be cancelled; it must end by itself, or the process would wait for it on exit.
    """
    return min(DEFAULT_REQUEST_TIMEOUT_S, _configured(deadline_s, ENV_DEADLINE, DEFAULT_TURN_DEADLINE_S))


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--judge-deadline", type=_seconds, metavar="SECONDS",
                       help=f"give up on a turn (or a whole-run request) after this long, every attempt and wait "
                            f"included (env {ENV_DEADLINE}, default {DEFAULT_TURN_DEADLINE_S:g}; whole run: env "
                            f"{ENV_RUN_DEADLINE}, default {DEFAULT_RUN_DEADLINE_S:g})")
    group.add_argument("--judge-retry-after-cap", type=_seconds, metavar="SECONDS",
                       help=f"longest Retry-After honoured; a server asking for more ends the turn's attempts "
                            f"(env {ENV_RETRY_AFTER_CAP}; default {DEFAULT_RETRY_AFTER_CAP_S:g})")


def from_args(args: argparse.Namespace) -> RetryPolicy:
    return policy(getattr(args, "judge_deadline", None), getattr(args, "judge_retry_after_cap", None))


def run_from_args(args: argparse.Namespace) -> RetryPolicy:
    return run_policy(getattr(args, "judge_deadline", None), getattr(args, "judge_retry_after_cap", None))


def _seconds(raw: str) -> float:
    try:
        return parse_seconds(raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
