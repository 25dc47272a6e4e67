"""What answered a run when it was not the real service: one label for every surface.

A run is `simulated` (the stored `simulator` flag) when it talked to something local: our
simulator (`--model sim`) or a provider's local protocol fake (`--fake`, `config["fake"]`). A
user comparing scores must know which one, so every screen, listing and export asks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .conditions import CLEAN
from .labels import label_rows

SIMULATOR = "simulator"
FAKE = "protocol fake"
#: the speaker of a run whose user audio is the benchmark's synthesised (TTS) voice: the default
TTS = "tts"
#: `--speaker all`: one run per speaker the benchmark has (tts first); never a run's own speaker
ALL_SPEAKERS = "all"


def source_label(simulator: bool, config: Mapping[str, Any] | None) -> str | None:
    """`protocol fake`, `simulator`, or None for the real service."""
    if (config or {}).get("fake"):
        return FAKE
    return SIMULATOR if simulator else None


def against(source: str, *, loud: bool = False) -> str:
    """`the local simulator` / `a local protocol fake` (`loud`: the name in capitals): what a
    run's scores were against."""
    name = source.upper() if loud else source
    return f"the local {name}" if source == SIMULATOR else f"a local {name}"


def tag(source: str | None) -> str:
    """` [SIM]` / ` [FAKE]` after a model's name in a list (empty for the real service)."""
    if not source:
        return ""
    return " [SIM]" if source == SIMULATOR else " [FAKE]"


def speaker_of(config: Mapping[str, Any] | None) -> str:
    """Whose voice the run's user audio is: `tts` (the default, and every run stored before
    speakers) or a human speaker's name (`real_audio/<speaker>/`)."""
    speaker = (config or {}).get("speaker")
    return speaker if isinstance(speaker, str) and speaker else TTS


def condition_of(config: Mapping[str, Any] | None) -> str:
    """The acoustic condition the run's user audio was heard under, as stored (`clean`: the
    default, and every run stored before conditions)."""
    condition = (config or {}).get("condition")
    return condition if isinstance(condition, str) and condition else CLEAN.label


def effort_of(config: Mapping[str, Any] | None) -> str:
    """The reasoning effort asked of the model ("" for the provider's default)."""
    effort = (config or {}).get("effort")
    return effort if isinstance(effort, str) else ""


#: `run_started.config` of a run in the full-duplex turn loop (`runners/run/full_duplex.py`), and its label
FULL_DUPLEX = "full_duplex"
FULL_DUPLEX_LABEL = "full duplex"


def variant_labels(config: Mapping[str, Any] | None, *, faults: bool = True) -> tuple[str, ...]:
    """How a run's input differed from the default, when it did: a human speaker's recordings
    instead of TTS (`speech: person1`), an acoustic condition the user's audio was heard under (its
    spec: `telephony`, `noise=10`), a reasoning effort asked of the model (`effort=high`), the user's
    turn closed by our own commit instead of the provider's VAD (`manual commit`), a full-duplex
    model's turns delimited by their windows (`full duplex`: `arena_tui.spine.duplex.FULL_DUPLEX_TURN`),
    a user's own Pipecat class (`service: Class`), faults injected into the simulator (`faults: 1:no_response*`).
    Numbers from such runs are not those of the default
    setup, so every surface that groups or heads a run names them (leaderboard rows, the run
    header, headless output; `faults=False`: the run screen says the faults on its own line)."""
    cfg = config or {}
    labels = []
    speaker = speaker_of(cfg)
    if speaker != TTS:
        labels.append(f"speech: {speaker}")
    if (condition := condition_of(cfg)) != CLEAN.label:  # (stored canonical: `Condition.label`)
        labels.append(condition)
    if effort := effort_of(cfg):
        labels.append(f"effort={effort}")
    if cfg.get("disable_vad"):
        labels.append("manual commit")
    if cfg.get(FULL_DUPLEX):
        labels.append(FULL_DUPLEX_LABEL)
    service = cfg.get("service")
    if isinstance(service, str) and service:
        labels.append(f"service: {service.rpartition(':')[2]}")
    injected = cfg.get("faults")
    if faults and isinstance(injected, str) and injected:  # injected into the simulator: its failures are by design
        labels.append(f"faults: {injected}")
    return tuple(labels)


def variants_text(labels: tuple[str, ...]) -> str:
    """`variant_labels` as every surface puts them after a model: ` (telephony, effort=high)`, or ""."""
    return f" ({', '.join(labels)})" if labels else ""


def listed_model(model: str, source: str | None, labels: tuple[str, ...]) -> str:
    """A run's model as a command's listing prints it (`runs`, `search`): `sim [simulator] (telephony,
    effort=high)`, its source (`source_label`) bracketed and how its input differed, by the one rule of
    row labels (`spine.labels`: what tells runs apart first; a line printed whole, to be read or grepped
    alone, says every part)."""
    parts = label_rows([(model, labels)], share=False, enclose="()").rows[0].parts_text()
    return (f"{model} [{source}]" if source else model) + (f" {parts}" if parts else "")
