"""The local cascade parts (`whisper`, `piper`, `kokoro`: the `[local]` extra): their weights and
their Pipecat services.

Pipecat's local services download a missing model when they are built; a run must never do
that behind the user's back. So the preflight names what is missing and the command that
fetches it (`arena-tui weights --fetch PART`, the only way arena-tui downloads a model), and the
services are built from weights already on this machine: Whisper from its folder's path, never
from a name that could be looked up online; Piper and Kokoro only once their files are there.
The weights live where Pipecat and faster-whisper keep them (the Hugging Face cache for Whisper,
Pipecat's cache folders for Piper and Kokoro), so weights fetched before are found. Nothing of
the extra is imported until a part is checked, fetched or built.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path
from typing import Any

from arena_tui.spine.audio import resample

from ..base import RunError

WHISPER_ENV, WHISPER_MODEL = "ARENA_TUI_WHISPER_MODEL", "small.en"  # a faster-whisper size or a CTranslate2 repo id
PIPER_ENV, PIPER_VOICE = "ARENA_TUI_PIPER_VOICE", "en_US-lessac-medium"
KOKORO_ENV, KOKORO_VOICE = "ARENA_TUI_KOKORO_VOICE", "af_heart"
WHISPER_RATE = 16000  # what Whisper takes every buffer to be


def setting(part: str) -> str:
    """The model or voice a part uses (its environment variable, else the default)."""
    env, default = {"whisper": (WHISPER_ENV, WHISPER_MODEL), "piper": (PIPER_ENV, PIPER_VOICE),
                    "kokoro": (KOKORO_ENV, KOKORO_VOICE)}[part]
    return os.environ.get(env) or default


def describe(part: str) -> str:
    """What a part's weights are, e.g. "Whisper model 'small.en' (ARENA_TUI_WHISPER_MODEL)"."""
    return {"whisper": f"Whisper model {setting(part)!r} ({WHISPER_ENV})",
            "piper": f"Piper voice {setting(part)!r} ({PIPER_ENV})",
            "kokoro": f"Kokoro v1.0 model and voices file (voice {setting(part)!r}, {KOKORO_ENV})"}[part]


def fetch_command(part: str) -> str:
    return f"arena-tui weights --fetch {part}"


def _files(part: str) -> list[Path]:
    """Piper's and Kokoro's weight files, where Pipecat's services look for them."""
    if part == "piper":
        from pipecat.services.piper.tts import PIPER_CACHE_DIR  # deferred: the [local] extra

        return [PIPER_CACHE_DIR / f"{setting(part)}.onnx", PIPER_CACHE_DIR / f"{setting(part)}.onnx.json"]
    from pipecat.services.kokoro.tts import KOKORO_CACHE_DIR  # deferred: the [local] extra

    return [KOKORO_CACHE_DIR / "kokoro-v1.0.onnx", KOKORO_CACHE_DIR / "voices-v1.0.bin"]


def locate(part: str) -> Path | None:
    """The folder holding a part's weights on this machine; None when they are not all here.
    ValueError for a Whisper model faster-whisper does not know."""
    if part == "whisper":
        from faster_whisper.utils import download_model  # deferred: the [local] extra

        try:
            folder = Path(download_model(setting(part), local_files_only=True))
        except OSError:  # not in the Hugging Face cache (huggingface_hub's LocalEntryNotFoundError)
            return None
        return folder if (folder / "model.bin").is_file() else None
    files = _files(part)
    return files[0].parent if all(f.is_file() and f.stat().st_size > 0 for f in files) else None


def problems(part: str, who: str) -> list[str]:
    """One line when a part's weights are not on this machine, naming the command that fetches them."""
    try:
        if locate(part) is not None:
            return []
    except ValueError as e:
        return [f"{who}: {WHISPER_ENV}: {e}"]
    return [f"{who}: no {describe(part)} on this machine (fetch it: {fetch_command(part)})"]


def fetch(part: str) -> Path:
    """Download a part's weights (asked for by the user: `arena-tui weights --fetch PART`)."""
    if part == "whisper":
        from faster_whisper.utils import download_model  # deferred: the [local] extra

        download_model(setting(part))
    elif part == "piper":
        from piper.download_voices import download_voice  # deferred: the [local] extra

        folder = _files(part)[0].parent
        folder.mkdir(parents=True, exist_ok=True)
        download_voice(setting(part), folder)
    else:
        from pipecat.services.kokoro.tts import KOKORO_MODEL_URL, KOKORO_VOICES_URL  # deferred: the [local] extra

        for url, dest in zip((KOKORO_MODEL_URL, KOKORO_VOICES_URL), _files(part), strict=True):
            if not dest.is_file():
                _download(url, dest)
    found = locate(part)
    if found is None:
        raise RuntimeError(f"the {describe(part)} is still incomplete after the download")
    return found


def _download(url: str, dest: Path) -> None:
    """`url` to `dest` through a partial file, so an interrupted download is never taken as the weights."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    with urllib.request.urlopen(url, timeout=60) as response, part.open("wb") as out:
        while chunk := response.read(1 << 20):
            out.write(chunk)
    part.replace(dest)


# -- the services, from the weights on this machine only


def build(part: str, who: str) -> Any:
    """A local part's Pipecat service; RunError when its weights went missing since the preflight
    (Pipecat would download them)."""
    folder = locate(part)
    if folder is None:
        raise RunError(problems(part, who)[0])
    if part == "whisper":
        return whisper_service(folder)
    if part == "piper":
        from pipecat.services.piper.tts import PiperTTSService  # deferred: the [local] extra

        return PiperTTSService(download_dir=folder, settings=PiperTTSService.Settings(voice=setting(part)))
    from pipecat.services.kokoro.tts import KokoroTTSService  # deferred: the [local] extra

    model, voices = _files(part)
    return KokoroTTSService(model_path=str(model), voices_path=str(voices),
                            settings=KokoroTTSService.Settings(voice=setting(part)))


def whisper_service(folder: Path) -> Any:
    """Pipecat's `WhisperSTTService` on the model in `folder`, fed 16 kHz: Pipecat's segmented STT
    hands each segment over at the run's rate (24 kHz) and Whisper reads any buffer as 16 kHz."""
    from pipecat.services.whisper.stt import WhisperSTTService  # deferred: the [local] extra

    class Whisper16k(WhisperSTTService):
        async def run_stt(self, audio: bytes) -> Any:
            if self.sample_rate != WHISPER_RATE:
                audio = resample(audio, self.sample_rate, WHISPER_RATE).astype("<i2").tobytes()
            async for frame in super().run_stt(audio):
                yield frame

    return Whisper16k(settings=WhisperSTTService.Settings(model=str(folder)))
