"""Cascades: `cascade:<stt>+<llm>+<tts>`, a voice agent built of Pipecat's own services.

The session is the pipeline people build: the paced user WAV → STT (`openai-stt`, `deepgram`,
the local `whisper`) → the user aggregator, whose Silero VAD and smart-turn analyzer (Pipecat's
turn detection) decide when the user's turn is over → any text model arena-tui runs (its own
runner builds it: `gpt-4.1-mini`, `claude-haiku-4-5`, `local:<model>`, …) → TTS (`openai-tts`,
`cartesia`, `elevenlabs`, the local `piper` and `kokoro`) → the paced speaker → the assistant
aggregator. Everything else is the audio engine's: our timeline, the end-of-turn
rule, tools, retries, rotation (the history goes in as the new context's messages), and
interruptions (the VAD hears the user over the bot). The run times each stage on our clock
(`stage_timing`: STT final, the LLM's first token, the TTS's first audio played; `Latencies.stt_ms`
/ `llm_ms` / `tts_ms`) and records the STT's transcript beside the turn's own text.

Silero takes 8 or 16 kHz and the run's audio is 24 kHz: `Silero24k` scores each window
resampled to 16 kHz and keeps the VAD's own timing on the run's rate. With `--fake` each part
talks to its own local fake (`runners/fakes/cascade.py`); a local part runs in the process on
weights already on this machine (`local_parts.py`: a run never downloads them).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TYPE_CHECKING

import numpy as np
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADParams
from pipecat.frames.frames import Frame, LLMContextFrame, TranscriptionFrame, TTSTextFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.services.llm_service import LLMService
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from .. import catalog
from ..base import LocalFake, ProviderRunner, RunError, SessionPipeline, SessionSpec, context_messages, get_runner
from ..catalog import Component
from . import local_parts

if TYPE_CHECKING:  # the local fakes load only for --fake runs
    from ..fakes.cascade import CascadeFakes
    from ..fakes.hearing import Hearing

SILERO_RATE = 16000
OPENAI_TTS_VOICE = "alloy"
#: a Cartesia voice (ARENA_TUI_CARTESIA_VOICE names another)
CARTESIA_VOICE = "71a7ad14-091c-4e8e-a314-022ece01c121"
#: an ElevenLabs premade voice every account has, "George" (ARENA_TUI_ELEVENLABS_VOICE names another)
ELEVENLABS_VOICE = "JBFqnCBsd6RMkjVDRZzb"
FAKE_KEY = "cascade-fake-not-a-secret"


class Silero24k(SileroVADAnalyzer):
    """Pipecat's Silero VAD on audio at any multiple of 16 kHz's window: each window is scored
    resampled to 16 kHz; the VAD's start/stop timing and volume stay on the run's own rate."""

    def set_sample_rate(self, sample_rate: int) -> None:
        VADAnalyzer.set_sample_rate(self, sample_rate)  # (Silero's own refuses anything but 8/16 kHz)

    def num_frames_required(self) -> int:
        return int(512 * self.sample_rate / SILERO_RATE)

    def voice_confidence(self, buffer: bytes) -> float:
        x = np.frombuffer(buffer, np.int16).astype(np.float32) / 32768.0
        if x.size == 0:
            return 0.0
        window = np.interp(np.linspace(0, x.size - 1, 512), np.arange(x.size), x).astype(np.float32)
        confidence = float(np.asarray(self._model(window, SILERO_RATE)[0]).reshape(-1)[0])
        self._maybe_reset_model(confidence)
        return confidence


class AskNothing(FrameProcessor):
    """A session opened without a kickoff asks the model nothing: the context frame the engine's
    start sends (to give every session its tools) stops here, once, instead of running the LLM
    on the history, whose reply would land in the next turn."""

    def __init__(self, hold: bool) -> None:
        super().__init__()
        self._hold = hold

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if self._hold and isinstance(frame, LLMContextFrame) and direction is FrameDirection.DOWNSTREAM:
            self._hold = False
            return
        await self.push_frame(frame, direction)


class Spaced(FrameProcessor):
    """A TTS that reports the words it speaks one by one (Cartesia's and ElevenLabs' timestamps)
    leaves the spaces between them to whoever joins them: each such word goes on with its space,
    so the reply's text reads as said, for the run and the context alike."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSTextFrame) and not frame.includes_inter_frame_spaces:
            frame.text = " " + frame.text
            frame.includes_inter_frame_spaces = True
        await self.push_frame(frame, direction)


class CascadeRunner(ProviderRunner[LLMService]):
    name = "cascade"
    mode = "audio"
    stage_timing = True

    def __init__(self) -> None:
        self.text: ProviderRunner | None = None  # the text model's own runner (builds the LLM)
        self.fakes: CascadeFakes | None = None

    # -- the parts

    def parts(self, config: RunSettings) -> tuple[Component, str, Component]:
        try:
            stt, llm, _, tts = catalog.cascade_parts(config.model)
        except ValueError as e:
            raise RunError(str(e)) from None
        return stt, llm, tts

    def text_runner(self, config: RunSettings) -> ProviderRunner:
        if self.text is None:
            self.text = get_runner(self.parts(config)[1])
        return self.text

    def text_config(self, config: RunSettings) -> RunSettings:
        """The run's settings as its text model's runner reads them."""
        return config.model_copy(update={"model": self.parts(config)[1]})

    def resolve_model(self, alias: str) -> str:
        return catalog.find(alias).model_id(alias)

    #: its parts' packages and keys, its text model's, one endpoint for three services, the speed, its input
    checks = ("parts", "text_model", "endpoint", "speed", "input")

    def preflight(self, config: RunSettings, only: Collection[str] | None = None) -> list[str]:
        try:
            self.parts(config)
        except RunError as e:  # a spelling it cannot read: nothing else to check
            return [str(e)]
        return super().preflight(config, only)

    def check_parts(self, config: RunSettings) -> list[str]:
        """The STT's and the TTS's packages and keys (a local part: its weights), and Silero's VAD."""
        stt, _, tts = self.parts(config)
        problems = []
        for part in (stt, tts):
            missing = catalog.requirements(self.who(part), part.packages, part.key_env, install_hint=part.install_hint,
                                           keys=not config.fake)
            problems += missing or (local_parts.problems(part.name, self.who(part)) if part.local else [])
        return problems + catalog.requirements(self.name, ("pipecat.audio.vad.silero",), ())

    def check_text_model(self, config: RunSettings) -> list[str]:
        """The text model's packages and keys, as its own runner checks them."""
        return [f"{self.name}: {p}" for p in self.text_runner(config).preflight(self.text_config(config),
                                                                              only=("packages", "keys"))]

    def check_endpoint(self, config: RunSettings) -> list[str]:
        if not config.base_url:
            return []
        return [f"{self.name}: --base-url names one endpoint and a cascade has three (use --fake, or a --service class "
                "of your own)"]

    # -- the local fakes

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake:
        from ..fakes.cascade import CascadeFakes  # deferred: the local fakes load only for --fake runs
        from ..fakes.hearing import Hearing  # deferred: the local fakes load only for --fake runs

        stt, _, tts = self.parts(config)
        script = self.fake_script(config, benchmark)
        text = self.text_runner(config)
        llm = text.make_fake(self.text_config(config), benchmark)
        assert llm is not None
        pace = self.fake_pace(config)  # each fake answers on the run's clock, timed like its service

        def fake_of(part: Component, **hears: Hearing) -> LocalFake | None:  # a local part has none: it runs as it is
            return catalog.load(part.fake_class)(script, **pace, **hears) if part.fake_class else None

        stt_fake = fake_of(stt, hearing=Hearing(benchmark))  # the STT fake recognises the turn's audio and hears its words
        tts_fake = stt_fake if tts.fake_class and tts.fake_class == stt.fake_class else fake_of(tts)
        self.fakes = CascadeFakes(stt_fake, llm, tts_fake)
        return self.fakes

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        text = self.text_runner(config)
        fakes = self.fakes
        if self.fake is fakes and fakes is not None:  # the text runner talks to its fake
            text.fake, text.base_url = fakes.llm, fakes.llm.base_url

    def endpoint_of(self, part: Component, fake: LocalFake | None) -> str:
        """Where a part connects: its fake (`fake`, when this run's fakes are up), else its service."""
        if fake is not None and self.fakes is not None and self.fake is self.fakes:
            return fake.base_url + ("/tts/websocket" if part.name == "cartesia" else "")
        return part.default_endpoint

    def who(self, part: Component) -> str:
        """How a part is named in a problem line: "cascade stt whisper"."""
        return f"{self.name} {part.kind} {part.name}"

    def key_of(self, part: Component) -> str:
        if self.fakes is not None and self.fake is self.fakes:
            return FAKE_KEY
        return next((os.environ[e] for e in part.key_env if os.environ.get(e)), "")

    # -- sessions

    def build_service(self, spec: SessionSpec) -> LLMService:
        """The cascade's LLM, as its text model's runner builds it (keys, endpoint, client)."""
        cfg = self.text_config(spec.config)
        return self.text_runner(spec.config).build_service(spec.model_copy(update={"config": cfg}))

    def build_stt(self, part: Component) -> FrameProcessor:
        if part.local:
            return local_parts.build(part.name, self.who(part))
        fake = self.fakes.stt if self.fakes is not None else None
        if part.name == "deepgram":
            from pipecat.services.deepgram.stt import DeepgramSTTService  # deferred: an optional extra, imported only by a cascade that uses it

            return DeepgramSTTService(api_key=self.key_of(part), base_url=self.endpoint_of(part, fake) if fake else "")
        from pipecat.services.openai.stt import OpenAISTTService  # deferred: imported only by a cascade that uses it

        return OpenAISTTService(api_key=self.key_of(part), base_url=self.endpoint_of(part, fake))

    def build_tts(self, part: Component) -> FrameProcessor:
        if part.local:
            return local_parts.build(part.name, self.who(part))
        fake = self.fakes.tts if self.fakes is not None else None
        if part.name == "cartesia":
            from pipecat.services.cartesia.tts import CartesiaTTSService  # deferred: imported only by a cascade that uses it

            voice = os.environ.get("ARENA_TUI_CARTESIA_VOICE", CARTESIA_VOICE)
            return CartesiaTTSService(api_key=self.key_of(part), url=self.endpoint_of(part, fake),
                                      settings=CartesiaTTSService.Settings(voice=voice))
        if part.name == "elevenlabs":
            from pipecat.services.elevenlabs.tts import ElevenLabsTTSService  # deferred: imported only by a cascade that uses it

            voice = os.environ.get("ARENA_TUI_ELEVENLABS_VOICE", ELEVENLABS_VOICE)
            return ElevenLabsTTSService(api_key=self.key_of(part), url=self.endpoint_of(part, fake),
                                        settings=ElevenLabsTTSService.Settings(voice=voice))
        from pipecat.services.openai.tts import OpenAITTSService  # deferred: imported only by a cascade that uses it

        return OpenAITTSService(api_key=self.key_of(part), base_url=self.endpoint_of(part, fake),
                                settings=OpenAITTSService.Settings(voice=OPENAI_TTS_VOICE))

    def session_pipeline(self, spec: SessionSpec, service: LLMService, paced_in: FrameProcessor,
                         paced_out: FrameProcessor) -> SessionPipeline:
        stt_part, _, tts_part = self.parts(spec.config)
        stt, tts = self.build_stt(stt_part), self.build_tts(tts_part)
        messages = context_messages(spec.history)
        if spec.kickoff:
            messages.append({"role": "user", "content": spec.kickoff})
        context = LLMContext(messages, self.tools(spec.tools))
        # Pipecat's VAD (Silero, its default 0.2 s stop) and its speech-timeout turn end: the user's
        # turn is over once the VAD has heard silence for the run's VAD silence (800 ms, as the
        # realtime providers' server VAD), deterministic where an ML turn model would guess
        silence_s = spec.config.vad.silence_duration_ms / 1000.0
        stop = SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=max(0.0, silence_s - VADParams().stop_secs))
        vad = VADParams(confidence=spec.config.vad.threshold)  # `--vad-threshold`: its server VAD's, as the realtime providers'
        params = LLMUserAggregatorParams(vad_analyzer=Silero24k(params=vad),
                                         user_turn_strategies=UserTurnStrategies(stop=[stop]))
        pair = LLMContextAggregatorPair(context, user_params=params)
        gate, spaced = AskNothing(hold=spec.kickoff is None), Spaced()
        processors = [paced_in, stt, pair.user(), gate, service, tts, spaced, paced_out, pair.assistant()]
        taps: dict[int, tuple[type, ...]] = {id(stt): (TranscriptionFrame,), id(gate): (LLMContextFrame,),
                                             id(spaced): (TTSTextFrame,)}
        return SessionPipeline(processors=processors, taps=taps)

    def service_endpoint(self, service: LLMService) -> str:
        """Its text model's (the service is that model's runner's)."""
        assert self.text is not None, "a cascade's service is built by its text model's runner"
        return self.text.service_endpoint(service)

    def is_alive(self, service: LLMService) -> bool:
        return True  # the LLM is HTTP; Pipecat's STT/TTS services reconnect their websockets themselves

    def provider_ttfb_label(self) -> str:
        return "LLM TTFB (Pipecat metrics); the stages (STT, LLM, TTS) are on our clock"
