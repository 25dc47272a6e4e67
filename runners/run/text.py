"""The text turn loop: the turn's TEXT instead of its audio, same tools and records (`base.RunBase`).

A session is one Pipecat pipeline `user aggregator → OpenAILLMService → assistant aggregator`
around one `LLMContext`, so Pipecat streams the reply, runs the tool handler and re-prompts
with the tool results exactly as it does in a voice bot. What the run publishes is what the
audio engine publishes (run/turn/transcript/tool events, TurnResults with the same statuses
and sentinels) minus everything audio: no levels, speech boundaries, overlap or turn-taking.

HTTP has no session to lose, so "reconnect" means: a failed request (5xx, dropped
connection, timeout) closes the session, a new one is opened with the conversation rebuilt
from the completed turns (`History`, tool calls and results included), and the turn is
retried there. A conversation over `rotation.history_budget_chars` is trimmed at a turn
boundary with `select_replay`. Both publish `SessionRotated` (with what was replayed) and
`Reconnected`, like the audio engine's rotations. Latency is time to first token on our
own clock (request sent → first streamed token or tool call).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    FunctionCallsStartedFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMMessagesUpdateFrame,
    LLMTextFrame,
    MetricsFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair

from arena_tui.spine.events import TurnStatus
from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    INFRA_ERROR,
    ErrorEvent,
    Latencies,
    Retry,
    TranscriptDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from arena_tui.spine.benchmark import Turn
from arena_tui.spine.recorded import MODALITY, TEXT
from arena_tui.spine.urls import endpoint_label

from ..base import HistoryItem, SessionSpec
from ..rotation import rotation_due
from ..tools import ToolResolver
from ..transports import RunClock
from .attempt import AttemptBase, spoken_text
from .base import RunBase
from .outcome import turn_status
from .session_base import SessionBase
from .infra import InfraError, http_status, infra_failure

SETTLE_MS = 60.0  # quiet after a reply ends before the turn is over (a tool re-prompt starts within it)
FOLLOWUP_WAIT_MS = 5000.0  # a reply that only called tools, and no re-prompt came: give up waiting


@dataclass
class TextAttempt(AttemptBase):
    """What one attempt of one text turn produced (`AttemptBase` plus request bookkeeping)."""

    awaiting_followup: bool = False  # a reply called tools; the re-prompt's reply is still to come
    last_change_ms: float = 0.0
    first_token_ms: float | None = None
    error_reason: str | None = None  # error | disconnect | timeout
    fatal_status: int | None = None  # 401/403/404: stop the run, naming it

    def has_content(self) -> bool:
        return bool(spoken_text(self.assistant_text)) or bool(self.tool_calls)


#: what each text SDK raises when a request times out / loses its connection ("module.Class"), looked
#: up among the modules already imported (`_raised`): an SDK never imported raised nothing, and
#: importing all four here cost every run ~1 s of its start (anthropic alone 0.8 s)
TIMEOUTS = ("openai.APITimeoutError", "anthropic.APITimeoutError", "httpx.TimeoutException",
            "botocore.exceptions.ReadTimeoutError", "botocore.exceptions.ConnectTimeoutError")
DISCONNECTS = ("openai.APIConnectionError", "anthropic.APIConnectionError", "httpx.TransportError",
               "botocore.exceptions.EndpointConnectionError", "botocore.exceptions.ConnectionClosedError")


def _raised(exc: BaseException | None, names: tuple[str, ...]) -> bool:
    """Whether `exc` is one of the named classes (of the modules imported so far)."""
    classes = [getattr(sys.modules.get(module), name, None) for module, _, name in (n.rpartition(".") for n in names)]
    return isinstance(exc, tuple(c for c in classes if isinstance(c, type)))


def failure_reason(frame: ErrorFrame) -> str:
    """What kind of request failure an ErrorFrame reports: timeout, disconnect or error (HTTP status…)."""
    exc = getattr(frame, "exception", None)
    if isinstance(exc, TimeoutError) or _raised(exc, TIMEOUTS):
        return "timeout"
    if isinstance(exc, ConnectionError) or _raised(exc, DISCONNECTS):
        return "disconnect"
    if "timeout" in str(frame.error).lower():
        return "timeout"
    return "error"


FATAL_STATUS = {401: "the key was rejected", 403: "access denied", 404: "no such model or endpoint"}


def fatal_status(frame: ErrorFrame) -> int | None:
    """An HTTP status no retry can fix (bad key, no access, unknown model/endpoint)."""
    exc = getattr(frame, "exception", None)
    status = http_status(exc) if exc is not None else None
    return status if status in FATAL_STATUS else None


class TextSession(SessionBase):
    """One LLMContext in one Pipecat pipeline around one OpenAI-compatible chat service."""

    def __init__(self, run: TextRun, number: int, spec: SessionSpec) -> None:
        super().__init__(run, number, spec)
        self.context: LLMContext | None = None
        self._worker: PipelineWorker | None = None

    async def open(self) -> None:
        provider = self.run.provider
        llm = self.build_llm()
        self.context = LLMContext(provider.history_messages(self.spec.history), provider.tools(self.spec.tools))
        pair = LLMContextAggregatorPair(self.context)
        self._worker = self.worker(
            [pair.user(), llm, pair.assistant()], PipelineParams(enable_metrics=True, enable_usage_metrics=True)
        )
        await self.run_worker(self._worker, f"text-session-{self.number}")

    def messages(self) -> list[Any]:
        assert self.context is not None
        return list(self.context.get_messages())

    async def ask(self, base: list[Any], user_text: str) -> None:
        """Set the conversation to `base` + the user's message and run the model on it."""
        assert self._worker is not None
        await self._worker.queue_frames(
            [LLMMessagesUpdateFrame(messages=[*base, {"role": "user", "content": user_text}], run_llm=True)]
        )


class TextRun(RunBase[TextSession, TextAttempt]):
    """The text turn loop: each turn's text sent as a user message, the streamed reply recorded."""

    def run_clock(self) -> RunClock:
        return RunClock(1.0, self.start_ms)  # no audio time to speed up

    def public_config(self) -> dict[str, Any]:
        no_greeting = self.config.greeting.model_copy(update={"enabled": False})  # text runs start with turn 0
        return {**self.config.model_copy(update={"greeting": no_greeting}).public(), MODALITY: TEXT}

    async def opening(self) -> None:
        if self.seed is not None:  # resumed / rehydrated: the conversation so far replayed
            items, _ = self.replays.seeded()
            await self.open_session(items, detail=self.replays.seed_detail())
            return
        await self.open_session(detail="initial")

    # -- frames from the service

    def on_llm_frame(self, session: TextSession, frame: Frame) -> None:
        a = self.attempt
        if session is not self.session or a is None:
            return
        now = self.now()
        if isinstance(frame, LLMFullResponseStartFrame):
            a.responses_started += 1
            a.response_active = True
            a.awaiting_followup = False
            a.last_change_ms = now
        elif isinstance(frame, LLMFullResponseEndFrame):
            a.responses_ended += 1
            a.response_active = False
            a.last_change_ms = now
        elif isinstance(frame, LLMTextFrame):
            if frame.text:
                if a.first_token_ms is None:
                    a.first_token_ms = now
                a.assistant_text += frame.text
                a.last_change_ms = now
                self.publish(self.ev(TranscriptDelta, role="assistant", text=frame.text))
        elif isinstance(frame, FunctionCallsStartedFrame):
            if a.first_token_ms is None:
                a.first_token_ms = now
            a.awaiting_followup = True
            a.last_change_ms = now
        elif isinstance(frame, ErrorFrame):
            msg = str(frame.error)
            if a.error is None:
                a.error, a.error_reason, a.fatal_status = msg, failure_reason(frame), fatal_status(frame)
                a.infra = infra_failure(frame, self.provider.endpoint(self.config))
                self.publish(self.ev(ErrorEvent, where="provider", message=msg, fatal=False))
        elif isinstance(frame, MetricsFrame):
            for d in frame.data:
                if isinstance(d, LLMUsageMetricsData):
                    a.count_usage(d)

    # -- tool calls (the audio engine's rules: runners.tools, one handler for every function)

    def tool_settled(self, a: TextAttempt) -> None:
        a.last_change_ms = self.now()

    # -- sessions

    async def open_session(self, history: list[HistoryItem] | None = None, detail: str = "") -> TextSession:
        session = TextSession(self, self.next_session_number(), self.spec(None, history))
        self.session = session
        await session.open()
        self.session_opened(session, detail)
        return session

    async def rotate(self, reason: str, detail: str = "", infra: str | None = None) -> None:
        """A new session with the completed conversation replayed (trimmed to the budget)."""
        await self.replays.replace(reason, detail, lambda items, d: self.open_session(items, detail=d), infra)

    async def at_turn_boundary(self) -> None:
        """Planned rotation: the policy's age / context limits, or a conversation over the replay budget."""
        s = self.session
        if s is None:
            return
        chars = s.context_chars()
        reason = rotation_due(self.rotation, self.now() - s.opened_ms, len(self.benchmark.system_prompt) + chars)
        if reason is None and chars > self.rotation.history_budget_chars:
            reason = "context_budget"
        if reason:
            await self.rotate(reason)

    # -- turns

    async def run_attempt(self, turn: Turn, number: int, base: list[Any]) -> tuple[TextAttempt, str]:
        """Send the turn's text once and wait for the reply (and any tool re-prompts) to finish."""
        s = self.session
        assert s is not None
        a = TextAttempt(turn_index=turn.turn_index, number=number, started_ms=self.now(), resolver=ToolResolver(turn))
        a.last_change_ms = a.started_ms
        self.attempt = a
        self.publish(self.ev(TurnStarted, attempt=number, input_text=turn.input, user_audio_ms=0.0))
        self.publish(self.ev(TranscriptDelta, role="user", text=turn.input, final=True))
        await s.ask(base, turn.input)
        limit = self.provider.reply_timeout_ms(self.config)
        while True:
            await asyncio.sleep(0.01)
            now = self.now()
            if a.error is not None and not a.response_active:
                return a, "failed"
            if not s.running():
                a.error, a.error_reason = a.error or "the session's pipeline stopped", a.error_reason or "error"
                return a, "failed"
            busy = a.response_active or a.pending_tools > 0
            quiet = now - a.last_change_ms
            if not busy and a.responses_ended > 0:
                if not a.awaiting_followup and quiet >= SETTLE_MS:
                    return a, ("ok" if a.has_content() else "empty")
                if a.awaiting_followup and quiet >= FOLLOWUP_WAIT_MS:
                    return a, ("ok" if a.has_content() else "empty")
            if quiet >= limit:  # nothing streamed, ended or answered for the whole watchdog span
                a.error, a.error_reason = f"no reply within {limit / 1000:.0f} s", "timeout"
                self.publish(self.ev(ErrorEvent, where="provider", message=a.error, fatal=False))
                return a, "failed"

    async def run_turn(self, turn: Turn) -> TurnResult:
        self.turn_index = turn.turn_index
        await self.at_turn_boundary()
        assert self.session is not None
        base = self.session.messages()  # the conversation before this turn; every attempt starts from it
        wd = self.config.watchdog
        reconnects_before = self.replays.reconnects
        retries = 0
        outcome = "no_response"
        a: TextAttempt | None = None
        reached = False  # an attempt got to the model (its answer, or its silence, is the model's)
        for number in range(wd.max_retries + 1):
            if number > 0:
                retries = number
                self.publish(self.ev(Retry, attempt=number, reason=outcome if a is None or a.error_reason is None else f"{outcome}: {a.error_reason}"))
                await asyncio.sleep(wd.backoff_ms / 1000.0)
                if a is not None and a.error is not None:
                    await self.rotate(a.error_reason or "error", a.error, a.infra)
                    base = self.session.messages()
            a, outcome = await self.run_attempt(turn, number, base)
            if a.fatal_status is not None:  # no retry can fix it: the run stops, naming it
                what = FATAL_STATUS[a.fatal_status]
                failure = a.infra or f"{what}: {endpoint_label(self.provider.endpoint(self.config))} answered HTTP {a.fatal_status}"
                model = self.provider.resolve_model(self.config.model)
                raise InfraError(f"turn {turn.turn_index}: {failure}; {what} (model {model!r})", failure)
            reached = reached or a.infra is None or a.has_content()
            if outcome == "ok":
                self.replays.failing = 0
                break
        assert a is not None
        return self.finish_turn(turn, a, outcome, retries, self.replays.reconnects - reconnects_before, None if reached else a.infra)

    def finish_turn(
        self, turn: Turn, a: TextAttempt, outcome: str, retries: int, reconnects: int, infra: str | None = None
    ) -> TurnResult:
        status, sentinel = turn_status(outcome, a.ends_session, infra)
        text = EMPTY_RESPONSE if sentinel == EMPTY_RESPONSE else a.assistant_text.strip()
        ttft = a.first_token_ms - a.started_ms if a.first_token_ms is not None else None
        result = TurnResult(
            turn_index=turn.turn_index,
            status=status,
            user_text=turn.input,
            assistant_text=text,
            tool_calls=a.tool_calls,
            latencies=Latencies(provider_ttfb_ms=ttft),
            retries=retries,
            reconnects=reconnects,
            session=self.session_number(),
            tokens=a.tokens,
            sentinel=sentinel,
            error=infra if status == INFRA_ERROR else a.error if status not in ("ok", "ended_session") else None,
        )
        self.publish(self.ev(TurnEnded, result=result))
        self.remember(turn, status, a)
        return result

    def failed_turn(self, turn: Turn, error: str, status: TurnStatus = "error") -> TurnResult:
        """The run cannot go on: the turn under way is recorded with `status`, with what it got."""
        a = self.attempt
        got = a if a is not None and a.turn_index == turn.turn_index else None
        result = TurnResult(
            turn_index=turn.turn_index, status=status, user_text=turn.input,
            assistant_text=got.assistant_text.strip() if got else "", tool_calls=got.tool_calls if got else [],
            session=self.session_number(), error=error,
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))
        return result

    def interrupted_turn(self, turn: Turn) -> None:
        a = self.attempt
        if a is None or a.turn_index != turn.turn_index:
            return
        result = TurnResult(
            turn_index=turn.turn_index, status="interrupted", user_text=turn.input,
            assistant_text=a.assistant_text.strip(), tool_calls=a.tool_calls, interrupted=True,
            session=self.session_number(), tokens=a.tokens,
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))
