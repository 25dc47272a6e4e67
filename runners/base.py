"""The provider contract: what a provider runner supplies to the engine; everything else
(pacing, turns, tools, timeline, rotation) is the engine's and provider-agnostic.

A runner builds one Pipecat service per session. The engine owns the pipeline around it,
registers the tool handler, and asks the runner only what differs between providers: audio
or text, models, keys, endpoint, its local fake, how history is replayed, liveness, TTFB.
Every name the engine reads is declared here with a default (no getattr probing).

Adding a provider = one folder, `runners/providers/<name>/`: its catalog entry (`entry.py`, the
class's attributes as data: models are listed and found without importing any runner, or
Pipecat), its `ProviderRunner` subclass (`runner.py`) and its local fake (`fake.py`); and its
test (docs/providers.md, "Adding a provider").
"""

from __future__ import annotations

import ipaddress
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from arena_tui.spine.benchmark import Benchmark, Tool
from arena_tui.spine.source import TTS

from arena_tui.spine.settings import Rotation, RunSettings
from . import catalog
from .fakes.local import LocalFake

if TYPE_CHECKING:  # the fakes are only imported when a fake run starts
    from openai.types.chat import ChatCompletionMessageToolCallParam
    from pipecat.processors.aggregators.llm_context import LLMContextMessage
    from pipecat.processors.frame_processor import FrameProcessor
    from pipecat.services.llm_service import LLMService

    from .fakes.script import Script
    from .fakes.timing import Pace, TimingProfile

Mode = catalog.Mode
#: `publish(EventClass, **fields)`: an event of the session (run id, time and turn filled in)
Publish = Callable[..., None]
#: `on_response_status(status, reason)`: a provider reply ended (completed, incomplete, failed …)
ResponseStatus = Callable[[str, str], None]
#: endpoint scheme of a fake that runs inside this process (no socket at all, e.g. Nova Sonic's SDK-level fake)
IN_PROCESS = "inproc"


class RunError(Exception):
    """The run cannot start or go on (bad config, missing key, unreadable audio); names what to fix."""


def speed_problem(who: str, speed: float, *, local: bool, why: str = "") -> list[str]:
    """The speed rule, said once: audio faster than real time (`--speed` > 1) only to something on this
    machine (a fake, the simulator, a local server); a real service hears a real-time user."""
    if local or speed == 1.0:
        return []
    return [f"{who}: --speed must be 1 against a real service (got {speed}){why}"]


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


def context_messages(history: list[HistoryItem]) -> list[LLMContextMessage]:
    """History as standard (Chat Completions-shaped) context messages, tool structure kept: a
    turn's calls are one assistant `tool_calls` message, each answered by a `tool` message with
    the payload the model got. Pipecat's adapters translate these per provider."""
    out: list[LLMContextMessage] = []
    calls: list[ChatCompletionMessageToolCallParam] | None = None  # the last message's, when it is a call message
    for h in history:
        if h.kind == "tool_call":
            call: ChatCompletionMessageToolCallParam = {
                "id": h.call_id, "type": "function",
                "function": {"name": h.name, "arguments": json.dumps(h.args, ensure_ascii=False)}}
            if calls is not None:
                calls.append(call)  # parallel calls of one turn
            else:
                calls = [call]
                out.append({"role": "assistant", "content": None, "tool_calls": calls})
            continue
        calls = None
        if h.kind == "user":
            out.append({"role": "user", "content": h.text})
        elif h.kind == "assistant":
            out.append({"role": "assistant", "content": h.text})
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
    config: RunSettings
    #: how the service reports what happens inside it that the engine cannot see (its own
    #: reconnects, nudges, drops, a reply with text and no audio), as events; None: nobody listens
    publish: Publish | None = None
    #: called with each provider reply's final status (Pipecat does not pass it down the
    #: pipeline); None: nobody listens. A runner whose service can tell hands it these two.
    on_response_status: ResponseStatus | None = None
    #: the engine's tool handler (answers from the turn spec), for a service that runs a model of its
    #: own besides itself (a duplex model's backend); the engine registers it on the service itself
    tool_handler: Any = None


class SessionPipeline(BaseModel):
    """A session's pipeline when the provider composes it (a cascade: STT → LLM → TTS) instead of
    the engine's `input → user aggregator → service → output → assistant aggregator`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    processors: list[Any]
    #: processors besides the service whose frames the run sees, each with the frame types it
    #: originates (a processor also re-pushes what it forwards: those are the service's)
    taps: dict[int, tuple[type, ...]] = Field(default_factory=dict)  # id(processor) → frame types


class ProviderRunner[ServiceT: LLMService[Any]](ABC):
    """One per provider. Keep it small: the engine does the rest.

    `ServiceT` is the Pipecat service class its `build_service` makes: the hooks the engine calls
    with that service (`is_alive`, `session_ready`, `service_endpoint`, …) take it as the runner
    built it. The engine holds a runner of any provider (`ProviderRunner` bare: of any service).

    Per run the engine calls `start(config, benchmark)` (with `config.fake`, or always for a
    `simulated` runner, the base class starts the provider's `make_fake` and points the
    endpoint at it; then the provider's `on_start`), `build_service(spec)` per session, and
    `stop()` (`on_stop`, then the fake; the fake object stays for tests to inspect)."""

    name: ClassVar[str] = ""
    #: alias → provider model id (its catalog entry lists the same)
    aliases: ClassVar[dict[str, str]] = {}
    #: put before every model id (Gemini's "models/")
    model_prefix: ClassVar[str] = ""
    #: alias → environment variable that, when set, names its model instead
    model_env: ClassVar[dict[str, str]] = {}
    #: any alias that starts with it is one of its models, the rest its id (`local:<model>`)
    alias_family: ClassVar[str] = ""
    #: audio: the audio turn loop (paced WAV in, speech out); text: the text turn loop
    mode: ClassVar[Mode] = "audio"
    #: environment variables holding the key, the first one set wins (for `api_key`, `preflight`)
    key_env: ClassVar[tuple[str, ...]] = ()
    #: one of `key_env` is enough (else every one is needed)
    any_key: ClassVar[bool] = False
    #: environment variables a real run needs besides the key → what each names (its catalog entry's)
    setting_env: ClassVar[Mapping[str, str]] = {}
    #: the real service's endpoint (`--base-url` and a started fake replace it)
    default_endpoint: ClassVar[str] = ""
    #: the key sent to a fake or simulator (a real key never leaves for one)
    fake_key: ClassVar[str] = "fake-key-not-a-secret"
    #: importable modules the service needs
    packages: ClassVar[tuple[str, ...]] = ()
    #: how to install a missing package (appended to the preflight problem)
    install_hint: ClassVar[str] = ""
    #: "module:Class" of the provider's local fake (`--fake`), its folder's `fake.py`;
    #: `make_fake` builds it
    fake_class: ClassVar[str] = ""
    #: a runner whose peer is always its local fake (`sim`): `--speed` > 1 and no key
    simulated: ClassVar[bool] = False
    #: push User{Started,Stopped}SpeakingFrame at each user clip's first speech onset / last
    #: speech end (our VAD of the WAV, at played time) for services that need client-side turns
    turn_frames: ClassVar[bool] = False
    #: its protocol lets the client close the user's turn (`--disable-vad`: server VAD off, our
    #: commit at the speech end; from its catalog entry, so the model list says it); the runner
    #: then builds its service so and `client_turns` says so
    manual_commit: ClassVar[bool] = False
    #: alias → the reasoning effort it takes (`--effort`, from its catalog entry; the preflight refuses the rest)
    efforts: ClassVar[Mapping[str, catalog.Effort]] = {}
    #: what its models can do (output rate, session limit, rotation, duplex, delegation: its catalog entry's)
    caps: ClassVar[catalog.Capabilities] = catalog.Capabilities()
    #: whose price list bills its usage when not its models' makers' (its catalog entry's): its
    #: usage reports name the model `<price_scope>/<model id>` (`run.base.RunBase.on_usage`)
    price_scope: ClassVar[str] = ""
    #: a cascade: the run times its stages (STT final, LLM first token, TTS first audio) per turn
    stage_timing: ClassVar[bool] = False
    #: what its preflight checks, in order, each a `check_<name>(config)` method saying what stops the
    #: run: its packages installed, its keys set (not for a fake), the speed rule, the input it can honour;
    #: a provider declares its own list (its own checks added, one that means nothing for it left out)
    checks: ClassVar[tuple[str, ...]] = ("packages", "keys", "speed", "input")

    #: the fake's script (None: `script_for_benchmark` of the run's benchmark and turns)
    script: Script | None = None
    #: the fake's reply timing (None: the one `config.fake_timing` names), e.g. a test's scenario
    timing: TimingProfile | None = None
    #: the local fake of the last `start` (kept after `stop` so tests can read what it received)
    fake: LocalFake | None = None
    #: the started fake's endpoint for this run
    base_url: str | None = None

    def __init_subclass__(cls) -> None:
        """A provider's name, aliases, keys, packages and fake are written once, in its catalog
        entry (listed without importing this module): its class takes them from there."""
        super().__init_subclass__()
        entry = catalog.BY_RUNNER.get(f"{cls.__module__}:{cls.__qualname__}")
        if entry is not None:
            for f in catalog.FIELDS:
                setattr(cls, f, getattr(entry, f))

    # -- models, keys, endpoint

    def resolve_model(self, alias: str) -> str:
        return catalog.model_id(alias, self.aliases, self.model_prefix, self.model_env, self.alias_family)

    def uses_fake(self, config: RunSettings) -> bool:
        """Whether this run talks to a local fake (ours, or one someone started at `--base-url`)."""
        return self.simulated or config.fake

    def api_key(self, config: RunSettings) -> str:
        """The key for this run: the fake key for a fake, else the first of `key_env` that is set."""
        if self.uses_fake(config):
            return self.fake_key
        return next((os.environ[e] for e in self.key_env if os.environ.get(e)), "")

    def endpoint(self, config: RunSettings) -> str:
        """Where this run's sessions connect: `--base-url`, else the started fake, else the real service."""
        return config.base_url or self.base_url or self.default_endpoint

    def preflight(self, config: RunSettings, only: Collection[str] | None = None) -> list[str]:
        """Problems that stop a run before it starts, each naming what to do: those its `checks`
        find, in their order (`only`: just those of them named, e.g. what a cascade asks of its
        text model's runner: its packages and keys)."""
        return [p for name in self.checks if only is None or name in only for p in getattr(self, f"check_{name}")(config)]

    def check_packages(self, config: RunSettings) -> list[str]:
        """The Python packages its service needs, each one not installed a line naming how to install it."""
        return catalog.requirements(self.name, self.packages, (), install_hint=self.install_hint, keys=False)

    def check_keys(self, config: RunSettings) -> list[str]:
        """Its key and the settings a real run needs (`setting_env`), each one not set a line (none for a fake)."""
        if self.uses_fake(config):
            return []
        return catalog.requirements(self.name, (), self.key_env, any_key=self.any_key, setting_env=self.setting_env)

    def check_speed(self, config: RunSettings) -> list[str]:
        """`--speed` other than 1 only against something on this machine (`speed_problem`)."""
        return speed_problem(self.name, config.speed, local=self.uses_fake(config))

    def check_input(self, config: RunSettings) -> list[str]:
        """The input settings it cannot honour (`input_problems`)."""
        return self.input_problems(config)

    def input_problems(self, config: RunSettings) -> list[str]:
        """Input settings this provider cannot honour (a human speaker for a text model, manual
        commits where the protocol has no client-side turn), each naming what to change."""
        problems = []
        if self.mode == "text" and config.speaker != TTS:
            problems.append(f"{self.name}: --speaker {config.speaker} needs an audio model (a text model reads the turn's text)")
        if config.disable_vad and not self.manual_commit:
            problems.append(f"{self.name}: --disable-vad is not supported (its protocol has no client commit of the "
                            f"user's turn; it applies to {catalog.manual_commit_names()})")
        if (effort := catalog.effort_problem(config.model, config.effort, self.efforts)) is not None:
            problems.append(f"{self.name}: {effort}")
        return problems

    def client_turns(self, config: RunSettings) -> bool:
        """Whether the engine brackets each user clip with User{Started,Stopped}SpeakingFrame at
        our VAD bounds: the provider always takes client-side turns (`turn_frames`), or this run
        closes the user's turn itself (`--disable-vad`)."""
        return self.turn_frames or (config.disable_vad and self.manual_commit)

    # -- the local fake and the run's life

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake | None:
        """The provider's local fake for a `--fake` run, not yet started (None: it has none,
        and a fake run is refused): `fake_class`, scripted from `fake_script`, on `fake_pace`."""
        if not self.fake_class:
            return None
        return self.fake_type()(self.fake_script(config, benchmark), **self.fake_pace(config))

    def fake_type(self) -> Any:
        """The class `fake_class` names, imported now (the fakes load only for fake runs)."""
        return catalog.load(self.fake_class)

    def fake_script(self, config: RunSettings, benchmark: Benchmark) -> Script:
        """`self.script`, or the benchmark's golden answers for the run's turns."""
        from .fakes.script import script_for_benchmark  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

        return self.script or script_for_benchmark(benchmark, config.turns)

    def fake_pace(self, config: RunSettings) -> Pace:
        """What a provider fake needs to keep the run's time: its clock runs at `--speed`, and
        its reply timing is `self.timing`, else the one `fake_timing` names."""
        return {"speed": config.speed, "timing": self.timing or config.fake_timing or "instant"}

    async def start(self, config: RunSettings, benchmark: Benchmark) -> None:
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

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:  # noqa: B027
        """Provider per-run setup after the fake is up (e.g. refuse a benchmark, create a call)."""

    async def on_stop(self) -> None:  # noqa: B027
        """Provider per-run teardown before the fake stops."""

    # -- sessions

    @abstractmethod
    def build_service(self, spec: SessionSpec) -> ServiceT:
        """A new Pipecat LLM service for one session, configured and ready to be put in a pipeline."""

    @abstractmethod
    def is_alive(self, service: ServiceT) -> bool:
        """Whether the session's connection is still up (Pipecat does not report a closed socket)."""

    def usage_parts(self, service: ServiceT) -> list[FrameProcessor]:
        """Other services the session's service runs outside its pipeline (a delegation's backend
        model) whose own usage reports the run records: their frames never pass the session's."""
        return []

    def service_endpoint(self, service: ServiceT) -> str:
        """Where a service `build_service` made connects, read from the service object itself (its
        URL, its client), not from the run's settings: what tests/test_provider_contract.py holds on
        127.0.0.1 for every `--fake` run (`inproc://…`: a fake in this process)."""
        raise NotImplementedError(f"{self.name}: no rule to read where its service connects")

    def session_pipeline(self, spec: SessionSpec, service: ServiceT, paced_in: FrameProcessor,
                         paced_out: FrameProcessor) -> SessionPipeline | None:
        """The audio session's processors when this provider composes them around its `service`
        and the paced ends (a cascade's STT before and TTS after its LLM); None: the engine's
        own pipeline."""
        return None

    def session_ready(self, service: ServiceT) -> bool:
        """Whether a session opened without a kickoff has taken its setup and seeded history, so
        user audio sent now is heard in that context. The engine waits for it before the next
        turn (a kickoff's reply used to be that wait); xAI, e.g., drops audio sent earlier."""
        return True

    def history_needs_reply(self, config: RunSettings) -> bool:
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

    def history_messages(self, history: list[HistoryItem]) -> list[LLMContextMessage]:
        """The replayed history as the session's first context messages (text loop)."""
        return context_messages(history)

    def reply_timeout_ms(self, config: RunSettings) -> float:
        """How long a text request may go without a byte before it counts as failed."""
        return max(config.watchdog.extra_ms, 1000.0)

    def rotation_policy(self, config: RunSettings, system_prompt: str) -> Rotation:
        """The rotation policy for this provider (e.g. Nova's age limit, GLM's replay budget);
        defaults to the configured one. Providers override only what the user left unset."""
        return config.rotation

    def replay_strategy(self) -> str:
        """How history reaches a new session (a ReplaySummary.strategy)."""
        return "full_history"

    def provider_ttfb_label(self) -> str:
        return f"{self.name} TTFB (Pipecat metrics)"

    def call_maker(self, config: RunSettings) -> tuple[str, str] | None:
        """Which of a model's two models makes its tool calls, as the judge is told: ("front" |
        "back", that model's id) for a model that delegates (a duplex front with its backend);
        None: the model is one model."""
        return None

    def delegating(self, service: ServiceT) -> bool:
        """Whether the session's service has delegated work in flight (a duplex model's backend at
        work: its reply is still to come); never for a model that does not delegate."""
        return False


def known_models() -> list[str]:
    """Every model alias (from the catalog: no provider module is imported)."""
    return catalog.known_models()


def get_runner(model: str) -> ProviderRunner:
    """A new runner for a model alias (its provider module imported now); ValueError listing
    the known aliases otherwise."""
    runner = catalog.load(catalog.find(model).runner)()
    assert isinstance(runner, ProviderRunner)
    return runner
