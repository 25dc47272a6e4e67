"""The provider contract: what a provider runner supplies to the engine; everything else
(pacing, turns, tools, timeline, rotation) is the engine's and provider-agnostic.

A runner builds one Pipecat service per session. The engine owns the pipeline around it,
registers the tool handler, and asks the runner only what differs between providers: audio
or text, models, keys, endpoint, its local fake, how history is replayed, liveness, TTFB.
Every name the engine reads is declared here with a default (no getattr probing).

Adding a provider = one module in `runners/` with a `ProviderRunner` subclass declaring its
`aliases` (registered by `__init_subclass__`, found by importing the package's modules), its
fake in `runners/fakes/` returned by `make_fake`, and its test.
"""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import json
import os
import pkgutil
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from arena_tui.spine.benchmark import Benchmark, Tool

from .config import Rotation, RunConfig

if TYPE_CHECKING:  # the fakes are only imported when a fake run starts
    from .fakes.common import Script
    from .fakes.timing import TimingProfile

Mode = Literal["audio", "text"]
#: endpoint scheme of a fake that runs inside this process (no socket at all, e.g. Nova Sonic's SDK-level fake)
IN_PROCESS = "inproc"


class RunError(Exception):
    """The run cannot start or go on (bad config, missing key, unreadable audio); names what to fix."""


def is_local(url: str) -> bool:
    """Whether an endpoint never leaves this machine: a loopback host, or an in-process fake."""
    parts = urlsplit(url)
    if parts.scheme == IN_PROCESS:
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class LocalFake(Protocol):
    """A provider's local stand-in (a server on 127.0.0.1, or in-process): started and
    stopped by `ProviderRunner`, its `base_url` becomes the run's endpoint."""

    @property
    def base_url(self) -> str: ...

    async def start(self) -> Any: ...

    async def stop(self) -> None: ...


class HistoryItem(BaseModel):
    """One replayable piece of the conversation so far (text, never audio)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["user", "assistant", "tool_call", "tool_result"]
    turn_index: int
    text: str = ""
    call_id: str = ""
    name: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    response: Any = None

    def chars(self) -> int:
        if self.kind in ("user", "assistant"):
            return len(self.text)
        return len(self.name) + len(json.dumps(self.args if self.kind == "tool_call" else self.response, default=str))


def context_messages(history: list[HistoryItem]) -> list[dict[str, Any]]:
    """History as standard (Chat Completions-shaped) context messages, tool structure kept: a
    turn's calls are one assistant `tool_calls` message, each answered by a `tool` message with
    the payload the model got. Pipecat's adapters translate these per provider."""
    out: list[dict[str, Any]] = []
    for h in history:
        if h.kind in ("user", "assistant"):
            out.append({"role": h.kind, "content": h.text})
        elif h.kind == "tool_call":
            call = {"id": h.call_id, "type": "function", "function": {"name": h.name, "arguments": json.dumps(h.args, ensure_ascii=False)}}
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(call)  # parallel calls of one turn
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        else:
            content = json.dumps(h.response, ensure_ascii=False) if h.response is not None else "COMPLETED"
            out.append({"role": "tool", "tool_call_id": h.call_id, "content": content})
    return out


class SessionSpec(BaseModel):
    """Everything a runner needs to open one session."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str  # provider model id (alias resolved)
    system_prompt: str
    tools: list[Tool]
    history: list[HistoryItem] = Field(default_factory=list)  # to replay before resuming
    #: what the session is asked to answer as it opens (the greeting; or, for a provider whose
    #: `history_needs_reply`, the engine's CONTINUE_PROMPT after the history). None: nothing is
    #: asked — the runner seeds the history (if any) and the session waits for the user's turn,
    #: so no reply of the model's can land in the next turn. Every runner honours both.
    kickoff: str | None = None
    sample_rate: int = 24000
    config: RunConfig


class ProviderRunner(ABC):
    """One per provider. Keep it small: the engine does the rest.

    Per run the engine calls `start(config, benchmark)` (with `config.fake`, or always for a
    `simulated` runner, the base class starts the provider's `make_fake` and points the
    endpoint at it; then the provider's `on_start`), `build_service(spec)` per session, and
    `stop()` (`on_stop`, then the fake; the fake object stays for tests to inspect)."""

    name: ClassVar[str] = ""
    #: alias → provider model id; every alias is registered (declared here only, once)
    aliases: ClassVar[dict[str, str]] = {}
    #: audio: the audio turn loop (paced WAV in, speech out); text: the text turn loop
    mode: ClassVar[Mode] = "audio"
    #: environment variables holding the key, the first one set wins (for `api_key`, `preflight`)
    key_env: ClassVar[tuple[str, ...]] = ()
    #: the real service's endpoint (`--base-url` and a started fake replace it)
    default_endpoint: ClassVar[str] = ""
    #: the key sent to a fake or simulator (a real key never leaves for one)
    fake_key: ClassVar[str] = "fake-key-not-a-secret"
    #: importable modules the service needs
    packages: ClassVar[tuple[str, ...]] = ()
    #: a runner whose peer is always its local fake (`sim`): `--speed` > 1 and no key
    simulated: ClassVar[bool] = False
    #: push User{Started,Stopped}SpeakingFrame at each user clip's first speech onset / last
    #: speech end (our VAD of the WAV, at played time) for services that need client-side turns
    turn_frames: ClassVar[bool] = False

    #: the fake's script (None: `script_for_benchmark` of the run's benchmark and turns)
    script: Script | None = None
    #: the fake's reply timing (None: the one `config.fake_timing` names), e.g. a test's scenario
    timing: TimingProfile | None = None
    #: the local fake of the last `start` (kept after `stop` so tests can read what it received)
    fake: LocalFake | None = None
    #: the started fake's endpoint for this run
    base_url: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for alias in cls.__dict__.get("aliases", {}):
            other = _REGISTRY.get(alias)
            if other is not None and other.__qualname__ != cls.__qualname__:
                raise TypeError(f"model alias {alias!r} declared by both {other.__qualname__} and {cls.__qualname__}")
            _REGISTRY[alias] = cls

    # -- models, keys, endpoint

    def resolve_model(self, alias: str) -> str:
        return self.aliases.get(alias, alias)

    def uses_fake(self, config: RunConfig) -> bool:
        """Whether this run talks to a local fake (ours, or one someone started at `--base-url`)."""
        return self.simulated or config.fake

    def api_key(self, config: RunConfig) -> str:
        """The key for this run: the fake key for a fake, else the first of `key_env` that is set."""
        if self.uses_fake(config):
            return self.fake_key
        return next((os.environ[e] for e in self.key_env if os.environ.get(e)), "")

    def endpoint(self, config: RunConfig) -> str:
        """Where this run's sessions connect: `--base-url`, else the started fake, else the real service."""
        return config.base_url or self.base_url or self.default_endpoint

    def preflight(self, config: RunConfig) -> list[str]:
        """Problems that stop a run before it starts, each naming what to do."""
        problems = []
        for mod in self.packages:
            try:
                found = importlib.util.find_spec(mod) is not None
            except ModuleNotFoundError:  # a parent package is missing
                found = False
            if not found:
                problems.append(f"{self.name}: Python package {mod!r} is not installed")
        if not self.uses_fake(config):
            for env in self.key_env:
                if not os.environ.get(env):
                    problems.append(f"{self.name}: environment variable {env} is not set (the API key)")
            if config.speed != 1.0:
                problems.append(f"{self.name}: --speed must be 1 against a real service (got {config.speed})")
        return problems

    # -- the local fake and the run's life

    def make_fake(self, config: RunConfig, benchmark: Benchmark) -> LocalFake | None:
        """The provider's local fake for a `--fake` run, not yet started (None: it has none,
        and a fake run is refused). Scripted from `fake_script`."""
        return None

    def fake_script(self, config: RunConfig, benchmark: Benchmark) -> Script:
        """`self.script`, or the benchmark's golden answers for the run's turns."""
        from .fakes.common import script_for_benchmark  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

        return self.script or script_for_benchmark(benchmark, config.turns)

    def fake_pace(self, config: RunConfig) -> dict[str, Any]:
        """What a provider fake needs to keep the run's time: its clock runs at `--speed`, and
        its reply timing is `self.timing`, else the one `fake_timing` names."""
        return {"speed": config.speed, "timing": self.timing or config.fake_timing or "instant"}

    async def start(self, config: RunConfig, benchmark: Benchmark) -> None:
        """Per-run setup: `check_benchmark`, the local fake when the run uses one (unless
        `--base-url` names one someone else started), then the provider's `on_start`."""
        self.fake = None
        self.base_url = None
        self.check_benchmark(benchmark)
        if self.uses_fake(config) and not config.base_url:
            fake = self.make_fake(config, benchmark)
            if fake is None:
                raise RunError(f"{self.name}: no local fake for model {config.model!r} (--fake)")
            await fake.start()
            self.fake, self.base_url = fake, fake.base_url
        await self.on_start(config, benchmark)
        endpoint = self.endpoint(config)
        if self.uses_fake(config) and not is_local(endpoint):
            raise RunError(f"{self.name}: a --fake run must stay on 127.0.0.1; its endpoint is {endpoint}")

    async def stop(self) -> None:
        """Per-run teardown: the provider's `on_stop`, then the fake (kept for inspection)."""
        try:
            await self.on_stop()
        finally:
            if self.fake is not None:
                await self.fake.stop()

    def check_benchmark(self, benchmark: Benchmark) -> None:  # noqa: B027
        """Raise RunError for a benchmark the provider cannot take (before anything starts)."""

    async def on_start(self, config: RunConfig, benchmark: Benchmark) -> None:  # noqa: B027
        """Provider per-run setup after the fake is up (e.g. refuse a benchmark, create a call)."""

    async def on_stop(self) -> None:  # noqa: B027
        """Provider per-run teardown before the fake stops."""

    # -- sessions

    @abstractmethod
    def build_service(self, spec: SessionSpec) -> Any:
        """A new Pipecat LLM service for one session, configured and ready to be put in a pipeline."""

    @abstractmethod
    def is_alive(self, service: Any) -> bool:
        """Whether the session's connection is still up (Pipecat does not report a closed socket)."""

    def session_ready(self, service: Any) -> bool:
        """Whether a session opened without a kickoff has taken its setup and seeded history, so
        user audio sent now is heard in that context. The engine waits for it before the next
        turn (a kickoff's reply used to be that wait); xAI, e.g., drops audio sent earlier."""
        return True

    def history_needs_reply(self, config: RunConfig) -> bool:
        """Whether the model takes a seeded history in only when asked to answer it (Gemini
        2.5: user audio after a silent seed is answered as if there were no history). The
        engine then opens such a session with `CONTINUE_PROMPT` as its kickoff and waits that
        reply out as the session's handshake, never as a turn's. Default: the history is
        seeded and nothing is asked."""
        return False

    def tools(self, tools: list[Tool]) -> Any:
        """The benchmark's tools as Pipecat's provider-neutral ToolsSchema (for the LLMContext)."""
        from pipecat.adapters.llm.schemas.function_schema import FunctionSchema  # deferred: Pipecat loads only when a run starts (model listing and preflight stay fast)
        from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema  # deferred: Pipecat loads only when a run starts (model listing and preflight stay fast)

        return ToolsSchema(
            standard_tools=[
                FunctionSchema(
                    name=t.name,
                    description=t.description,
                    properties=dict(t.parameters.get("properties", {})),
                    required=list(t.parameters.get("required", [])),
                )
                for t in tools
            ]
        )

    def history_messages(self, history: list[HistoryItem]) -> list[dict[str, Any]]:
        """The replayed history as the session's first context messages (text loop)."""
        return context_messages(history)

    def reply_timeout_ms(self, config: RunConfig) -> float:
        """How long a text request may go without a byte before it counts as failed."""
        return max(config.watchdog.extra_ms, 1000.0)

    def observe_responses(self, service: Any, callback: Any) -> None:  # noqa: B027
        """Call `callback(status, reason)` when a provider reply ends (completed, incomplete, failed …).

        Pipecat does not pass a reply's final status down the pipeline; providers that can
        report it hook it here."""

    def observe_session(self, service: Any, publish: Any) -> None:  # noqa: B027
        """Report what happens inside the service that the engine cannot see, as events:
        `publish(EventClass, **fields)` (run id, time and turn are filled in), e.g. a
        reconnect or continuation the Pipecat service did by itself → `SessionRotated` +
        `Reconnected` with what it replayed, or a turn marked "text but no audio"."""

    def rotation_policy(self, config: RunConfig, system_prompt: str) -> Rotation:
        """The rotation policy for this provider (e.g. Nova's age limit, GLM's replay budget);
        defaults to the configured one. Providers override only what the user left unset."""
        return config.rotation

    def replay_strategy(self) -> str:
        """How history reaches a new session (a ReplaySummary.strategy)."""
        return "full_history"

    def provider_ttfb_label(self) -> str:
        return f"{self.name} TTFB (Pipecat metrics)"


_REGISTRY: dict[str, type[ProviderRunner]] = {}


def known_models() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def get_runner(model: str) -> ProviderRunner:
    """A new runner for a model alias; ValueError listing the known aliases otherwise."""
    _discover()
    cls = _REGISTRY.get(model)
    if cls is None:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(sorted(_REGISTRY))}")
    return cls()


def _discover() -> None:
    """Import every module of the runners package: each provider module registers its aliases."""
    package = importlib.import_module(__package__ or "runners")
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg and not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")
