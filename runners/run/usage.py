"""What a service's usage report is as the spine records it (`Usage`): Pipecat's usage metrics
(an LLM's `LLMTokenUsage`, an STT's audio seconds, a TTS's characters) copied as they came, so
`arena_tui.cost` prices what the service said and nothing we guessed. Which processor's reports
are counted (each report once, however many processors it passes) is the session's (`base.py`)."""

from __future__ import annotations

from collections.abc import Callable

from pipecat.frames.frames import Frame, MetricsFrame
from pipecat.metrics.metrics import LLMUsageMetricsData, MetricsData, STTUsageMetricsData, TTSUsageMetricsData
from pipecat.processors.frame_processor import FrameProcessor

from arena_tui.spine.events import Usage

#: the usage reports each kind of processor makes: an LLM's, an STT's, a TTS's
LLM_USAGE = (LLMUsageMetricsData,)
STT_USAGE = (STTUsageMetricsData,)
TTS_USAGE = (TTSUsageMetricsData,)


def usage_of(data: MetricsData) -> Usage | None:
    """The spine's record of one usage report (None: not a usage report, or an empty one)."""
    model = data.model or ""
    if isinstance(data, LLMUsageMetricsData):
        t = data.value
        if not (t.prompt_tokens or t.completion_tokens or t.total_tokens):
            return None
        return Usage(
            service="llm", model=model, prompt_tokens=t.prompt_tokens, completion_tokens=t.completion_tokens,
            total_tokens=t.total_tokens, cache_read_input_tokens=t.cache_read_input_tokens or 0,
            cache_creation_input_tokens=t.cache_creation_input_tokens or 0, reasoning_tokens=t.reasoning_tokens or 0,
            input_audio_tokens=t.input_audio_tokens or 0, output_audio_tokens=t.output_audio_tokens or 0,
            cache_read_input_audio_tokens=t.cache_read_input_audio_tokens or 0,
        )  # fmt: skip
    if isinstance(data, STTUsageMetricsData):
        return Usage(service="stt", model=model, audio_seconds=data.value.audio_seconds) if data.value.audio_seconds else None
    if isinstance(data, TTSUsageMetricsData):
        return Usage(service="tts", model=model, characters=data.value) if data.value else None
    return None


def reports(frame: MetricsFrame, kinds: tuple[type, ...]) -> list[Usage]:
    """The usage reports of `kinds` a metrics frame carries, as the spine records them."""
    return [u for d in frame.data if isinstance(d, kinds) and (u := usage_of(d)) is not None]


def tap_usage(processor: FrameProcessor, kinds: tuple[type, ...], record: Callable[[list[Usage]], None]) -> None:
    """Hand `record` the usage reports of `kinds` that `processor` (a cascade's STT or TTS) pushes:
    only its own kind, since a report passes every processor after the one that made it."""

    def heard(_processor: FrameProcessor, frame: Frame) -> None:
        if isinstance(frame, MetricsFrame) and (found := reports(frame, kinds)):
            record(found)

    processor.add_event_handler("on_after_push_frame", heard)
