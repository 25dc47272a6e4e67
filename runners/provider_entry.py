"""What a provider's folder says of itself, as plain data: `Provider` (its aliases, keys,
packages, runner and fake), the reasoning `Effort` a model takes and its `Capabilities`, and the
rules listing and the runners share (a model id, an installed package, what a run still needs).

Each provider folder's `entry.py` (`runners/providers/<name>/entry.py`) declares its
`PROVIDERS` with these and imports nothing else of ours, so `runners/catalog.py` assembles
the catalog from the folders without importing a runner, a fake or Pipecat.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

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
class Capabilities:
    """What a model can do beyond its aliases, as `arena-tui models` says it (the reasoning
    effort and the manual commit are `Provider.efforts` and `Provider.manual_commit`)."""

    #: the sample rate of the model's speech as it arrives (Hz); 0: a text model
    output_rate: int = 0
    #: the service ends one session (socket, stream or call) after this long (its documented
    #: limit, seconds); None: none documented
    session_limit_s: float | None = None
    #: a run outlives a session by our rotation (a new session given the history as text:
    #: `runners/rotation.py`); False: one session per run
    rotation: bool = True
    #: it listens and speaks at once and decides itself when to answer (no commit, no response
    #: trigger): the duplex turn loop
    duplex: bool = False
    #: it hands tools or reasoning to a backend model of its own
    delegation: bool = False

    @property
    def text(self) -> str:
        """Its capabilities in a few words (`arena-tui models`): `24 kHz, 60 min session, rotation`."""
        parts = [f"{self.output_rate / 1000:g} kHz"] if self.output_rate else []
        if self.session_limit_s is not None:
            parts.append(f"{self.session_limit_s / 60:g} min session")
        parts += [word for word, on in (("rotation", self.rotation), ("duplex", self.duplex),
                                        ("delegation", self.delegation)) if on]
        return ", ".join(parts)


#: a text model's capabilities: no speech out, history sent with every request (no session to rotate)
TEXT = Capabilities(rotation=False)


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
    #: environment variables a real run needs besides the key, each → what it names (a resource's
    #: endpoint, a cloud project): checked as the keys are, never for a fake
    setting_env: Mapping[str, str] = field(default_factory=dict)
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
    #: what its models can do (output rate, session limit, rotation, duplex, delegation)
    caps: Capabilities = Capabilities()
    #: whose price list bills its usage when that is not its models' makers' (a reseller's: Azure
    #: bills its own meters for OpenAI's model ids): its usage reports name the model
    #: `<price_scope>/<model id>`, so the maker's list price never prices them ("" : the maker's)
    price_scope: str = ""
    #: the most sessions its account holds open at once, where the provider documents one limit for
    #: every account (None: none documented, or it depends on the account's tier). A campaign never
    #: opens more against it at once, across all its workers; `campaign run --provider-cap NAME=N`
    #: gives an account's own (arena_tui/orchestration/provider_caps.py)
    max_sessions: int | None = None

    @property
    def kind(self) -> str:
        """What `arena-tui models` shows: text, simulator, duplex (a full-duplex audio model) or audio."""
        return "text" if self.mode == "text" else ("simulator" if self.simulated else "duplex" if self.caps.duplex else "audio")

    def model_id(self, alias: str) -> str:
        return model_id(alias, self.aliases, self.model_prefix, self.model_env, self.alias_family)

    def problems(self, *, fake: bool = False) -> list[str]:
        """What a run with default settings still needs (`ProviderRunner.preflight` of a
        `RunSettings(model=alias, fake=fake)`): packages, and keys unless it talks to a fake."""
        return requirements(self.name, self.packages, self.key_env, any_key=self.any_key,
                            install_hint=self.install_hint, keys=not (self.simulated or fake), setting_env=self.setting_env)


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
                 install_hint: str = "", keys: bool = True, setting_env: Mapping[str, str] | None = None) -> list[str]:
    """Packages not installed and (`keys`) keys and settings (`setting_env`: variable → what it
    names) not set, each a line naming what to do."""
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
    problems += [f"{name}: environment variable {e} is not set ({what})" for e, what in (setting_env or {}).items()
                 if not os.environ.get(e)]
    return problems
