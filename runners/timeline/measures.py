"""A turn's latencies and overlap, from the speech and frames placed on our timeline."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from arena_tui.spine.events import Interval, Latencies

from .intervals import MIN_OVERLAP_MS, overlap_intervals


class TurnMeasures(BaseModel):
    """Latencies and overlap of one turn; negative latencies are kept and named in `negative`."""

    model_config = ConfigDict(frozen=True)

    latencies: Latencies
    overlaps: list[Interval] = Field(default_factory=list)  # user ∩ bot speech, each >= min_overlap_ms
    overlap_ms: float = 0.0
    negative: list[str] = Field(default_factory=list)  # latency fields < 0 (bot before user ended)

    @property
    def barge_in(self) -> bool:
        """The bot became audible before the user stopped speaking."""
        return "voice_to_voice_ms" in self.negative


def measure_turn(
    user_audio: Interval,
    user_speech: list[Interval],
    bot_frames_start_ms: float | None,
    bot_speech: list[Interval],
    provider_ttfb_ms: float | None,
    min_overlap_ms: float = MIN_OVERLAP_MS,
) -> TurnMeasures:
    """Latencies from the timeline; a figure is None when one of its two ends is unknown."""
    user_end = max((s.end_ms for s in user_speech), default=None)
    bot_onset = min((s.start_ms for s in bot_speech), default=None)
    v2v = bot_onset - user_end if bot_onset is not None and user_end is not None else None
    # user speech end (VAD); the WAV's end only when VAD found no speech (trailing silence in a
    # WAV must not make a prompt reply look early)
    speech_end = user_end if user_end is not None else user_audio.end_ms
    pipeline = bot_frames_start_ms - speech_end if bot_frames_start_ms is not None else None
    leading = bot_onset - bot_frames_start_ms if bot_onset is not None and bot_frames_start_ms is not None else None
    lat = Latencies(
        voice_to_voice_ms=v2v,
        pipeline_ttfb_ms=pipeline,
        provider_ttfb_ms=provider_ttfb_ms,
        leading_silence_ms=leading,
    )
    negative = [k for k, v in lat.model_dump().items() if v is not None and v < 0]
    overlaps = overlap_intervals(user_speech, bot_speech, min_overlap_ms)
    return TurnMeasures(
        latencies=lat,
        overlaps=overlaps,
        overlap_ms=sum(o.duration_ms for o in overlaps),
        negative=negative,
    )
