"""A benchmark that travels by value: its data and every turn's WAV bytes, no shared filesystem.

The engine and the simulator read turn audio by path (`Benchmark.audio_path`), so a worker
unpacks a snapshot once into its own private scratch folder and runs from there; nothing is
read from the coordinator's disk. `key` is a content hash, so a worker unpacks each benchmark
once however many of its runs it gets, and Ray puts it into the object store once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from arena_tui.spine.benchmark import Benchmark, Turn


class SnapshotError(Exception):
    """A turn's audio could not be read when the snapshot was made (names benchmark and turn)."""


@dataclass(frozen=True)
class BenchmarkSnapshot:
    key: str  # sha256 of the benchmark JSON and audio
    benchmark_json: str  # Benchmark with root=None and audio_file rewritten to audio/turn_NNN.wav
    audio: dict[int, bytes] = field(repr=False)  # turn_index -> WAV file bytes
    #: the turns' duplex cues' WAVs, by the path they are rewritten to (audio/turn_NNN_cueK.wav)
    cues: dict[str, bytes] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.benchmark_json) + sum(len(b) for b in [*self.audio.values(), *self.cues.values()])

    def materialize(self, folder: Path) -> Benchmark:
        """Write the audio under `folder` (once per key) and return the benchmark rooted there."""
        root = folder / self.key[:16]
        files = {**{_rel(index): data for index, data in self.audio.items()}, **self.cues}
        for rel, data in files.items():
            path = root / rel
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + ".part")
                tmp.write_bytes(data)
                tmp.replace(path)
        return Benchmark.model_validate_json(self.benchmark_json).model_copy(update={"root": root})


def _rel(index: int) -> str:
    return f"audio/turn_{index:03d}.wav"


def snapshot(benchmark: Benchmark, *, missing_ok: bool = False) -> BenchmarkSnapshot:
    """Read every turn's audio now (a missing file is an error here, not in a worker).

    missing_ok: a turn without its WAV travels without it, and is as audio-less in the worker as
    here (the app's runs: its preflight already named the selected turns a run needs audio for)."""
    audio: dict[int, bytes] = {}
    turns = []
    for turn in benchmark.turns:
        path = benchmark.audio_path(turn)
        if path is None or not benchmark.has_audio(turn):
            if missing_ok:
                turns.append(turn.model_copy(update={"audio_file": _rel(turn.turn_index)}))
                continue
            raise SnapshotError(f"{benchmark.name} turn {turn.turn_index}: audio file {path} not found")
        try:
            audio[turn.turn_index] = path.read_bytes()
        except OSError as e:
            raise SnapshotError(f"{benchmark.name} turn {turn.turn_index}: cannot read {path}: {e.strerror}") from None
        turns.append(turn.model_copy(update={"audio_file": _rel(turn.turn_index)}))
    cues: dict[str, bytes] = {}
    turns = [_with_cues(benchmark, t, cues, missing_ok) for t in turns]
    data = benchmark.model_copy(update={"root": None, "turns": turns}).model_dump_json()
    h = hashlib.sha256(data.encode())
    for index in sorted(audio):
        h.update(index.to_bytes(4, "little", signed=True))
        h.update(audio[index])
    for rel in sorted(cues):
        h.update(rel.encode())
        h.update(cues[rel])
    return BenchmarkSnapshot(key=h.hexdigest(), benchmark_json=data, audio=audio, cues=cues)


def _with_cues(benchmark: Benchmark, turn: Turn, cues: dict[str, bytes], missing_ok: bool) -> Turn:
    """The turn with its duplex cues' WAVs read into `cues` and their paths rewritten to match."""
    out = []
    for k, cue in enumerate(turn.duplex):
        rel = f"audio/turn_{turn.turn_index:03d}_cue{k}.wav"
        path = benchmark.cue_path(cue)
        try:
            if path is None:
                raise FileNotFoundError(2, "not found")
            cues[rel] = path.read_bytes()
        except OSError as e:
            if not missing_ok:
                raise SnapshotError(f"{benchmark.name} turn {turn.turn_index}: duplex[{k}] audio file {path}: "
                                    f"{e.strerror}") from None
        out.append(cue.model_copy(update={"audio_file": rel}))
    return turn.model_copy(update={"duplex": out}) if out else turn
