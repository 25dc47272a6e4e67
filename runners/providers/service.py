"""Your own Pipecat service: `--service package.module:Class` with `--service-arg key=value`.

The reference harness runs any Pipecat LLM service class by its dotted path; so do we, through
the same engine: a text service (an `LLMService` that is not a realtime one) goes through the
text loop, a realtime speech-to-speech service (its class overrides `service_metadata_frame`,
as every Pipecat realtime service does to say so) through the audio loop. `--model` is the model
id the class is given (`Settings(model=…, system_instruction=…)`, the benchmark's prompt), and
each `--service-arg` a constructor argument: a value that reads as JSON is taken as JSON
(numbers, true/false, lists, objects), anything else as text, and `env:NAME` is the variable's
value read when a session opens (the only way to give a key: the run's settings are stored).

Before anything starts, `preflight` says what the class needs, one line each: the module that
would not import (and why), a class that is no LLM service, constructor parameters without a
default that were not given, arguments it does not take, variables not set. There is no local
fake for a class we do not know: point it at a local server with its own argument (an
OpenAI-compatible one's `base_url`), and it may run faster than real time only there.

What a generic class cannot be asked: a realtime class is driven as Pipecat drives it (the
greeting from the context, its own reconnects); a session the engine rotates is not seeded
with the history (only our provider runners know their protocol's replay), so its turns after a
rotation start a fresh conversation. Liveness is not known either: a dead session shows as
a turn with no reply, which the engine retries in a new session.
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

from pipecat.services.llm_service import LLMService

from ..base import ProviderRunner, RunError, SessionSpec, is_local, speed_problem
from arena_tui.spine.env_refs import env_name, is_env_ref, resolve

from arena_tui.spine.settings import RunSettings
from .text_base import TTFT_LABEL

NAME = "service"


def load_class(path: str) -> type[LLMService]:
    """The class "package.module:Class" names, imported now; RunError in one line otherwise
    (a missing package named, as the import said it)."""
    module, _, name = path.partition(":")
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # ModuleNotFoundError, or a Pipecat service's "pip install pipecat-ai[x]" Exception
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RunError(f"--service {path}: cannot import {module}: {first}") from None
    cls = getattr(mod, name, None)
    if not isinstance(cls, type):
        raise RunError(f"--service {path}: {module} has no class {name}")
    if not issubclass(cls, LLMService):
        raise RunError(f"--service {path}: {name} is not a Pipecat LLM service (pipecat.services.llm_service.LLMService)")
    return cls


def is_realtime(cls: type) -> bool:
    """A realtime speech-to-speech service: Pipecat's say so by overriding `service_metadata_frame`."""
    return getattr(cls, "service_metadata_frame", None) is not LLMService.service_metadata_frame


def arg_value(raw: str) -> Any:
    """A `--service-arg` value: JSON when it reads as JSON, else the text; `env:NAME` kept as is
    (read at session start by `ServiceRunner.arguments`)."""
    if is_env_ref(raw):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


class ServiceRunner(ProviderRunner[LLMService]):
    """A user's Pipecat service class, through the loop its kind needs (`ServiceTextRunner`,
    `ServiceAudioRunner`); built by `service_runner`."""

    name = NAME

    def __init__(self, path: str, cls: type[LLMService]) -> None:
        self.path, self.cls = path, cls
        self.label = cls.__name__

    # -- what the class needs

    def parameters(self) -> tuple[dict[str, inspect.Parameter], bool]:
        """The constructor's named parameters, and whether it takes any keyword (**kwargs)."""
        params = dict(inspect.signature(self.cls.__init__).parameters)
        params.pop("self", None)
        any_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        named = {n: p for n, p in params.items() if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)}
        return named, any_kw

    def supplied(self) -> set[str]:
        """What the runner gives the class itself: its Settings (model and the benchmark's prompt)."""
        return {"settings"} if self.settings_class() is not None else set()

    def settings_class(self) -> Any:
        settings = getattr(self.cls, "Settings", None)
        fields = getattr(settings, "model_fields", None) or getattr(settings, "__dataclass_fields__", None) or {}
        return settings if "model" in fields and "system_instruction" in fields else None

    #: what its class takes of what is given, the speed (its URLs), the input
    checks = ("arguments", "speed", "input")

    def check_arguments(self, config: RunSettings) -> list[str]:
        """Every argument the class needs given, none it does not take, each env: variable set, no fake."""
        problems = []
        where = f"--service {self.path}"
        named, any_kw = self.parameters()
        given = set(config.service_args)
        missing = [n for n, p in named.items() if p.default is inspect.Parameter.empty and n not in given | self.supplied()]
        if missing:
            problems.append(f"{where}: {self.label} needs {', '.join(missing)} (no default): pass "
                            + " ".join(f"--service-arg {n}=…" for n in missing)
                            + (" (a key as env:VARIABLE)" if any("key" in n for n in missing) else ""))
        unknown = sorted(n for n in given if n not in named) if not any_kw else []
        if unknown:
            problems.append(f"{where}: {self.label} takes no argument {', '.join(unknown)} "
                            f"(it takes: {', '.join(sorted(named)) or 'none'})")
        unset = [env_name(v) for v in config.service_args.values() if is_env_ref(v) and not resolve(v)]
        problems += [f"{where}: environment variable {name} is not set" for name in unset]
        if config.fake:
            problems.append(f"{where}: no local fake for a class of your own; point it at a local server with its own "
                            "argument instead (e.g. --service-arg base_url=http://127.0.0.1:PORT/v1)")
        return problems

    def check_speed(self, config: RunSettings) -> list[str]:
        """On this machine when every URL its class is given is (`speed_problem`)."""
        urls = self.urls(config)
        return speed_problem(f"--service {self.path}", config.speed, local=bool(urls) and all(is_local(u) for u in urls),
                             why=": every URL its class is given must be on this machine")

    # -- models, endpoint, key

    def resolve_model(self, alias: str) -> str:
        return alias  # --model is the model id the class is given

    def urls(self, config: RunSettings) -> list[str]:
        """The URLs the class is given (`base_url` first): where its sessions connect, as far as we can tell."""
        args = sorted(config.service_args.items(), key=lambda kv: kv[0] != "base_url")
        return [v for _, v in args if "://" in v and not is_env_ref(v)]

    def endpoint(self, config: RunSettings) -> str:
        """The class's `base_url` argument, else the first URL it is given ("" : its own default)."""
        urls = self.urls(config)
        return urls[0] if urls else ""

    def arguments(self, config: RunSettings) -> dict[str, Any]:
        """The constructor arguments: each `--service-arg`, `env:` ones read now."""
        out = {}
        for name, raw in config.service_args.items():
            out[name] = resolve(raw) if is_env_ref(raw) else arg_value(raw)
        return out

    # -- sessions

    def build_service(self, spec: SessionSpec) -> LLMService:
        kwargs = self.arguments(spec.config)
        settings = self.settings_class()
        if settings is not None and "settings" not in kwargs:
            kwargs["settings"] = settings(model=spec.model, system_instruction=spec.system_prompt)
        try:
            return self.cls(**kwargs)
        except Exception as e:
            raise RunError(f"--service {self.path}: {self.label}(…) failed: {type(e).__name__}: {e}") from None

    def is_alive(self, service: LLMService) -> bool:
        return True  # a class we do not know: a dead session is a turn without reply, retried in a new one

    def provider_ttfb_label(self) -> str:
        return f"{self.label} TTFB (Pipecat metrics)"


class ServiceTextRunner(ServiceRunner):
    mode = "text"

    def provider_ttfb_label(self) -> str:
        return TTFT_LABEL


class ServiceAudioRunner(ServiceRunner):
    mode = "audio"


def service_runner(path: str) -> ServiceRunner:
    """The runner of a user's service class (its module imported now); RunError in one line when
    it cannot be loaded or is no LLM service."""
    cls = load_class(path)
    return (ServiceAudioRunner if is_realtime(cls) else ServiceTextRunner)(path, cls)
