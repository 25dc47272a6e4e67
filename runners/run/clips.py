"""The benchmark's audio as the model hears it: each turn's WAV and each duplex cue's, read at the
run's rate and played under the run's acoustic condition (`spine.conditions.heard`, with its seed),
made once per run; where its speech is, from the CLEAN clip (found once per process), so every
latency marks the same moments under any condition. An unreadable or missing clip is a `RunError`
naming the benchmark and the turn, before the run starts (`AudioRun.check`)."""

from __future__ import annotations

from pathlib import Path

from arena_tui.spine import audio
from arena_tui.spine.benchmark import Benchmark, Turn
from arena_tui.spine.conditions import ConditionError, babble_voices, heard
from arena_tui.spine.events import Interval
from arena_tui.spine.settings import RunSettings

from ..base import RunError
from ..timeline.user_speech import clip_speech


class Clips:
    """The run's clips, by turn (and cue), as played and as spoken."""

    def __init__(self, benchmark: Benchmark, config: RunSettings) -> None:
        self.benchmark, self.config = benchmark, config
        self.rate = config.sample_rate
        self.condition = config.condition
        self._audio_cache: dict[int, bytes] = {}
        self._cue_cache: dict[tuple[int, int], bytes] = {}

    def user_audio(self, turn: Turn) -> bytes:
        """The turn's WAV as the model hears it (`spine.conditions.heard`: the run's condition and seed)."""
        if turn.turn_index not in self._audio_cache:
            self._audio_cache[turn.turn_index] = self._heard(turn, self.clean_audio(turn))
        return self._audio_cache[turn.turn_index]

    def clean_audio(self, turn: Turn) -> bytes:
        path = self.benchmark.audio_path(turn)
        if path is None or not path.exists():
            raise RunError(f"{self.benchmark.name} turn {turn.turn_index}: audio file {path} not found")
        return self._load(path, turn)

    def user_speech(self, turn: Turn) -> list[Interval]:
        """The speech in the turn's clean WAV, within it (found once per process)."""
        return list(clip_speech(self.clean_audio(turn), self.rate, self.config.vad_method))

    def cue_audio(self, turn: Turn, index: int) -> bytes:
        """A duplex cue's WAV at the run's rate as the model hears it (checked with the turn's before the run starts)."""
        key = (turn.turn_index, index)
        if key not in self._cue_cache:
            self._cue_cache[key] = self._heard(turn, self.clean_cue(turn, index), part=f"cue{index}")
        return self._cue_cache[key]

    def clean_cue(self, turn: Turn, index: int) -> bytes:
        path = self.benchmark.cue_path(turn.duplex[index])
        if path is None or not path.is_file():
            raise RunError(f"{self.benchmark.name} turn {turn.turn_index}: duplex[{index}] audio file {path} not found")
        return self._load(path, turn)

    def cue_speech(self, turn: Turn, index: int) -> list[Interval]:
        return list(clip_speech(self.clean_cue(turn, index), self.rate, self.config.vad_method))

    def _load(self, path: Path, turn: Turn) -> bytes:
        try:
            return audio.load_pcm16_bytes(path, self.rate, benchmark=self.benchmark.name, turn=turn.turn_index)
        except audio.AudioError as e:
            raise RunError(str(e)) from None

    def _heard(self, turn: Turn, clean: bytes, part: str = "") -> bytes:
        try:
            return heard(clean, self.rate, self.condition, self.config.seed, turn.turn_index, part=part,
                         babble=lambda: babble_voices(self.benchmark, turn.turn_index, self.rate))
        except (ConditionError, audio.AudioError) as e:
            raise RunError(f"{self.benchmark.name} turn {turn.turn_index}: {e}") from None
