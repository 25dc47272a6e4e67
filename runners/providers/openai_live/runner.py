"""OpenAI's full-duplex `gpt-live-1` through Pipecat's `OpenAILiveLLMService`, run by the
full-duplex turn loop (`runners/run/full_duplex.py`).

The live model listens and speaks at once and decides by itself when to answer, when to yield,
and when to *delegate* work to a backend model; there is no commit and no response trigger, and
the user's audio streams continuously. Its tools belong to the backend, so every call it makes
is the backend's (recorded as `made_by="back"` with the backend's model, for the judge).

Two backends, one alias each:
- `gpt-live-1`: Responses delegation — OpenAI hosts the backend (`RESPONSES_MODEL`, the
  benchmark's prompt as its instructions, the benchmark's tools); Pipecat runs the function calls
  it makes with the handler the engine registers and sends their outputs back;
- `gpt-live-1+<text alias>` (any text model of ours, e.g. `gpt-live-1+claude-haiku-4-5`): client
  delegation — Pipecat's `BackendLLMWorker` runs that model's Pipecat service, as its own runner
  builds it (key, endpoint, client; its fake under `--fake`), with the benchmark's prompt and
  tools and the engine's tool handler; what it marks for the user comes back as commentary.

Usage: the live model is billed by the minute of session (OpenAI's price: per second, whatever is
said), the run's connected time on our clock as for every audio session; the backend's tokens are
billed at its own model's price, so each backend's are reported under its model: a Responses
delegation's (`response.completed` usage, which Pipecat reports under the live model's name) by
`ArenaLiveService`, a client backend's by its own service (the engine hears its reports: `usage_parts`).

Why a subclass (`ArenaLiveService`): the session's kickoff (the greeting) goes as the opening
instruction Pipecat knows (a trailing developer message, delivered as commentary once the
session starts), a rotated session's history as the startup `input` (text only: a call and its
result become an assistant note), and the engine asks it whether the connection lives, whether
the session has started, and whether delegated work is in flight.
"""

from __future__ import annotations

import json
from typing import Any

from pipecat.frames.frames import MetricsFrame
from pipecat.metrics.metrics import LLMTokenUsage, LLMUsageMetricsData
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.openai.live import events as le
from pipecat.services.openai.live.llm import ClientDelegation, OpenAILiveLLMService, OpenAILiveLLMSettings, ResponsesDelegation
from pipecat.services.openai.responses.llm import OpenAIResponsesLLMSettings
from pipecat.workers.llm.backend_llm_worker import BackendLLMWorker
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.llm_service import LLMService

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ... import catalog
from ...base import HistoryItem, LocalFake, ProviderRunner, RunError, SessionSpec, get_runner

DEFAULT_BASE_URL = "wss://api.openai.com/v1/live/sessions"
FAKE_KEY = "sk-live-fake-not-a-secret"
#: the backend model OpenAI hosts for Responses delegation (Pipecat's own example)
RESPONSES_MODEL = "gpt-5.4-mini"
#: `gpt-live-1+<text alias>`: client delegation to that text model
FAMILY = "gpt-live-1+"
#: how long a client delegation may take before Pipecat abandons it (wall seconds, Pipecat's default)
CLIENT_TIMEOUT_S = 120.0


def startup_input(history: list[HistoryItem]) -> list[le.InputItem]:
    """A rotated session's history as the Live API takes it at start: text only (a call and its
    result as one assistant note), the newest `MAX_INPUT_ITEMS` kept."""
    items: list[le.InputItem] = []
    calls: dict[str, HistoryItem] = {}
    for h in history:
        if h.kind == "user" and h.text:
            items.append(le.InputItem(role="user", content=[le.InputTextContent(text=h.text)]))
        elif h.kind == "assistant" and h.text:
            items.append(le.InputItem(role="assistant", content=[le.OutputTextContent(text=h.text)]))
        elif h.kind == "tool_call":
            calls[h.call_id] = h
        elif h.kind == "tool_result":
            call = calls.pop(h.call_id, None)
            args = json.dumps(call.args, ensure_ascii=False) if call else "{}"
            note = f"(called {h.name}({args}) -> {json.dumps(h.response, ensure_ascii=False, default=str)})"
            items.append(le.InputItem(role="assistant", content=[le.OutputTextContent(text=note)]))
    return items[-le.MAX_INPUT_ITEMS:]


class ArenaLiveService(OpenAILiveLLMService):
    """Pipecat's Live service, seeded as the engine asks and asked what the engine needs to know."""

    def __init__(self, *, api_key: str, base_url: str, settings: OpenAILiveLLMSettings,
                 delegation: ResponsesDelegation | ClientDelegation, history: list[HistoryItem] | None = None,
                 kickoff: str | None = None, backend_model: str = "", backend_llm: LLMService | None = None) -> None:
        super().__init__(api_key=api_key, base_url=base_url, settings=settings, delegation=delegation)
        self._history = list(history or [])
        self._kickoff = kickoff
        self.backend_model = backend_model  # the Responses delegation's model (what its usage is billed as)
        self.backend_llm = backend_llm  # a client delegation's text model service (its own usage reports)
        self._reporting_for: str | None = None  # the backend model a usage report being made is for
        self._responses_open: set[str] = set()  # Responses delegations not yet answered in words
        self._responses_calling: set[str] = set()  # ... whose current response made a function call

    async def _invocation_params(self):
        """The context as Pipecat reads it, the kickoff turned into the opening instruction (a
        trailing developer message) and the replayed history put before it."""
        params = await super()._invocation_params()
        items = list(params["input"])
        if self._kickoff and items and items[-1].role == "user" and "".join(p.text for p in items[-1].content) == self._kickoff:
            items[-1] = le.InputItem(role="developer", content=[le.InputTextContent(text=self._kickoff)])
        params["input"] = startup_input(self._history) + items
        return params

    async def cancel(self, frame):
        """Cancelled (the engine closes a session so): its transcript turns' gap timers go too
        (Pipecat stops them only on a graceful stop; the worker runner would report them dangling)."""
        for turn in (self._user_turn, self._assistant_turn):
            if turn.timer is not None:
                await self.cancel_task(turn.timer)
                turn.timer = None
        await super().cancel(frame)

    async def _report_backend_usage(self, response: dict[str, Any]):
        """Pipecat's report of a delegated response's usage, made under the backend's model (the one
        the delegation asked for; else the response's, maybe a dated snapshot), not the live model's:
        each is billed at its own."""
        self._reporting_for = str(self.backend_model or response.get("model") or "")
        try:
            await super()._report_backend_usage(response)
        finally:
            self._reporting_for = None

    async def start_llm_usage_metrics(self, tokens: LLMTokenUsage):
        if self._reporting_for is None:
            await super().start_llm_usage_metrics(tokens)
        elif self.can_generate_metrics() and self.usage_metrics_enabled:
            await self.push_frame(MetricsFrame(data=[LLMUsageMetricsData(processor=self.name, model=self._reporting_for,
                                                                         value=tokens)]))

    def connection_alive(self) -> bool:
        """Not lost: still connecting, or its receive loop runs (Pipecat says nothing when the server closes)."""
        task = self._receive_task
        return task is None or not task.done()

    @property
    def started(self) -> bool:
        return self._session_started

    def delegating(self) -> bool:
        """Delegated work in flight: a client delegation running or queued, a Responses delegation
        whose backend has not answered in words yet, or a function call it made still open."""
        return bool(self._current_delegation or self._queued_delegations or self._responses_open or self._open_function_calls)

    async def _handle_evt_delegation_created(self, evt: le.SessionDelegationCreatedEvent):
        if evt.delegation.target == "responses":
            self._responses_open.add(evt.delegation.id)
        await super()._handle_evt_delegation_created(evt)

    async def _handle_evt_response(self, evt: le.ResponseEventEnvelope):
        """As Pipecat handles it; and a Responses delegation is settled once one of its responses
        ends without a function call (its answer is words, or it failed), whatever Pipecat's own
        bookkeeping (a response whose calls were all answered before it ended is forgotten there)."""
        key, inner = evt.delegation_id or "", evt.inner_type
        if inner == "response.created":
            self._responses_calling.discard(key)
        elif inner == "response.output_item.done" and (evt.event.get("item") or {}).get("type") == "function_call":
            self._responses_calling.add(key)
        await super()._handle_evt_response(evt)
        if inner in ("response.completed", "response.incomplete", "response.failed") and key not in self._responses_calling:
            self._responses_open.discard(key)


class OpenAILiveRunner(ProviderRunner[ArenaLiveService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = FAKE_KEY

    def __init__(self) -> None:
        self.backend: ProviderRunner | None = None  # a client delegation's text model runner

    # -- the alias: the live model and its backend

    def backend_alias(self, alias: str) -> str | None:
        """The text alias a `gpt-live-1+<alias>` delegates to (None: Responses delegation)."""
        if not alias.startswith(FAMILY):
            return None
        return alias[len(FAMILY):]

    def resolve_model(self, alias: str) -> str:
        return self.aliases.get(alias) or FAMILY.rstrip("+")

    def backend_model(self, config: RunSettings) -> str:
        """The backend's model id (what made the calls)."""
        text = self.backend_alias(config.model)
        return RESPONSES_MODEL if text is None else self.backend_runner(config).resolve_model(text)

    def backend_runner(self, config: RunSettings) -> ProviderRunner:
        text = self.backend_alias(config.model)
        assert text is not None
        if self.backend is None:
            provider = catalog.lookup(text)
            if provider is None or provider.mode != "text":
                texts = sorted(a for a, p in catalog.BY_ALIAS.items() if p.mode == "text" and not p.alias_family)
                texts += [f"{p.alias_family}<model>" for p in catalog.TEXT_FAMILIES]
                raise RunError(f"{config.model}: a client backend is one of our text models ({', '.join(texts)})")
            self.backend = get_runner(text)
        return self.backend

    def backend_config(self, config: RunSettings) -> RunSettings:
        return config.model_copy(update={"model": self.backend_alias(config.model), "speed": 1.0, "effort": None})

    def call_maker(self, config: RunSettings) -> tuple[str, str]:
        """Who makes its calls: the backend, always (the Live API gives tools to the backend only)."""
        return "back", self.backend_model(config)

    checks = (*ProviderRunner.checks, "backend")

    def check_backend(self, config: RunSettings) -> list[str]:
        """A delegating model's backend: one of our text models, its packages and keys (its key may be the
        live model's own: said once)."""
        if self.backend_alias(config.model) is None:
            return []
        try:
            backend = self.backend_runner(config)
        except RunError as e:
            return [str(e)]
        said = {p.split(": ", 1)[-1] for p in self.preflight(config, only=("packages", "keys"))}
        return [f"{self.name} backend: {p}" for p in backend.preflight(self.backend_config(config), only=("packages", "keys"))
                if p.split(": ", 1)[-1] not in said]

    # -- the local fakes

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake:
        from ...fakes.hearing import Hearing  # deferred: the local fakes load only for --fake runs
        from .fake import OpenAILiveFake  # deferred: the local fakes load only for --fake runs

        client = None
        if self.backend_alias(config.model) is not None:
            client = self.backend_runner(config).make_fake(self.backend_config(config), benchmark)
        return OpenAILiveFake(self.fake_script(config, benchmark), hearing=Hearing(benchmark), client_backend=client,
                              **self.fake_pace(config))

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        client = getattr(self.fake, "client_backend", None)
        if client is not None:  # the text model's runner talks to its fake
            backend = self.backend_runner(config)
            backend.fake, backend.base_url = client, client.base_url

    # -- sessions

    def build_service(self, spec: SessionSpec) -> ArenaLiveService:
        cfg = spec.config
        text = self.backend_alias(cfg.model)
        delegation: ResponsesDelegation | ClientDelegation
        llm: LLMService | None = None
        if text is None:
            delegation = OpenAILiveLLMService.ResponsesDelegation(
                settings=OpenAIResponsesLLMSettings(model=RESPONSES_MODEL, system_instruction=spec.system_prompt))
        else:
            backend = self.backend_runner(cfg)
            bcfg = self.backend_config(cfg)
            llm = backend.build_service(spec.model_copy(update={"model": backend.resolve_model(text), "config": bcfg,
                                                                "history": [], "kickoff": None}))
            if spec.tool_handler is not None:  # its calls are answered from the turn spec, as any model's
                llm.register_function(None, spec.tool_handler, cancel_on_interruption=True)
            worker = BackendLLMWorker(llm=llm, context=LLMContext(tools=self.tools(spec.tools)))
            delegation = OpenAILiveLLMService.ClientDelegation(backend=worker, timeout_secs=CLIENT_TIMEOUT_S)
        return ArenaLiveService(
            api_key=self.api_key(cfg),
            base_url=self.endpoint(cfg),
            settings=OpenAILiveLLMService.Settings(model=spec.model, system_instruction=spec.system_prompt),
            delegation=delegation,
            history=spec.history,
            kickoff=spec.kickoff,
            backend_model=RESPONSES_MODEL if text is None else "",
            backend_llm=llm,
        )

    def usage_parts(self, service: ArenaLiveService) -> list[FrameProcessor]:
        """A client backend's service: its requests' usage is its own model's (it runs in its own pipeline)."""
        return [service.backend_llm] if service.backend_llm is not None else []

    def service_endpoint(self, service: ArenaLiveService) -> str:
        return service.base_url

    def is_alive(self, service: ArenaLiveService) -> bool:
        return service.connection_alive()

    def session_ready(self, service: ArenaLiveService) -> bool:
        return service.started

    def delegating(self, service: ArenaLiveService) -> bool:
        return service.delegating()

    def provider_ttfb_label(self) -> str:
        return "none (the Live API reports no TTFB; latency is our timeline's)"
