"""Make user audio for turns that have none: `audio/turn_NNN.wav`, 24 kHz mono PCM16.

Five of the six shared benchmarks ship text only, and users write their own. Generated audio
is marked as such in `audio/sources.json` (turn -> "synth:<backend>") so a score is never
mistaken for one measured on the recorded TTS. When the benchmark folder is read-only (the
shared copy, the Hugging Face cache) the WAVs go to an overlay folder the loader also reads.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Callable, Protocol

import numpy as np
from pydantic import BaseModel, Field

from arena_tui.spine.audio import TARGET_RATE, AudioError, parse_wav, resample, to_mono, float_to_pcm16, write_wav

from .overlay import SOURCES_FILE, audio_overlay_dir
from arena_tui.spine.benchmark import Benchmark, Turn


class SynthError(Exception):
    """A synthesis that cannot go ahead (missing tool or key, backend failure); one line for the user."""


class Backend(Protocol):
    name: str  # recorded in sources.json as "synth:<name>"

    def speak(self, text: str) -> np.ndarray:
        """Mono int16 PCM at 24 kHz."""
        ...


class EspeakBackend:
    """Offline: the espeak-ng CLI, resampled from its native 22.05 kHz to 24 kHz."""

    name = "espeak"

    def __init__(self, voice: str = "en-us", words_per_minute: int = 160, binary: str | None = None) -> None:
        self.voice = voice
        self.wpm = words_per_minute
        found = binary or shutil.which("espeak-ng") or shutil.which("espeak")
        if found is None:
            raise SynthError("espeak-ng is not installed (Debian/Ubuntu: apt-get install -y espeak-ng)")
        self.binary = found

    def speak(self, text: str) -> np.ndarray:
        try:
            proc = subprocess.run([self.binary, "--stdout", "-v", self.voice, "-s", str(self.wpm), "--", text],
                                  capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SynthError(f"espeak-ng failed: {e}") from None
        if proc.returncode != 0 or not proc.stdout:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise SynthError(f"espeak-ng exited with {proc.returncode}: {err[-1] if err else 'no output'}")
        try:
            frames, fmt = parse_wav(proc.stdout, "espeak-ng output")
        except AudioError as e:
            raise SynthError(f"espeak-ng produced unreadable audio: {e}") from None
        mono = to_mono(frames)
        if fmt.sample_rate != TARGET_RATE:
            mono = resample(mono, fmt.sample_rate, TARGET_RATE)
        return float_to_pcm16(mono)


class OpenAIBackend:
    """OpenAI TTS (tts-1, alloy: what the shared recordings were made with), raw 24 kHz PCM."""

    name = "openai"

    def __init__(self, model: str = "tts-1", voice: str = "alloy", base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise SynthError("OPENAI_API_KEY is not set (needed for --backend openai; --backend espeak works offline)")
        import openai  # deferred: openai loads only for the OpenAI TTS backend

        self.model, self.voice = model, voice
        self._client = openai.OpenAI(api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                                     timeout=timeout, max_retries=2)

    def speak(self, text: str) -> np.ndarray:
        import openai  # deferred: openai loads only for the OpenAI TTS backend

        try:
            resp = self._client.audio.speech.create(model=self.model, voice=self.voice, input=text,
                                                    response_format="pcm")
            data = resp.read()
        except openai.APIStatusError as e:
            raise SynthError(f"OpenAI TTS refused ({e.status_code}): {_short(e.message)}") from None
        except openai.APIError as e:
            raise SynthError(f"OpenAI TTS failed: {_short(str(e))}") from None
        if len(data) < 2:
            raise SynthError("OpenAI TTS returned no audio")
        return np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").copy()  # pcm = 24 kHz s16le mono


def _short(msg: str) -> str:
    return msg.splitlines()[0][:200] if msg else ""


BACKENDS: dict[str, Callable[..., Backend]] = {"espeak": EspeakBackend, "openai": OpenAIBackend}


def make_backend(name: str, **options: object) -> Backend:
    try:
        factory = BACKENDS[name]
    except KeyError:
        raise SynthError(f"unknown backend '{name}' (choose from {', '.join(BACKENDS)})") from None
    return factory(**{k: v for k, v in options.items() if v is not None})


class SynthReport(BaseModel):
    out_dir: Path
    written: list[int] = Field(default_factory=list)
    skipped: list[int] = Field(default_factory=list)  # already had audio
    seconds: dict[int, float] = Field(default_factory=dict)


def _writable(folder: Path) -> bool:
    """Judged by permission bits, not os.access: as root everything is "accessible", and a folder
    marked read-only (the shared copy) must stay untouched. The HF cache is never written."""
    if "snapshots" in folder.resolve().parts:
        return False
    for target in (folder, folder / "audio"):
        if target.exists() and not (target.stat().st_mode & stat.S_IWUSR and os.access(target, os.W_OK)):
            return False
    return True


def _rel_audio(turn: Turn) -> str:
    rel = turn.audio_file or f"audio/turn_{turn.turn_index:03d}.wav"
    return rel if not os.path.isabs(rel) else f"audio/turn_{turn.turn_index:03d}.wav"


def _update_sources(out_dir: Path, updates: dict[int, str]) -> None:
    path = out_dir / SOURCES_FILE
    current: dict[str, str] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text())
            current = loaded if isinstance(loaded, dict) else {}
        except json.JSONDecodeError:
            current = {}
    current.update({str(k): v for k, v in updates.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(dict(sorted(current.items(), key=lambda kv: int(kv[0]))), indent=1) + "\n")
    os.replace(tmp, path)


def synthesize_benchmark(bench: Benchmark, backend: Backend, *, out_dir: str | os.PathLike[str] | None = None,
                         turns: list[int] | None = None, overwrite: bool = False,
                         progress: Callable[[int, int, Turn], None] | None = None) -> SynthReport:
    """Write WAVs for the turns lacking audio (all selected turns with `overwrite`).

    Each WAV is written and recorded in sources.json as soon as it is made, so an interrupted
    or failed run keeps what it already produced.
    """
    if out_dir is None:
        out_dir = bench.root if bench.root is not None and _writable(bench.root) else audio_overlay_dir(bench.name)
    out = Path(out_dir)
    selected = [t for t in bench.turns if turns is None or t.turn_index in turns]
    if turns is not None:
        unknown = sorted(set(turns) - {t.turn_index for t in bench.turns})
        if unknown:
            raise SynthError(f"{bench.name} has no turn {', '.join(map(str, unknown))}")
    report = SynthReport(out_dir=out)
    todo = []
    for t in selected:
        target = out / _rel_audio(t)
        have = bench.has_audio(t) or target.is_file()
        if have and not overwrite:
            report.skipped.append(t.turn_index)
        else:
            todo.append(t)
    for n, t in enumerate(todo, 1):
        if progress is not None:
            progress(n, len(todo), t)
        try:
            pcm = backend.speak(t.input)
        except SynthError as e:
            raise SynthError(f"{bench.name} turn {t.turn_index}: {e}") from None
        write_wav(out / _rel_audio(t), pcm, TARGET_RATE, 1)
        _update_sources(out, {t.turn_index: f"synth:{backend.name}"})
        report.written.append(t.turn_index)
        report.seconds[t.turn_index] = round(len(pcm) / TARGET_RATE, 3)
    for t in selected:
        _synthesize_cues(bench, t, backend, out, overwrite)
    return report


def _synthesize_cues(bench: Benchmark, turn: Turn, backend: Backend, out: Path, overwrite: bool) -> None:
    """The turn's duplex cues (what the user says during the reply) lacking a WAV, from their text."""
    for i, cue in enumerate(turn.duplex):
        target = out / cue.audio_file
        if os.path.isabs(cue.audio_file) or (not overwrite and (i not in bench.missing_cues(turn) or target.is_file())):
            continue
        try:
            pcm = backend.speak(cue.text)
        except SynthError as e:
            raise SynthError(f"{bench.name} turn {turn.turn_index} duplex[{i}]: {e}") from None
        write_wav(target, pcm, TARGET_RATE, 1)
