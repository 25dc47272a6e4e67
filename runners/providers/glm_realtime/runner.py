"""GLM-Realtime (Zhipu) through our `GLMRealtimeLLMService` (Pipecat ships none).

What differs from the other providers, and is handled here rather than in the engine:
- client VAD: the engine brackets each user clip with User{Started,Stopped}SpeakingFrame
  (`turn_frames`), and the service commits + creates the response at the stop;
- a 12,000-character instruction cap: a longer benchmark prompt is refused at run start,
  naming the benchmark and both sizes (4 of the 6 shared benchmarks exceed it);
- a small context: sessions rotate before prompt + history reach the cap, and a new
  session gets the chronological history cut to 12,000 − prompt − 200 chars; what the
  budget drops is reported as a non-fatal error event, never lost silently;
- the service's own reconnect (a closed socket) is reported as `session_rotated` +
  `reconnected` with what it replayed;
- a reply with text but no audio (the air model's audio backend failing) is reported as
  an event on its turn instead of passing as a normal turn.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from arena_tui.spine.events import ErrorEvent, Reconnected, ReplaySummary, SessionRotated
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import Rotation, RunSettings

from ...base import HistoryItem, ProviderRunner, Publish, RunError, SessionSpec
from .service import GLMRealtimeLLMService
from .wire import (
    GLM_REALTIME_URL,
    MAX_INSTRUCTION_CHARS,
    REPLAY_MARGIN_CHARS,
    GLMConfigError,
    ReplayReport,
    budget_for,
    glm_tools,
    tool_note,
)

if TYPE_CHECKING:
    from ...fakes.script import Script

FAKE_KEY = "glm-fake-not-a-secret"
#: rotate before prompt + history reach this (GLM's context is 8,192 tokens; the reference
#: harness budgets it in characters as the instruction cap)
CONTEXT_CHARS = MAX_INSTRUCTION_CHARS


def history_entries(history: list[HistoryItem]) -> list[tuple[str, str]]:
    """The engine's replay items as (role, text) for the service, in conversation order; a
    tool call and its result become one assistant note at the result's place."""
    out: list[tuple[str, str]] = []
    calls: dict[str, HistoryItem] = {}
    for h in history:
        if h.kind in ("user", "assistant"):
            if h.text:
                out.append((h.kind, h.text))
        elif h.kind == "tool_call":
            calls[h.call_id] = h
        else:
            call = calls.pop(h.call_id, None)
            args = call.args if call is not None else {}
            out.append(("assistant", tool_note(h.name or (call.name if call else ""), args, h.response)))
    for call in calls.values():  # a call whose result is not in the replay
        out.append(("assistant", tool_note(call.name, call.args, "no result")))
    return out


def instruction_problem(benchmark: Benchmark) -> str | None:
    """Why this benchmark cannot run on GLM-Realtime, naming it and the sizes, or None."""
    prompt = benchmark.system_prompt or ""
    if len(prompt) > MAX_INSTRUCTION_CHARS:
        return (
            f"{benchmark.name}: its system prompt is {len(prompt):,} characters; GLM-Realtime accepts at most "
            f"{MAX_INSTRUCTION_CHARS:,} (over by {len(prompt) - MAX_INSTRUCTION_CHARS:,}). Run a benchmark whose "
            "prompt fits (e.g. demo_bench, grocery_bench, product_bench) or shorten its prompt/knowledge base."
        )
    return None


class GLMRealtimeRunner(ProviderRunner[GLMRealtimeLLMService]):
    default_endpoint = GLM_REALTIME_URL
    fake_key = FAKE_KEY
    turn_frames = True

    def __init__(self, script: Script | None = None) -> None:
        """`script`: the fake's script when `config.fake` (default: `script_for_benchmark`)."""
        self.script = script
        self.sessions = 0  # engine sessions built (the engine numbers them the same way)

    # -- checks

    def check_benchmark(self, benchmark: Benchmark) -> None:
        """Refuse a benchmark GLM cannot take (prompt over the cap, tool schema it rejects)."""
        if problem := instruction_problem(benchmark):
            raise RunError(problem)
        try:
            glm_tools(self.tools(benchmark.tools))
        except GLMConfigError as e:
            raise RunError(f"{benchmark.name}: {e}") from None

    # -- per run

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        self.sessions = 0

    def rotation_policy(self, config: RunSettings, system_prompt: str) -> Rotation:
        """Rotate before the context cap; replay what fits next to the prompt."""
        unset = set(Rotation.model_fields) - config.rotation.model_fields_set
        limits = {"max_context_chars": CONTEXT_CHARS, "history_budget_chars": budget_for(system_prompt)}
        return config.rotation.model_copy(update={k: v for k, v in limits.items() if k in unset})

    # -- sessions

    def build_service(self, spec: SessionSpec) -> GLMRealtimeLLMService:
        self.sessions += 1
        service = GLMRealtimeLLMService(
            api_key=self.api_key(spec.config),
            base_url=self.endpoint(spec.config),
            model=spec.model,
            system_instruction=spec.system_prompt,
            tools=self.tools(spec.tools),
            history=history_entries(spec.history),
            respond=spec.kickoff is not None,
            text_without_audio_error=False,  # reported as an event: an ErrorFrame would end the session
        )
        if spec.publish is not None:
            self._report(service, spec.publish, self.sessions)
        return service

    def service_endpoint(self, service: GLMRealtimeLLMService) -> str:
        return service._base_url

    def is_alive(self, service: GLMRealtimeLLMService) -> bool:
        # True while the service connects or reconnects by itself: only a close or a given-up
        # reconnect means the engine must open a new session.
        return bool(service.alive)

    def session_ready(self, service: GLMRealtimeLLMService) -> bool:
        return service.seeded

    def _report(self, service: GLMRealtimeLLMService, publish: Publish, n: int) -> None:
        """The service's own reconnects and text-only replies as events of session `n`."""

        @service.event_handler("on_history_replayed")
        async def _replayed(_svc: GLMRealtimeLLMService, report: ReplayReport) -> None:
            note = _drop_note(report)
            if report.kind == "reconnect":
                publish(
                    SessionRotated,
                    reason="provider_reconnect",
                    from_session=n,
                    to_session=n,
                    replayed=ReplaySummary(
                        strategy="full_history" if not report.dropped_messages else "recent_within_budget",
                        messages=report.messages,
                        chars=report.chars,
                        dropped_messages=report.dropped_messages,
                        note=note or f"GLM-Realtime reconnected by itself ({report.reason})",
                    ),
                )
                # `session` bound in a partial: the engine's on_session_event(session, cls, **kw)
                # takes `session` itself and would clash with the keyword
                publish(partial(Reconnected, session=n), reason=f"provider_reconnect: {report.reason}", attempt=service.reconnects)
            if note:
                publish(ErrorEvent, where="provider", message=f"session {n}: {note}", fatal=False)

        @service.event_handler("on_text_without_audio")
        async def _text_only(_svc: GLMRealtimeLLMService, text: str) -> None:
            publish(
                ErrorEvent,
                where="provider",
                message=(
                    f"GLM-Realtime reply had text but no audio (the model's audio output failed): {text[:80]!r}; "
                    "this turn's audio metrics are missing"
                ),
                fatal=False,
            )

    def replay_strategy(self) -> str:
        return "full_history"

    def provider_ttfb_label(self) -> str:
        return "GLM TTFB (response.created → first audio)"


def _drop_note(report: ReplayReport) -> str:
    """Say plainly when the budget cost history (empty when everything was replayed whole)."""
    parts = []
    if report.dropped_messages:
        parts.append(
            f"GLM-Realtime replay dropped the {report.dropped_messages} oldest message(s): the budget is "
            f"{report.budget_chars:,} chars ({MAX_INSTRUCTION_CHARS:,} − prompt − {REPLAY_MARGIN_CHARS}); "
            f"kept {report.messages} message(s), {report.chars:,} chars"
        )
    if report.truncated_entries:
        parts.append(f"{report.truncated_entries} replayed message(s) cut to 500 chars")
    return "; ".join(parts)
