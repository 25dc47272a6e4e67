"""Every provider as plain data: what choosing a model needs (aliases, provider, mode, model
id, keys, packages, the runner and its fake) without importing a provider module, and so
without Pipecat: `arena-tui models`, `--help` and `known_models()` read this module only.

Each entry mirrors its class's declared attributes (`runners.base.ProviderRunner`);
tests/test_provider_catalog.py checks that they are equal and that listing here says what
the runner's own preflight says. The rules both use (the model id of an alias, the packages
and keys a run needs) are the functions below: the runner's methods call them too.

Adding a provider: its module in `runners/providers/`, its fake in `runners/fakes/`, and its
entry here.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["audio", "text"]


@dataclass(frozen=True)
class Effort:
    """The reasoning effort / thinking level a model takes (`--effort`), as its protocol has it:
    named levels, a token budget, or both; `field` is where it goes on the wire (`arena-tui models`
    says both)."""

    field: str
    levels: tuple[str, ...] = ()
    budget: tuple[int, int] | None = None  # a thinking budget in tokens: least, most

    def accepts(self, value: str) -> bool:
        if value in self.levels:
            return True
        return self.budget is not None and value.isdigit() and self.budget[0] <= int(value) <= self.budget[1]

    @property
    def text(self) -> str:
        """What it takes, as a refusal and the model list say it: `low|medium|high` / `a budget of 1024-32000 tokens`."""
        parts = ["|".join(self.levels)] if self.levels else []
        if self.budget is not None:
            parts.append(f"a budget of {self.budget[0]}-{self.budget[1]} tokens")
        return " or ".join(parts)


# the efforts the providers' protocols take (Pipecat 1.14's service settings; docs/providers.md "Reasoning effort")
REALTIME_REASONING = Effort("session.reasoning.effort", ("minimal", "low", "medium", "high", "xhigh"))
GPT5_REASONING = Effort("reasoning_effort", ("minimal", "low", "medium", "high"))
GPT51_REASONING = Effort("reasoning_effort", ("none", "low", "medium", "high"))
GEMINI3_THINKING = Effort("thinking_config.thinking_level", ("minimal", "low", "medium", "high"))
CLAUDE_EFFORT = Effort("output_config.effort", ("low", "medium", "high", "max"))
CLAUDE_BUDGET = Effort("thinking.budget_tokens", budget=(1024, 32000))


def gemini25_thinking(least: int, most: int) -> Effort:
    """A Gemini 2.5 model's thinking budget (0 turns it off where `least` is 0; its own bounds)."""
    return Effort("thinking_config.thinking_budget", budget=(least, most))


@dataclass(frozen=True)
class Provider:
    """One provider runner, as data (the same names as its class attributes)."""

    name: str
    #: "module:Class" of its `ProviderRunner` subclass
    runner: str
    #: alias → provider model id
    aliases: Mapping[str, str]
    #: "module:Class" of its local fake (`--fake`)
    fake_class: str
    mode: Mode = "audio"
    #: environment variables holding the key
    key_env: tuple[str, ...] = ()
    #: one of `key_env` is enough (else every one is needed)
    any_key: bool = False
    packages: tuple[str, ...] = ()
    #: appended to a missing package's problem (how to install it)
    install_hint: str = ""
    #: put before every model id (Gemini's "models/")
    model_prefix: str = ""
    #: alias → environment variable that, when set, names its model instead
    model_env: Mapping[str, str] = field(default_factory=dict)
    #: its peer is always its local fake (`sim`)
    simulated: bool = False
    #: its protocol lets the client close the user's turn (`--disable-vad`: server VAD off, our
    #: commit at the speech end; `ProviderRunner.input_problems` refuses it elsewhere)
    manual_commit: bool = False
    #: any alias that starts with it is one of its models, the rest its id (`local:<model>`)
    alias_family: str = ""
    #: alias → the reasoning effort it takes (`--effort`); an alias not here takes none (refused by name)
    efforts: Mapping[str, Effort] = field(default_factory=dict)
    #: full duplex: it listens while it speaks and answers when it chooses (no commit, no response
    #: trigger); the engine runs it in the full-duplex turn loop (`runners/run/full_duplex.py`)
    duplex: bool = False
    #: where it may hand its work (tools, reasoning) to a backend model, as said: `responses (…)`, `client (…)`
    delegation: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """What `arena-tui models` shows: text, simulator, duplex or audio."""
        return "text" if self.mode == "text" else ("simulator" if self.simulated else "duplex" if self.duplex else "audio")

    def model_id(self, alias: str) -> str:
        return model_id(alias, self.aliases, self.model_prefix, self.model_env, self.alias_family)

    def problems(self, *, fake: bool = False) -> list[str]:
        """What a run with default settings still needs (`ProviderRunner.preflight` of a
        `RunSettings(model=alias, fake=fake)`): packages, and keys unless it talks to a fake."""
        return requirements(self.name, self.packages, self.key_env, any_key=self.any_key,
                            install_hint=self.install_hint, keys=not (self.simulated or fake))


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        name="openai",
        runner="runners.providers.openai_realtime:OpenAIRealtimeRunner",
        fake_class="runners.simulator:SimulatorServer",
        aliases={
            "gpt-realtime": "gpt-realtime",
            "gpt-realtime-mini": "gpt-realtime-mini",
            "gpt-4o-realtime": "gpt-4o-realtime-preview",
            "gpt-4o-mini-realtime": "gpt-4o-mini-realtime-preview",
            "openai": "gpt-realtime",
            "gpt-realtime-2": "gpt-realtime-2",
        },
        key_env=("OPENAI_API_KEY",),
        packages=("websockets", "pipecat.services.openai.realtime.llm"),
        manual_commit=True,
        efforts={"gpt-realtime-2": REALTIME_REASONING},  # (Pipecat sends `reasoning` to gpt-realtime-2 only)
    ),
    Provider(
        name="sim",
        runner="runners.providers.openai_realtime:SimulatorRunner",
        fake_class="runners.simulator:SimulatorServer",
        aliases={"sim": "gpt-realtime"},
        packages=("websockets", "pipecat.services.openai.realtime.llm"),
        simulated=True,
        manual_commit=True,
        efforts={"sim": REALTIME_REASONING},  # the simulator takes what gpt-realtime-2 takes, and records it
    ),
    Provider(
        name="gemini",
        runner="runners.providers.gemini_live:GeminiLiveRunner",
        fake_class="runners.fakes.gemini_live:GeminiLiveFake",
        aliases={
            "gemini-native-audio": "gemini-2.5-flash-native-audio-preview-12-2025",
            "gemini-3.1-flash": "gemini-3.1-flash-live-preview",
        },
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        any_key=True,
        packages=("google.genai", "pipecat.services.google.gemini_live.llm"),
        install_hint="pip install 'pipecat-ai[google]'",
        model_prefix="models/",
        efforts={"gemini-native-audio": gemini25_thinking(0, 24576), "gemini-3.1-flash": GEMINI3_THINKING},
    ),
    Provider(
        name="nova-sonic",
        runner="runners.providers.nova_sonic:NovaSonicRunner",
        fake_class="runners.fakes.nova_sonic:NovaSonicFake",
        aliases={
            "nova-sonic": "amazon.nova-sonic-v1:0",
            "nova-sonic-2": "amazon.nova-2-sonic-v1:0",
            "nova-2-sonic": "amazon.nova-2-sonic-v1:0",
        },
        key_env=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        packages=("aws_sdk_bedrock_runtime", "smithy_aws_core", "pipecat.services.aws.nova_sonic.llm"),
    ),
    Provider(
        name="glm",
        runner="runners.providers.glm_realtime:GLMRealtimeRunner",
        fake_class="runners.fakes.glm_realtime:GLMRealtimeFake",
        aliases={
            "glm-realtime-flash": "glm-realtime-flash",
            "glm-realtime-air": "glm-realtime-air",
            "glm-realtime": "glm-realtime-flash",
            "glm": "glm-realtime-flash",
        },
        key_env=("ZHIPUAI_API_KEY", "GLM_API_KEY", "ZAI_API_KEY"),
        any_key=True,
        packages=("websockets", "pipecat"),
    ),
    Provider(
        name="grok",
        runner="runners.providers.grok:GrokRealtimeRunner",
        fake_class="runners.fakes.grok:XaiRealtimeFake",
        aliases={
            "grok-realtime": "grok-voice-latest",
            "grok": "grok-voice-latest",
            "grok-voice-latest": "grok-voice-latest",
            "grok-voice-think-fast-1.0": "grok-voice-think-fast-1.0",
            "grok-voice-fast-1.0": "grok-voice-fast-1.0",
        },
        key_env=("XAI_API_KEY",),
        packages=("websockets", "pipecat.services.xai.realtime.llm"),
        manual_commit=True,
    ),
    Provider(
        name="ultravox",
        runner="runners.providers.ultravox:UltravoxRunner",
        fake_class="runners.fakes.ultravox:UltravoxFake",
        # `fixie-ai/ultravox` is the API's default model; `ultravox-v0.7` as Pipecat's docs name it
        aliases={"ultravox": "fixie-ai/ultravox", "ultravox-v0.7": "ultravox-v0.7"},
        key_env=("ULTRAVOX_API_KEY",),
        packages=("aiohttp", "websockets", "pipecat.services.ultravox.llm"),
    ),
    Provider(
        name="openai-live",
        runner="runners.providers.openai_live:OpenAILiveRunner",
        fake_class="runners.fakes.openai_live:OpenAILiveFake",
        # `gpt-live-1`: its backend OpenAI-hosted (Responses delegation); `gpt-live-1+<text model>`:
        # one of ours as its client backend (one listed; the family takes any text alias)
        aliases={"gpt-live-1": "gpt-live-1", "gpt-live-1+gpt-4.1-mini": "gpt-live-1"},
        key_env=("OPENAI_API_KEY",),
        packages=("websockets", "pipecat.services.openai.live.llm", "pipecat.workers.llm.backend_llm_worker"),
        alias_family="gpt-live-1+",
        duplex=True,
        delegation=("responses (gpt-live-1: OpenAI-hosted gpt-5.4-mini)", "client (gpt-live-1+<text model>: ours)"),
    ),
    Provider(
        name="text",
        runner="runners.providers.text_chat:TextChatRunner",
        fake_class="runners.fakes.text_chat:OpenAIChatFake",
        mode="text",
        aliases={
            "text": "gpt-4.1",
            "gpt-4.1": "gpt-4.1",
            "gpt-4.1-mini": "gpt-4.1-mini",
            "gpt-4o": "gpt-4o",
            "gpt-4o-mini": "gpt-4o-mini",
            "gpt-5-mini": "gpt-5-mini",
            "gpt-5.1": "gpt-5.1",
        },
        key_env=("OPENAI_API_KEY",),
        packages=("openai", "pipecat.services.openai.llm"),
        model_env={"text": "ARENA_TUI_TEXT_MODEL"},
        efforts={"gpt-5-mini": GPT5_REASONING, "gpt-5.1": GPT51_REASONING},
    ),
    Provider(  # a model served by an OpenAI-compatible server: `arena_tui.spine.local_llm`
        name="local",
        runner="runners.providers.text_chat:LocalChatRunner",
        fake_class="runners.fakes.text_chat:OpenAIChatFake",
        mode="text",
        aliases={"local:llama3.2": "llama3.2"},
        packages=("openai", "pipecat.services.openai.llm"),
        alias_family="local:",
    ),
    Provider(
        name="anthropic",
        runner="runners.providers.anthropic_text:AnthropicTextRunner",
        fake_class="runners.fakes.anthropic_text:AnthropicFake",
        mode="text",
        aliases={"claude-sonnet-4-6": "claude-sonnet-4-6", "claude-sonnet-5": "claude-sonnet-5",
                 "claude-haiku-4-5": "claude-haiku-4-5"},
        key_env=("ANTHROPIC_API_KEY",),
        packages=("anthropic", "pipecat.services.anthropic.llm"),
        install_hint="pip install 'pipecat-ai[anthropic]'",
        efforts={"claude-sonnet-4-6": CLAUDE_EFFORT, "claude-sonnet-5": CLAUDE_EFFORT, "claude-haiku-4-5": CLAUDE_BUDGET},
    ),
    Provider(
        name="google",
        runner="runners.providers.google_text:GoogleTextRunner",
        fake_class="runners.fakes.google_text:GeminiTextFake",
        mode="text",
        aliases={"gemini-2.5-flash": "gemini-2.5-flash", "gemini-2.5-pro": "gemini-2.5-pro"},
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        any_key=True,
        packages=("google.genai", "pipecat.services.google.llm"),
        install_hint="pip install 'pipecat-ai[google]'",
        efforts={"gemini-2.5-flash": gemini25_thinking(0, 24576), "gemini-2.5-pro": gemini25_thinking(128, 32768)},
    ),
    Provider(
        name="bedrock",
        runner="runners.providers.bedrock_text:BedrockTextRunner",
        fake_class="runners.fakes.bedrock_text:BedrockConverseFake",
        mode="text",
        aliases={
            "bedrock-nova-lite": "us.amazon.nova-lite-v1:0",
            "bedrock-nova-pro": "us.amazon.nova-pro-v1:0",
        },
        key_env=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        packages=("aiobotocore", "pipecat.services.aws.llm"),
        install_hint="pip install 'pipecat-ai[aws]'",
    ),
)


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
FIELDS = ("name", "aliases", "mode", "key_env", "any_key", "packages", "install_hint", "model_prefix",
          "model_env", "simulated", "fake_class", "manual_commit", "alias_family", "efforts", "duplex", "delegation")


def known_models() -> list[str]:
    return sorted(BY_ALIAS)


def manual_commit_names() -> str:
    """The providers whose protocol lets our commit close the user's turn (`--disable-vad`), as a
    sentence names them: `openai, sim and grok`."""
    names = [p.name for p in PROVIDERS if p.manual_commit]
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


def load(path: str) -> Any:
    """The object a "module:Name" path names (a runner class, a fake class), imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


# -- the rules the runners share with listing


def model_id(alias: str, aliases: Mapping[str, str], prefix: str = "", env: Mapping[str, str] | None = None,
             family: str = "") -> str:
    """The provider model id of an alias (an unknown one is taken as an id, its family's prefix dropped)."""
    var = (env or {}).get(alias)
    model = (os.environ.get(var) if var else None) or aliases.get(alias, alias.removeprefix(family))
    return model if not prefix or model.startswith(prefix) else prefix + model


def installed(module: str) -> bool:
    """Whether a module can be imported. `importlib.util.find_spec` imports the parent
    packages (Pipecat's take seconds), so a parent not imported yet is found on the path
    without running it."""
    parts = module.split(".")
    parent = ".".join(parts[:-1])
    if not parent or parent in sys.modules:  # nothing to import on the way
        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent that cannot be imported
            return False
    name, spec = parts[0], None
    for i, part in enumerate(parts):
        name = part if i == 0 else f"{name}.{part}"
        if name in sys.modules:
            loaded = sys.modules[name]
            spec = loaded.__spec__ if loaded is not None else None
        elif i == 0:
            spec = importlib.util.find_spec(name)
        else:
            locations = spec.submodule_search_locations if spec is not None else None
            spec = importlib.machinery.PathFinder.find_spec(name, list(locations)) if locations else None
        if spec is None:
            return False
    return True


def requirements(name: str, packages: tuple[str, ...], key_env: tuple[str, ...], *, any_key: bool = False,
                 install_hint: str = "", keys: bool = True) -> list[str]:
    """Packages not installed and (`keys`) keys not set, each a line naming what to do."""
    hint = f" ({install_hint})" if install_hint else ""
    problems = [f"{name}: Python package {mod!r} is not installed{hint}" for mod in packages if not installed(mod)]
    if not keys:
        return problems
    if any_key:
        if key_env and not any(os.environ.get(e) for e in key_env):
            others = f" (or {' or '.join(key_env[1:])})" if len(key_env) > 1 else ""
            problems.append(f"{name}: environment variable {key_env[0]}{others} is not set (the API key)")
    else:
        problems += [f"{name}: environment variable {e} is not set (the API key)" for e in key_env if not os.environ.get(e)]
    return problems
