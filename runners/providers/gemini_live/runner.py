"""Gemini Live through Pipecat's `GeminiLiveLLMService`, and its local protocol fake (`--fake`).

What the stock service needs for a benchmark is `ArenaGeminiLiveService` (`service.py`,
which says what and why), loaded when a session is built: without google-genai this runner
still preflights, naming the missing package. The runner builds it per session (server VAD off,
the engine's speech bounds as Gemini's activity windows; tools given in `setup`; the history as
its context) and asks Gemini before 3.x to continue after a silently seeded history.
"""

from __future__ import annotations

import re
import ssl
from typing import TYPE_CHECKING, Any

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import ProviderRunner, SessionSpec, context_messages
from ..effort import google_thinking

if TYPE_CHECKING:  # Pipecat's Gemini service and google-genai load when a session is built
    from .service import ArenaGeminiLiveService, GeminiAccess

FAKE_KEY = "fake-key-not-a-secret"
TOOL_NUDGE_S = 2.5  # wall seconds of silence after a tool result before the nudge
TOOL_GIVE_UP_S = 10.0  # further wall seconds before the reply is closed without an answer


def gemini_major(model: str) -> int | None:
    """The major version in a Gemini model id (`…gemini-2.5-flash…` → 2), as Pipecat reads it."""
    match = re.search(r"gemini(?:-[a-z]+)*-(\d+)", model)
    return int(match.group(1)) if match else None


def service_class() -> type[ArenaGeminiLiveService]:
    """`ArenaGeminiLiveService` (`service.py`), imported on first use so a missing
    google-genai is a preflight problem and not an import error for every runner."""
    from .service import ArenaGeminiLiveService  # deferred: Pipecat's Gemini service and google-genai load when a session is built, so without them the runner still preflights (naming the missing package)

    return ArenaGeminiLiveService


class GeminiRunner[S: ArenaGeminiLiveService](ProviderRunner[S]):
    """Gemini Live's sessions on the service `service_type` names: the Gemini API's
    (`GeminiLiveRunner`) or Vertex AI's (`gemini_vertex`)."""

    #: google-genai's own default host (no `HttpOptions` is given for it)
    default_endpoint = "https://generativelanguage.googleapis.com"
    fake_key = FAKE_KEY
    turn_frames = True  # server VAD off: the engine's speech bounds are Gemini's activity windows

    def __init__(self, *, tool_nudge_s: float = TOOL_NUDGE_S, tool_give_up_s: float = TOOL_GIVE_UP_S) -> None:
        self.tool_nudge_s = tool_nudge_s
        self.tool_give_up_s = tool_give_up_s
        self._ssl: ssl.SSLContext | None = None  # per run: the fake's client TLS context
        self._sessions = 0

    # -- configuration

    def tools(self, tools: list) -> Any:
        """None for the context: Gemini takes tools in `setup`, and a context that brings tools
        makes Pipecat reconnect right after connecting. They are given to the service instead."""
        from pipecat.utils.types import NOT_GIVEN  # deferred: Pipecat's Gemini service and google-genai load when a session is built, so without them the runner still preflights (naming the missing package)

        return NOT_GIVEN

    # -- per run

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        self._sessions = 0
        self.service_type()  # import Pipecat/google-genai now, not inside the first session's clock
        self._ssl = None
        if self.fake is not None:
            from .fake import GeminiLiveFake  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

            assert isinstance(self.fake, GeminiLiveFake) and self.fake.tls is not None
            self._ssl = self.fake.tls.client  # trusts only the fake's self-signed certificate

    # -- per session

    def build_service(self, spec: SessionSpec) -> S:
        from google.genai.types import HttpOptions  # deferred: Pipecat's Gemini service and google-genai load when a session is built, so without them the runner still preflights (naming the missing package)
        from pipecat.services.google.gemini_live.llm import (  # deferred: Pipecat's Gemini service and google-genai load when a session is built, so without them the runner still preflights (naming the missing package)
            ContextWindowCompressionParams,
            GeminiLiveLLMService,
            GeminiVADParams,
        )
        from pipecat.utils.types import NOT_GIVEN  # deferred: as above

        self._sessions += 1
        http_options = None
        base_url = spec.config.base_url or self.base_url  # None: google-genai's own default host
        if base_url:
            http_options = HttpOptions(
                base_url=base_url, async_client_args={"ssl": self._ssl} if self._ssl is not None else None
            )
        service = self.service_type()(
            **self.access(spec),
            system_instruction=spec.system_prompt,
            tools=ProviderRunner.tools(self, spec.tools),
            replay=context_messages(spec.history),
            inference_on_context_initialization=spec.kickoff is not None,  # None: seeded, nothing asked
            tool_nudge_s=self.tool_nudge_s,
            tool_give_up_s=self.tool_give_up_s,
            http_options=http_options,
            publish=spec.publish,
            settings=GeminiLiveLLMService.Settings(
                model=spec.model,
                vad=GeminiVADParams(disabled=True),
                # lifts the 15-minute audio-session limit; only trims past ~80 % of the window
                context_window_compression=ContextWindowCompressionParams(enabled=True),
                thinking=google_thinking(spec.config) or NOT_GIVEN,  # `--effort`
            ),
        )
        service.session_number = self._sessions
        return service

    def service_type(self) -> type[S]:
        """The service class a session gets."""
        raise NotImplementedError

    def access(self, spec: SessionSpec) -> GeminiAccess:
        """How a session's service authenticates: the Gemini API's key (Vertex's runner: its credentials)."""
        return {"api_key": self.api_key(spec.config)}

    def service_endpoint(self, service: S) -> str:
        options = service._http_options  # (Pipecat's: google-genai's client is opened with them)
        return (options.base_url if options is not None else None) or self.default_endpoint

    def is_alive(self, service: S) -> bool:
        return service.connection_alive()

    def session_ready(self, service: S) -> bool:
        return service.ready_for_input

    def history_needs_reply(self, config: RunSettings) -> bool:
        """Gemini before 3.x ignores a silently seeded history when the user's audio comes
        (Pipecat's `_create_initial_response` notes; its reconnect forces a reply there too)."""
        major = gemini_major(self.resolve_model(config.model))
        return major is None or major < 3


class GeminiLiveRunner(GeminiRunner["ArenaGeminiLiveService"]):
    """Gemini Live through the Gemini API (its key)."""

    def service_type(self) -> type[ArenaGeminiLiveService]:
        return service_class()
