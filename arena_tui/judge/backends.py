"""The judge backend interface and the one retry policy every backend goes through.

SDK-internal retries are switched off in each backend so that this module is the only place
that decides how often and how long to retry; a turn that still fails becomes a judge_error,
never a pass and never a silent gap.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from abc import ABC, abstractmethod
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from typing import ClassVar

from pydantic import BaseModel, ValidationError

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import TokenUsage, TurnResult
from arena_tui.spine.judges import BY_KIND, DEFAULT_MODELS
from . import budget, limits
from .errors import InvalidOutput, PermanentError, TransientError
from .limits import RetryPolicy
from .model_limits import ModelLimits, limits_for
from .schema import JUDGE_SCHEMA, SCHEMA_NAME, JudgeOutput


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: the three prompt parts (system prefix, a cacheable block, the last block),
    the structured output asked for (`schema` under `schema_name`, parsed into `output`), plus the
    raw data (for the offline judge). Every backend sends exactly these parts and this schema, so a
    new request shape needs no backend change.

    One turn: `turn`, `result`, its `dimensions`, the `earlier` turns. A whole run (`output` is
    `RunJudgeOutput`): every turn it judges in `results`, each one's dimensions in `turn_dimensions`.
    A part of a whole run (`part`): its turns in `results`, the judgeable turns before them in
    `earlier` (shown as the conversation so far). The raw data are keyword-only."""

    prefix: str
    history: str
    target: str
    _: KW_ONLY
    benchmark: Benchmark
    turn: Turn | None = None
    result: TurnResult | None = None
    dimensions: list[str] = field(default_factory=list)
    earlier: list[TurnResult] = field(default_factory=list)
    results: list[TurnResult] = field(default_factory=list)
    turn_dimensions: dict[int, list[str]] = field(default_factory=dict)
    schema: dict = field(default_factory=lambda: JUDGE_SCHEMA)
    schema_name: str = SCHEMA_NAME
    output: type[BaseModel] = JudgeOutput
    timeout_s: float | None = None  # one attempt's time limit where it differs from the backend's own (a whole run)
    part: str = ""  # "part 2 of 3" when a whole run is judged in consecutive parts (`whole_run.plan_parts`)


@dataclass(frozen=True)
class JudgeReply:
    output: BaseModel  # an instance of the request's `output` (JudgeOutput for one turn, RunJudgeOutput for a run)
    usage: TokenUsage


def parse_output(text: str | dict | None, model: type[BaseModel] = JudgeOutput) -> BaseModel:
    """The judge's reply as `model` (the request's `output`); InvalidOutput (retried) otherwise."""
    if text is None or text == "":
        raise InvalidOutput("empty judge output")
    try:
        data = json.loads(text) if isinstance(text, str) else text
        return model.model_validate(data)
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
    endpoint: str = ""  # where requests go, as `store.scrub.endpoint_label` shows it (no secrets)
    limits: ModelLimits | None = None  # its model's window and output cap (`model_limits`); None: no limit

    @abstractmethod
    async def complete(self, request: JudgeRequest) -> JudgeReply: ...

    def identify(self, kind: str, model: str, timeout_s: float | None) -> None:
        """Its model, its name as every figure shows it (`kind:model`), its model's limits and one
        attempt's time limit (`limits.request_timeout()` unless given)."""
        self.model, self.name = model, f"{kind}:{model}"
        self.limits = limits_for(kind, model)
        self.timeout_s = timeout_s if timeout_s is not None else limits.request_timeout()

    async def model_limits(self) -> ModelLimits | None:
        """The limits a request is planned against (a backend that can ask its server overrides this);
        never raises."""
        return self.limits

    def output_budget(self, request: JudgeRequest) -> int:
        """The output tokens this request asks for (`budget.output_budget`)."""
        assert self.limits is not None
        return budget.output_budget(request, self.limits)

    def truncated(self, request: JudgeRequest, asked: int, stop: str) -> PermanentError:
        """The permanent error of a reply cut off at `asked` tokens (`stop`: the provider's word for it)."""
        return budget.truncated(self.name, request, asked, stop)

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        pass


class KeyedJudge(JudgeBackend):
    """A backend an SDK reaches at a URL with a key (OpenAI and compatible servers, Anthropic,
    Google): the constructor they share. Each names its `kind` (its row of `spine.judges.JUDGES`
    says its key's names and default model) and says how it connects (`connect`)."""

    kind: ClassVar[str]

    def __init__(self, model: str | None = None, *, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float | None = None) -> None:  # timeout_s default: request_timeout()
        key = self.key(api_key)
        self.identify(self.kind, model or DEFAULT_MODELS[self.kind], timeout_s)
        self.connect(key, base_url)

    def key(self, given: str | None) -> str:
        return judge_key(given, BY_KIND[self.kind].key_envs, self.kind)

    @abstractmethod
    def connect(self, key: str, base_url: str | None) -> None:
        """Make the SDK's client (`self.client`) and say where it goes (`self.endpoint`)."""


def judge_key(given: str | None, envs: tuple[str, ...], kind: str) -> str:
    """The key given, else the first of `envs` that is set; none: a PermanentError naming them."""
    key = given or next((v for e in envs if (v := os.environ.get(e))), None)
    if not key:
        raise PermanentError(f"{' or '.join(envs)} is not set (needed for --judge {kind})")
    return key


def _secs(s: float) -> str:
    return f"{s:g} s"


def retry_after_seconds(raw: str | None, now: datetime | None = None) -> float | None:
    """A Retry-After header in seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
        return max(0.0, value) if not math.isnan(value) else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass
class Outcome:
    reply: JudgeReply | None
    error: str | None
    attempts: int
    usage: TokenUsage


async def judge_with_retries(backend: JudgeBackend, request: JudgeRequest, policy: RetryPolicy | None = None) -> Outcome:
    """Attempts until a reply, a permanent error, the attempt limit, the deadline or a too-long Retry-After."""
    policy = policy or limits.policy()
    start = policy.clock()

    def gave_up(attempts: int, last: str, why: str) -> Outcome:
        took = policy.clock() - start
        n = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        error = f"judge_error after {n} in {took:.1f} s: {last}; {why}"
        return Outcome(None, error, attempts, TokenUsage())

    last = "no attempt made"
    for attempt in range(1, policy.attempts + 1):
        hint = None
        remaining = policy.deadline_s - (policy.clock() - start)
        cutoff = asyncio.timeout(remaining)
        try:
            async with cutoff:
                reply = await backend.complete(request)
            return Outcome(reply, None, attempt, reply.usage)
        except PermanentError as e:
            return Outcome(None, f"judge_error: {e}", attempt, TokenUsage())
        except TransientError as e:
            last, hint = str(e), e.retry_after_s
        except InvalidOutput as e:
            last = str(e)
        except TimeoutError as e:
            if not cutoff.expired():  # a backend's own timeout: transient like any other
                last = f"TimeoutError: {e}"
            else:
                where = f" from {backend.endpoint}" if backend.endpoint else ""
                earlier = f"{last}; then " if attempt > 1 else ""
                last = f"{earlier}attempt {attempt} had no reply{where} yet"
                return gave_up(attempt, last, f"the {policy.what} deadline of {_secs(policy.deadline_s)} passed")
        if hint is not None and hint > policy.retry_after_cap_s:
            why = f"the server asked to retry after {_secs(hint)}, over the Retry-After cap of {_secs(policy.retry_after_cap_s)}"
            return gave_up(attempt, last, why)
        if attempt == policy.attempts:
            break
        delay = max(policy.delay(attempt), hint or 0.0)
        if policy.clock() - start + delay >= policy.deadline_s:
            why = f"waiting {delay:.1f} s more would pass the {policy.what} deadline of {_secs(policy.deadline_s)}"
            return gave_up(attempt, last, why)
        await policy.sleep(delay)
    return gave_up(policy.attempts, last, f"no attempts left of {policy.attempts}")
