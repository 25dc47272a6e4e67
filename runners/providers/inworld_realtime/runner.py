"""Inworld Realtime through Pipecat's `InworldRealtimeLLMService` (`service.py`: our subclass).

Pipecat dials `wss://api.inworld.ai/api/v1/realtime/session?key=<a session key>&protocol=realtime`
with the API key as `Authorization: Basic <key>` (server-side auth; `Bearer` is for a client's
JWT). The session: the alias's LLM inside Inworld's cascade, its STT and TTS models and voice
(Pipecat's defaults), 24 kHz PCM both ways (Pipecat's, from the pipeline's rates), semantic
turn detection that creates the response itself (or none: `--disable-vad`, our commit), and
`providerData.auto_tool_response: false` (Pipecat's: the client answers every tool call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipecat.services.inworld.realtime import events as iw

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import SessionSpec
from ..realtime_family import RealtimeRunner

if TYPE_CHECKING:  # our subclass of Pipecat's service loads when a session is built
    from .service import ArenaInworldService

DEFAULT_BASE_URL = "wss://api.inworld.ai/api/v1/realtime/session"
FAKE_KEY = "inworld-fake-not-a-secret"
VOICE, TTS_MODEL, STT_MODEL = "Clive", "inworld-tts-2", "inworld/inworld-stt-1"  # Pipecat's defaults


def service_class() -> type[ArenaInworldService]:
    from .service import ArenaInworldService  # deferred: our subclass of Pipecat's service loads when a session is built

    return ArenaInworldService


def session_properties(config: RunSettings, model: str) -> iw.SessionProperties:
    """The whole session (given `session_properties`, Pipecat replaces its defaults wholesale)."""
    return iw.SessionProperties(
        model=model,
        output_modalities=["audio", "text"],
        audio=iw.AudioConfiguration(
            input=iw.AudioInput(
                format=iw.PCMAudioFormat(rate=24000),
                transcription=iw.InputTranscription(model=STT_MODEL),
                turn_detection=None if config.disable_vad else iw.TurnDetection(
                    type="semantic_vad", eagerness="low", create_response=True, interrupt_response=True),
            ),
            output=iw.AudioOutput(format=iw.PCMAudioFormat(rate=24000), model=TTS_MODEL, voice=VOICE),
        ),
    )


class InworldRealtimeRunner(RealtimeRunner["ArenaInworldService"]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = FAKE_KEY

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        service_class()  # import Pipecat's service now, not inside the first session's clock

    def build_service(self, spec: SessionSpec) -> ArenaInworldService:
        from .service import inworld_items  # deferred: our subclass of Pipecat's service loads when a session is built

        cls = service_class()
        settings = cls.Settings(model=spec.model, system_instruction=spec.system_prompt,
                                session_properties=session_properties(spec.config, spec.model))
        return cls(base_url=self.endpoint(spec.config), settings=settings, replay=inworld_items(spec.history),
                   **self.session_args(spec))

    def provider_ttfb_label(self) -> str:
        return "Inworld TTFB (Pipecat metrics, from server speech_stopped)"
