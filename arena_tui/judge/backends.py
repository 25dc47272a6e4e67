"""The judge backend interface and the one retry policy every backend goes through.

SDK-internal retries are switched off in each backend so that this module is the only place
that decides how often and how long to retry; a turn that still fails becomes a judge_error,
never a pass and never a silent gap.
"""

from __future__ import annotations

import asyncio
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from benchmarks.model import Benchmark, Turn

from ..events import TokenUsage, TurnResult
from .schema import JudgeOutput


class InvalidOutput(Exception):
    """The judge answered, but not with JSON that fits the schema (retried)."""


class TransientError(Exception):
    """Rate limit, server error, timeout or connection failure (retried)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s  # the server's Retry-After, honoured up to max_delay_s


class PermanentError(Exception):
    """Retrying cannot help (bad credentials, unknown model, bad request)."""


@dataclass(frozen=True)
class JudgeRequest:
    """One turn to judge: the three prompt parts plus the raw data (for the offline judge)."""

    prefix: str
    history: str
    target: str
    turn: Turn
    result: TurnResult
    benchmark: Benchmark
    dimensions: list[str]
    earlier: list[TurnResult] = field(default_factory=list)


@dataclass(frozen=True)
class JudgeReply:
    output: JudgeOutput
    usage: TokenUsage


def parse_output(text: str | dict | None) -> JudgeOutput:
    if text is None or text == "":
        raise InvalidOutput("empty judge output")
    try:
        data = json.loads(text) if isinstance(text, str) else text
        return JudgeOutput.model_validate(data)
    except json.JSONDecodeError as e:
        raise InvalidOutput(f"judge output is not JSON ({e.msg} at char {e.pos})") from e
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise InvalidOutput(f"judge output violates the schema at {where}: {first['msg']}") from e


class JudgeBackend(ABC):
    """One way of asking for a turn's scores; `complete` is a single attempt."""

    name: str = "judge"
    heuristic: bool = False

    @abstractmethod
    async def complete(self, request: JudgeRequest) -> JudgeReply: ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        pass


@dataclass
class RetryPolicy:
    attempts: int = 4  # first try + 3 retries
    base_delay_s: float = 1.0
    max_delay_s: float = 20.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    def delay(self, attempt: int) -> float:
        """Exponential back-off with jitter, so concurrent turns do not retry in lockstep."""
        d = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return d * (0.75 + 0.5 * random.random())


@dataclass
class Outcome:
    reply: JudgeReply | None
    error: str | None
    attempts: int
    usage: TokenUsage


async def judge_with_retries(backend: JudgeBackend, request: JudgeRequest, policy: RetryPolicy | None = None) -> Outcome:
    policy = policy or RetryPolicy()
    last = "no attempt made"
    for attempt in range(1, policy.attempts + 1):
        hint = None
        try:
            reply = await backend.complete(request)
            return Outcome(reply, None, attempt, reply.usage)
        except PermanentError as e:
            return Outcome(None, f"judge_error: {e}", attempt, TokenUsage())
        except TransientError as e:
            last, hint = str(e), e.retry_after_s
        except InvalidOutput as e:
            last = str(e)
        if attempt < policy.attempts:
            delay = policy.delay(attempt)
            if hint is not None:
                delay = max(delay, min(hint, policy.max_delay_s))
            await policy.sleep(delay)
    return Outcome(None, f"judge_error after {policy.attempts} attempts: {last}", policy.attempts, TokenUsage())
