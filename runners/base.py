"""What a provider runner supplies to the engine; everything else (pacing, turns, tools,
timeline, rotation) is the engine's and provider-agnostic.

A runner builds one Pipecat speech-to-speech service per session. The engine owns the
pipeline around it, registers the tool handler, and asks the runner only what differs
between providers: models, keys, endpoint, how history is replayed, liveness, TTFB.
"""

from __future__ import annotations

import importlib.util
import json
import os
from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.model import Tool

from .config import Rotation, RunConfig


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
    kickoff: str  # the instruction that starts the session (greeting, or "continue")
    sample_rate: int = 24000
    config: RunConfig


class ProviderRunner(ABC):
    """One per provider. Keep it small: the engine does the rest."""

    name: str = ""
    #: alias → provider model id
    aliases: dict[str, str] = {}
    #: environment variables holding the key(s)
    key_env: tuple[str, ...] = ()
    #: importable modules the service needs
    packages: tuple[str, ...] = ()
    #: whether `--speed` > 1 is allowed (only against a simulator)
    simulated: bool = False
    #: push User{Started,Stopped}SpeakingFrame at each user clip's first speech onset / last
    #: speech end (our VAD of the WAV, at played time) for services that need client-side turns
    turn_frames: bool = False

    def resolve_model(self, alias: str) -> str:
        return self.aliases.get(alias, alias)

    def preflight(self, config: RunConfig) -> list[str]:
        """Problems that stop a run before it starts, each naming what to do."""
        problems = []
        for mod in self.packages:
            if importlib.util.find_spec(mod) is None:
                problems.append(f"{self.name}: Python package {mod!r} is not installed")
        if not (self.simulated or config.fake):
            for env in self.key_env:
                if not os.environ.get(env):
                    problems.append(f"{self.name}: environment variable {env} is not set (the API key)")
        if not (self.simulated or config.fake) and config.speed != 1.0:
            problems.append(f"{self.name}: --speed must be 1 against a real service (got {config.speed})")
        return problems

    @abstractmethod
    def build_service(self, spec: SessionSpec) -> Any:
        """A new Pipecat LLM service for one session, configured and ready to be put in a pipeline."""

    @abstractmethod
    def is_alive(self, service: Any) -> bool:
        """Whether the session's connection is still up (Pipecat does not report a closed socket)."""

    def tools(self, tools: list[Tool]) -> Any:
        """The benchmark's tools as Pipecat's provider-neutral ToolsSchema (for the LLMContext)."""
        from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
        from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

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

    async def start(self, config: RunConfig, benchmark: Any) -> None:  # noqa: B027
        """Per-run setup (e.g. start an in-process simulator, or with `config.fake` the
        provider's local protocol fake scripted from `benchmark`)."""

    async def stop(self) -> None:  # noqa: B027
        """Per-run teardown."""


_REGISTRY: dict[str, type[ProviderRunner]] = {}


def register(*aliases: str):
    """Class decorator: make a runner reachable by each model alias."""

    def deco(cls: type[ProviderRunner]) -> type[ProviderRunner]:
        for a in aliases:
            _REGISTRY[a] = cls
        return cls

    return deco


def known_models() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get_runner(model: str) -> ProviderRunner:
    """The runner for a model alias; ValueError listing the known aliases otherwise."""
    _load_builtin()
    cls = _REGISTRY.get(model)
    if cls is None:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(sorted(_REGISTRY))}")
    runner = cls()
    runner.model_alias = model  # type: ignore[attr-defined]
    return runner


def _load_builtin() -> None:
    import importlib

    for mod in _PROVIDER_MODULES:
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


_PROVIDER_MODULES = (
    "runners.openai_realtime",
    "runners.gemini_live",
    "runners.nova_sonic",
    "runners.glm_realtime",
    "runners.grok",
    "runners.ultravox",
    "runners.text_chat",
)
