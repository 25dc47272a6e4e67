"""A benchmark as data: metadata, turns, tools, system prompt, knowledge base and audio.

Field names follow `turns.jsonl` / `benchmark.json` of the Audio Arena data so that a
row validates as-is; unknown fields are rejected so a typo in a user's own benchmark is
an error naming the field, not a silently ignored key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CORE_DIMENSIONS = ["kb_grounding", "instruction_following", "tool_use_correct"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpectedCall(Strict):
    """One function call a turn expects."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    flexible_args: list[str] = Field(default_factory=list)  # present, non-empty, not compared

    @field_validator("flexible_args", mode="before")
    @classmethod
    def _none_is_empty(cls, v: object) -> object:
        return [] if v is None else v


#: what a user says during the bot's reply, and what the bot should do: yield to an interruption,
#: talk on through a backchannel ("mm-hmm"), not answer side speech (said to someone else)
DuplexKind = Literal["interruption", "backchannel", "side_speech"]
DUPLEX_KINDS: tuple[str, ...] = ("interruption", "backchannel", "side_speech")


class DuplexCue(Strict):
    """User speech scripted into the bot's reply: its WAV starts `at_ms` after the bot's first
    audible speech of the reply (as the engine's timeline hears the played bot audio)."""

    kind: DuplexKind
    at_ms: float = Field(strict=True)
    audio_file: str
    text: str


class Turn(Strict):
    turn_index: int = Field(strict=True)  # "3" or true is a typo, not turn 3 or 1
    input: str
    golden_text: str
    required_function_call: ExpectedCall | list[ExpectedCall] | None = None
    function_call_response: Any = None
    categories: list[str] = Field(default_factory=list)
    audio_file: str | None = None
    dimensions: list[str] = Field(default_factory=lambda: list(CORE_DIMENSIONS))
    flexible_args: list[str] = Field(default_factory=list)
    tool_use_guidance: str | None = None
    subcategory: str | None = None
    duplex: list[DuplexCue] = Field(default_factory=list)  # user speech during the reply, by at_ms

    @field_validator("flexible_args", mode="before")
    @classmethod
    def _none_is_empty(cls, v: object) -> object:
        return [] if v is None else v

    @field_validator("turn_index")
    @classmethod
    def _not_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError("must be 0 or more (turn -1 is the greeting handshake, not a benchmark turn)")
        return v

    @property
    def expected_calls(self) -> list[ExpectedCall]:
        """Expected calls as a list (empty when none), turn-level flexible_args merged in."""
        rfc = self.required_function_call
        calls = [] if rfc is None else (rfc if isinstance(rfc, list) else [rfc])
        if not self.flexible_args:
            return list(calls)
        return [
            c.model_copy(update={"flexible_args": sorted(set(c.flexible_args) | set(self.flexible_args))})
            for c in calls
        ]

    @property
    def expected_responses(self) -> list[Any]:
        """Scripted responses aligned with `expected_calls` (None where not scripted)."""
        calls = self.expected_calls
        resp = self.function_call_response
        if isinstance(self.required_function_call, list):
            items = resp if isinstance(resp, list) else [resp] * len(calls)
        else:
            items = [resp]
        return [items[i] if i < len(items) else None for i in range(len(calls))]


class Tool(Strict):
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class BenchmarkMeta(BaseModel):
    """`benchmark.json`. Extra keys are kept (future dataset fields must not break loading)."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str = ""
    hf_repo: str | None = None
    turn_count: int | None = None
    core_dimensions: list[str] = Field(default_factory=lambda: list(CORE_DIMENSIONS))
    category_dimensions: dict[str, list[str]] = Field(default_factory=dict)


class Benchmark(BaseModel):
    meta: BenchmarkMeta
    turns: list[Turn]
    tools: list[Tool]
    system_prompt: str
    knowledge_base: str = ""
    root: Path | None = None  # folder the benchmark was loaded from
    source: str = "local"  # local | huggingface | builtin | imported | stored (the snapshot a run recorded)
    audio_source: dict[int, str] = Field(default_factory=dict)  # turn -> "recorded" | "synth:<backend>"

    @property
    def name(self) -> str:
        return self.meta.name

    def turn(self, index: int) -> Turn:
        found = self.find_turn(index)
        if found is None:
            raise KeyError(f"{self.name}: no turn {index}")
        return found

    def find_turn(self, index: int) -> Turn | None:
        return next((t for t in self.turns if t.turn_index == index), None)

    def audio_path(self, turn: Turn) -> Path | None:
        if self.root is None:
            return None
        rel = turn.audio_file or f"audio/turn_{turn.turn_index:03d}.wav"
        return self.root / rel

    def cue_path(self, cue: DuplexCue) -> Path | None:
        """Where a duplex cue's WAV is (relative to the folder, or absolute once resolved)."""
        if Path(cue.audio_file).is_absolute():
            return Path(cue.audio_file)
        return None if self.root is None else self.root / cue.audio_file

    def missing_cues(self, turn: Turn) -> list[int]:
        """The turn's duplex cues whose WAV is not there (by their place in `turn.duplex`)."""
        return [i for i, cue in enumerate(turn.duplex) if (p := self.cue_path(cue)) is None or not p.is_file()]

    def has_audio(self, turn: Turn) -> bool:
        """Whether the turn's WAV is there: a file at `audio_path` (the one test of present audio)."""
        p = self.audio_path(turn)
        return p is not None and p.is_file()

    def audio_present(self) -> int:
        """How many turns have their WAV (`has_audio`)."""
        return sum(1 for t in self.turns if self.has_audio(t))

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def snapshot(self) -> dict[str, Any]:
        """What judging and exporting a run need (no folder, no audio): recorded with each run,
        so a stored run is judged against the benchmark it ran, wherever the database goes."""
        return self.model_dump(mode="json", include=SNAPSHOT_FIELDS)

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> Benchmark:
        """A benchmark back from `snapshot()` (no folder: its audio is the run's recorded audio)."""
        return cls.model_validate({**{k: v for k, v in data.items() if k in SNAPSHOT_FIELDS}, "source": "stored"})


SNAPSHOT_FIELDS = {"meta", "turns", "tools", "system_prompt", "knowledge_base"}
