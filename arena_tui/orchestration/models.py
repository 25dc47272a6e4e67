"""The model list: every alias, its provider, and what a run with it still needs.

Read from the providers' catalog (`runners.providers.catalog`: plain data), so listing imports
no provider module and no Pipecat: `arena-tui models` prints it, the new-run dialog offers it
(`launch.EngineLauncher.models`). Keys are checked for presence only; their values never leave
the environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena_tui.spine.local_llm import LOCAL_LLM_URL, LOCAL_LLM_URL_ENV


@dataclass(frozen=True)
class Model:
    alias: str
    provider: str
    model_id: str
    kind: str  # text, simulator or audio
    key_env: tuple[str, ...]  # the environment variables that hold its key
    simulated: bool
    needs: tuple[str, ...]  # what a run against the real service still needs (keys, packages)
    needs_fake: tuple[str, ...]  # what a run against its local fake still needs
    manual_commit: bool = False  # its protocol lets `--disable-vad` close the user's turn by our commit


def models() -> list[Model]:
    """Every model alias, in alias order."""
    from runners.providers import catalog  # deferred: --help imports every command module; the catalog is data (no Pipecat)

    needs: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # per provider: its aliases need the same
    out = []
    for alias in catalog.known_models():
        p = catalog.find(alias)
        if p.name not in needs:
            needs[p.name] = (tuple(short(x) for x in p.problems()), tuple(short(x) for x in p.problems(fake=True)))
        out.append(Model(alias, p.name, p.model_id(alias), p.kind, p.key_env, p.simulated, *needs[p.name],
                         manual_commit=p.manual_commit))
    return out


def short(problem: str) -> str:
    """'nova-sonic: environment variable AWS_ACCESS_KEY_ID is not set (…)' → 'AWS_ACCESS_KEY_ID'."""
    text = problem.split(": ", 1)[-1]
    m = re.match(r"environment variable (\S+)", text)
    return m.group(1) if m else text


@dataclass(frozen=True)
class Cascades:
    """How to spell a cascade (`cascade:<stt>+<llm>+<tts>`) and what each part may be."""

    spelling: str
    stt: tuple[str, ...]  # speech-to-text parts
    tts: tuple[str, ...]  # text-to-speech parts
    examples: tuple[str, ...]
    keys: dict[str, tuple[str, ...]]  # part → its key's variables (the parts that need one)
    local: tuple[str, ...]  # parts that run in this process (the [local] extra, weights on this machine)
    local_hint: str  # how to install them
    local_llm: str  # the spelling of a locally served text model, e.g. local:<model>
    local_llm_url: str  # where it is served: "ENV (default URL)"
    local_example: str


def cascades() -> Cascades:
    from runners.providers import catalog  # deferred: --help imports every command module; the catalog is data (no Pipecat)

    parts = {**catalog.STT, **catalog.TTS}
    return Cascades(f"{catalog.CASCADE_PREFIX}<stt>+<llm>+<tts>", tuple(catalog.STT), tuple(catalog.TTS),
                    catalog.CASCADE_EXAMPLES, {name: c.key_env for name, c in parts.items() if c.key_env},
                    tuple(name for name, c in parts.items() if c.local), catalog.LOCAL_HINT,
                    " ".join(f"{p.alias_family}<model>" for p in catalog.FAMILIES),
                    f"{LOCAL_LLM_URL_ENV} (default {LOCAL_LLM_URL})", catalog.LOCAL_EXAMPLE)
