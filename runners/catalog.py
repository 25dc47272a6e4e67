"""Every provider as plain data: what choosing a model needs (aliases, provider, mode, model
id, keys, packages, capabilities, the runner and its fake) without importing a provider's runner,
and so without Pipecat: `arena-tui models`, `--help` and `known_models()` read this module only.

The entries are the provider folders' own: `runners/providers/<name>/entry.py` declares its
`PROVIDERS` (plain data, `runners/provider_entry.py`'s types, nothing else imported), and this
module reads every folder that has one (`FOLDERS`), by name, as it reads a runner or a fake by its
"module:Class" path (`load`): data naming code above it, never an import of it. Each entry mirrors its class's
declared attributes (`runners.base.ProviderRunner`); tests/test_provider_catalog.py checks that
they are equal and that listing here says what the runner's own preflight says. The rules both
use (the model id of an alias, the packages and keys a run needs) are `runners/provider_entry.py`'s:
the runner's methods call them too.

Adding a provider: one folder, `runners/providers/<name>/` (docs/providers.md, "Adding a provider").
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .provider_entry import TEXT as TEXT, Capabilities as Capabilities, Effort as Effort, Mode as Mode
from .provider_entry import Provider, installed as installed, model_id as model_id, requirements as requirements

#: where the provider folders are: each with an `entry.py` is one (or more) catalog entries
PROVIDERS_DIR = Path(__file__).resolve().parent / "providers"


def folders() -> tuple[str, ...]:
    """The provider folders, by name: every folder of `runners/providers/` with an `entry.py`."""
    return tuple(sorted(d.name for d in PROVIDERS_DIR.iterdir() if (d / "entry.py").is_file()))


FOLDERS: tuple[str, ...] = folders()
#: every provider, folder by folder (its entries in the order it declares them)
PROVIDERS: tuple[Provider, ...] = tuple(
    p for name in FOLDERS for p in importlib.import_module(f"runners.providers.{name}.entry").PROVIDERS)


# -- cascades: STT → a text model → TTS, each one of Pipecat's own services


@dataclass(frozen=True)
class Component:
    """One speech stage of a cascade (`cascade:<stt>+<llm>+<tts>`), as data: its Pipecat service,
    keys, packages and local fake (`--fake`), so listing imports none of them."""

    name: str
    kind: Literal["stt", "tts"]
    service: str  # "module:Class" of its Pipecat service
    fake_class: str  # "module:Class" of its local fake ("" for a local part)
    key_env: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    install_hint: str = ""
    default_endpoint: str = ""
    #: runs in this process on weights on this machine (`runners/providers/local_parts.py`):
    #: no key, no fake (a `--fake` run uses it as it is)
    local: bool = False


#: how to install the local parts (faster-whisper, Piper, Kokoro through Pipecat's extras)
LOCAL_HINT = "pip install 'arena-tui[local]'"


CASCADE_PREFIX = "cascade:"
CASCADE_RUNNER = "runners.providers.cascade:CascadeRunner"
STT: dict[str, Component] = {c.name: c for c in (
    Component("openai-stt", "stt", "pipecat.services.openai.stt:OpenAISTTService", "runners.fakes.openai_audio:OpenAIAudioFake",
              ("OPENAI_API_KEY",), ("openai", "pipecat.services.openai.stt"), default_endpoint="https://api.openai.com/v1"),
    Component("deepgram", "stt", "pipecat.services.deepgram.stt:DeepgramSTTService", "runners.fakes.deepgram:DeepgramFake",
              ("DEEPGRAM_API_KEY",), ("deepgram", "pipecat.services.deepgram.stt"), "pip install 'pipecat-ai[deepgram]'",
              "wss://api.deepgram.com"),
    Component("whisper", "stt", "pipecat.services.whisper.stt:WhisperSTTService", "",
              packages=("faster_whisper", "pipecat.services.whisper.stt"), install_hint=LOCAL_HINT, local=True),
)}
TTS: dict[str, Component] = {c.name: c for c in (
    Component("openai-tts", "tts", "pipecat.services.openai.tts:OpenAITTSService", "runners.fakes.openai_audio:OpenAIAudioFake",
              ("OPENAI_API_KEY",), ("openai", "pipecat.services.openai.tts"), default_endpoint="https://api.openai.com/v1"),
    Component("cartesia", "tts", "pipecat.services.cartesia.tts:CartesiaTTSService", "runners.fakes.cartesia:CartesiaFake",
              ("CARTESIA_API_KEY",), ("websockets", "pipecat.services.cartesia.tts"), "pip install 'pipecat-ai[cartesia]'",
              "wss://api.cartesia.ai/tts/websocket"),
    Component("elevenlabs", "tts", "pipecat.services.elevenlabs.tts:ElevenLabsTTSService", "runners.fakes.elevenlabs:ElevenLabsFake",
              ("ELEVENLABS_API_KEY",), ("websockets", "pipecat.services.elevenlabs.tts"), "pip install 'pipecat-ai[elevenlabs]'",
              "wss://api.elevenlabs.io"),
    Component("piper", "tts", "pipecat.services.piper.tts:PiperTTSService", "",
              packages=("piper", "pipecat.services.piper.tts"), install_hint=LOCAL_HINT, local=True),
    Component("kokoro", "tts", "pipecat.services.kokoro.tts:KokoroTTSService", "",
              packages=("kokoro_onnx", "pipecat.services.kokoro.tts"), install_hint=LOCAL_HINT, local=True),
)}
#: what `arena-tui models` shows for the cascade spelling (each part with a fake in one at least)
CASCADE_EXAMPLES = ("cascade:openai-stt+gpt-4.1-mini+openai-tts", "cascade:deepgram+claude-haiku-4-5+cartesia",
                    "cascade:openai-stt+gpt-4.1-mini+elevenlabs")
#: the fully local stack (the [local] extra, its weights, an OpenAI-compatible server for the middle)
LOCAL_EXAMPLE = "cascade:whisper+local:llama3.2+piper"


def is_cascade(alias: str) -> bool:
    return alias.startswith(CASCADE_PREFIX)


def cascade_parts(alias: str) -> tuple[Component, str, Provider, Component]:
    """(STT, the text model's alias, its provider, TTS) of `cascade:<stt>+<llm>+<tts>`;
    ValueError naming the part that is wrong and what it may be."""
    parts = alias[len(CASCADE_PREFIX):].split("+")
    texts = sorted(a for a, p in BY_ALIAS.items() if p.mode == "text") + [f"{p.alias_family}<model>" for p in TEXT_FAMILIES]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"{alias!r}: a cascade is cascade:<stt>+<llm>+<tts>, e.g. {CASCADE_EXAMPLES[0]}")
    stt, llm, tts = parts
    if stt not in STT:
        raise ValueError(f"{alias!r}: unknown speech-to-text {stt!r}; known: {', '.join(STT)}")
    if tts not in TTS:
        raise ValueError(f"{alias!r}: unknown text-to-speech {tts!r}; known: {', '.join(TTS)}")
    provider = lookup(llm)
    if provider is None or provider.mode != "text":
        raise ValueError(f"{alias!r}: the middle of a cascade is a text model; known: {', '.join(texts)}")
    return STT[stt], llm, provider, TTS[tts]


def cascade_provider(alias: str) -> Provider:
    """The catalog entry of one cascade spelling: its three parts' keys and packages together."""
    stt, llm, text, tts = cascade_parts(alias)
    text_keys = text.key_env[:1] if text.any_key else text.key_env  # (its runner accepts the others too)
    keys = tuple(dict.fromkeys((*stt.key_env, *text_keys, *tts.key_env)))
    packages = tuple(dict.fromkeys((*stt.packages, *text.packages, *tts.packages, "pipecat.audio.vad.silero")))
    return Provider(name="cascade", runner=CASCADE_RUNNER, aliases={alias: text.model_id(llm)}, fake_class="",
                    key_env=keys, packages=packages)


def _by_alias() -> dict[str, Provider]:
    out: dict[str, Provider] = {}
    for p in PROVIDERS:
        for alias in p.aliases:
            if alias in out:
                raise TypeError(f"model alias {alias!r} declared by both {out[alias].name} and {p.name}")
            out[alias] = p
    return out


BY_ALIAS: dict[str, Provider] = _by_alias()
#: providers whose aliases are a family (`local:<model>`, `gpt-live-1+<text model>`)
FAMILIES: tuple[Provider, ...] = tuple(p for p in PROVIDERS if p.alias_family)
#: the text models' families (what a cascade's middle or a duplex model's backend may also be)
TEXT_FAMILIES: tuple[Provider, ...] = tuple(p for p in FAMILIES if p.mode == "text")
#: "module:Class" → its entry: a runner class takes its `FIELDS` from here (`ProviderRunner.__init_subclass__`)
BY_RUNNER: dict[str, Provider] = {p.runner: p for p in PROVIDERS}
#: what an entry declares for its runner class (the same names as the class attributes)
FIELDS = ("name", "aliases", "mode", "key_env", "setting_env", "any_key", "packages", "install_hint", "model_prefix",
          "model_env", "simulated", "fake_class", "manual_commit", "alias_family", "efforts", "caps", "price_scope")


def known_models() -> list[str]:
    return sorted(BY_ALIAS)


def manual_commit_names() -> str:
    """The providers whose protocol lets our commit close the user's turn (`--disable-vad`), as a
    sentence names them, by name: `grok, openai and sim`."""
    names = sorted(p.name for p in PROVIDERS if p.manual_commit)
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def effort_problem(alias: str, effort: str | None, efforts: Mapping[str, Effort]) -> str | None:
    """Why a model does not take `effort` (one line naming the model and what it takes), None when it does."""
    if effort is None:
        return None
    takes = efforts.get(alias)
    if takes is None:
        some = sorted(a for p in PROVIDERS for a in p.efforts)
        return f"--effort {effort}: {alias} takes no reasoning effort (models that do: {', '.join(some)})"
    if not takes.accepts(effort):
        return f"--effort {effort}: {alias} takes {takes.text} (its {takes.field})"
    return None


def lookup(alias: str) -> Provider | None:
    """The provider of a listed alias, or of one in a family (`local:<model>`); None otherwise."""
    return BY_ALIAS.get(alias) or next(
        (p for p in FAMILIES if alias.startswith(p.alias_family) and len(alias) > len(p.alias_family)), None)


def find(alias: str) -> Provider:
    """The provider of a model alias (a cascade's spelling too); ValueError listing the known
    aliases otherwise."""
    if is_cascade(alias):
        return cascade_provider(alias)
    provider = lookup(alias)
    if provider is None:
        families = [f"{p.alias_family}<model>" for p in FAMILIES]
        raise ValueError(f"unknown model {alias!r}; known: {', '.join(known_models() + families)}")
    return provider


def uses(alias: str) -> tuple[str, ...]:
    """The providers (catalog names) one run of `alias` holds a session or a request of at once: its
    own, a cascade's three stages (those not run on this machine), and a duplex model's client
    backend (`gpt-live-1+claude-haiku-4-5`: openai-live and anthropic). A run holds one session
    of each at a time (a rotation closes the old one first: `runners/run/replays.py`); an alias
    the catalog does not know uses none. What a campaign's provider caps count."""
    if is_cascade(alias):
        try:
            stt, _, text, tts = cascade_parts(alias)
        except ValueError:
            return ()
        return tuple(dict.fromkeys(n for n, local in ((stt.name, stt.local), (text.name, False), (tts.name, tts.local))
                                   if not local))
    provider = lookup(alias)
    if provider is None:
        return ()
    backend = lookup(alias.removeprefix(provider.alias_family)) if provider.caps.delegation and provider.alias_family \
        and alias.startswith(provider.alias_family) else None
    return (provider.name,) if backend is None else tuple(dict.fromkeys((provider.name, backend.name)))


def account(name: str) -> str:
    """The provider a campaign's cap names: a provider or a cascade stage by its catalog name
    (`openai`, `deepgram`), or by one of its model aliases (`gpt-realtime` → openai); ValueError
    naming the known ones otherwise."""
    stages = {c.name for c in (*STT.values(), *TTS.values()) if not c.local}
    if name in {p.name for p in PROVIDERS} or name in stages:
        return name
    provider = lookup(name)
    if provider is not None:
        return provider.name
    known = sorted({p.name for p in PROVIDERS if not p.simulated} | stages)
    raise ValueError(f"unknown provider {name!r} (a provider, a speech stage or a model alias; providers: {', '.join(known)})")


def max_sessions(name: str) -> int | None:
    """The provider's documented limit on sessions open at once (`Provider.max_sessions`), None if it has none."""
    return next((p.max_sessions for p in PROVIDERS if p.name == name), None)


def load(path: str) -> Any:
    """The object a "module:Name" path names (a runner class, a fake class), imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


