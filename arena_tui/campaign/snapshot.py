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

from arena_tui.spine.benchmark import Benchmark


class SnapshotError(Exception):
    """A turn's audio could not be read when the snapshot was made (names benchmark and turn)."""


@dataclass(frozen=True)
class BenchmarkSnapshot:
    key: str  # sha256 of the benchmark JSON and audio
    benchmark_json: str  # Benchmark with root=None and audio_file rewritten to audio/turn_NNN.wav
    audio: dict[int, bytes] = field(repr=False)  # turn_index -> WAV file bytes

    @property
    def size(self) -> int:
        return len(self.benchmark_json) + sum(len(b) for b in self.audio.values())

    def materialize(self, folder: Path) -> Benchmark:
        """Write the audio under `folder` (once per key) and return the benchmark rooted there."""
        root = folder / self.key[:16]
        for index, data in self.audio.items():
            path = root / _rel(index)
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
    data = benchmark.model_copy(update={"root": None, "turns": turns}).model_dump_json()
    h = hashlib.sha256(data.encode())
    for index in sorted(audio):
        h.update(index.to_bytes(4, "little", signed=True))
        h.update(audio[index])
    return BenchmarkSnapshot(key=h.hexdigest(), benchmark_json=data, audio=audio)
