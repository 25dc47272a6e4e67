"""Azure Voice Live through Pipecat's `AzureVoiceLiveLLMService` (`service.py`: our subclass).

The resource is `AZURE_VOICE_LIVE_ENDPOINT` (`https://<resource>.services.ai.azure.com`); Pipecat
dials `wss://<resource>/voice-live/realtime?api-version=2026-07-15&model=<model>` with the key
in an `api-key` header. The session is Voice Live's own (its fields at the session's top level,
not under `audio`): the run's 24 kHz PCM in and out, Azure's semantic turn detection with the
run's silence, Azure speech transcription of the caller (without it the caller's turns never
reach the context), Azure noise suppression, and an Azure voice. Given `session_properties`,
Pipecat replaces its defaults wholesale, so the runner writes the whole session.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pipecat.services.azure.voice_live import events as vl

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import SessionSpec
from ..realtime_family import RealtimeRunner

if TYPE_CHECKING:  # our subclass of Pipecat's service loads when a session is built
    from .service import ArenaVoiceLiveService

ENDPOINT_ENV = "AZURE_VOICE_LIVE_ENDPOINT"
FAKE_KEY = "voice-live-fake-not-a-secret"
VOICE = "en-US-Ava:DragonHDLatestNeural"  # Pipecat's default Azure voice


def service_class() -> type[ArenaVoiceLiveService]:
    from .service import ArenaVoiceLiveService  # deferred: our subclass of Pipecat's service loads when a session is built

    return ArenaVoiceLiveService


def session_properties(config: RunSettings, model: str) -> vl.SessionProperties:
    """The whole session (Pipecat's defaults, the run's turn detection; audio formats are Pipecat's, from the pipeline's rates)."""
    vad = config.vad
    native = "realtime" in model  # a native-audio model speaks with its own voices too, but takes Azure's
    return vl.SessionProperties(
        modalities=["text", "audio"],
        voice=None if model.startswith("azure-realtime") else vl.AzureStandardVoice(name=VOICE),
        turn_detection=None if config.disable_vad else vl.TurnDetection(
            type="azure_semantic_vad", silence_duration_ms=vad.silence_duration_ms, prefix_padding_ms=vad.prefix_padding_ms,
            threshold=vad.threshold),
        input_audio_transcription=vl.InputAudioTranscription(model="gpt-4o-mini-transcribe" if native else "azure-speech"),
        input_audio_noise_reduction=vl.InputAudioNoiseReduction(),
    )


class AzureVoiceLiveRunner(RealtimeRunner["ArenaVoiceLiveService"]):
    default_endpoint = ""  # the user's resource: `AZURE_VOICE_LIVE_ENDPOINT`
    fake_key = FAKE_KEY

    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, else the started fake, else the resource in `AZURE_VOICE_LIVE_ENDPOINT`."""
        return config.base_url or self.base_url or os.environ.get(ENDPOINT_ENV, "")

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        service_class()  # import Pipecat's service now, not inside the first session's clock

    def build_service(self, spec: SessionSpec) -> ArenaVoiceLiveService:
        from .service import voice_live_items  # deferred: our subclass of Pipecat's service loads when a session is built

        cls = service_class()
        settings = cls.Settings(model=spec.model, system_instruction=spec.system_prompt,
                                session_properties=session_properties(spec.config, spec.model))
        return cls(endpoint=self.endpoint(spec.config), settings=settings, replay=voice_live_items(spec.history),
                   **self.session_args(spec))

    def provider_ttfb_label(self) -> str:
        return "Voice Live TTFB (Pipecat metrics, from server speech_stopped)"
