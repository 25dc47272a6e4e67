"""What answered a run when it was not the real service: one label for every surface.

A run is `simulated` (the stored `simulator` flag) when it talked to something local: our
simulator (`--model sim`) or a provider's local protocol fake (`--fake`, `RecordedRun.fake`). A
user comparing scores must know which one, so every screen, listing and export asks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .labels import label_rows
from .recorded import RecordedRun
from .settings import ALL_SPEAKERS, FULL_DUPLEX, FULL_DUPLEX_LABEL, TTS, options

__all__ = ["ALL_SPEAKERS", "FAKE", "FULL_DUPLEX", "FULL_DUPLEX_LABEL", "SIMULATOR", "TTS", "against", "listed_model",
           "recorded_of", "source_label", "tag", "variant_labels", "variants_text"]

SIMULATOR = "simulator"
FAKE = "protocol fake"
#: a run's settings as a surface holds them: read (`RecordedRun`), or as stored (a `run_started.config`, a
#: campaign cell's choices), or none (a run not started)
Recorded = RecordedRun | Mapping[str, Any] | None


def recorded_of(config: Recorded) -> RecordedRun:
    """The run's settings read (`spine.recorded`), whichever way a surface holds them."""
    return config if isinstance(config, RecordedRun) else RecordedRun(config)


def source_label(simulator: bool, config: Recorded) -> str | None:
    """`protocol fake`, `simulator`, or None for the real service."""
    if recorded_of(config).fake:
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


#: the options a run's label says, in the table's order
LABELLED = options("label")


def variant_labels(config: Recorded, *, faults: bool = True) -> tuple[str, ...]:
    """How a run's input differed from the default, when it did: a human speaker's recordings
    instead of TTS (`speech: person1`), an acoustic condition the user's audio was heard under (its
    spec: `telephony`, `noise=10`), a reasoning effort asked of the model (`effort=high`), the user's
    turn closed by our own commit instead of the provider's VAD (`manual commit`), a full-duplex
    model's turns delimited by their windows (`full duplex`: `arena_tui.spine.duplex.FULL_DUPLEX_TURN`),
    a user's own Pipecat class (`service: Class`), faults injected into the simulator (`faults: 1:no_response*`):
    each option's `label` (`spine.settings.OPTIONS`, in its order), one a stored value this version
    cannot read said as stored (`condition: underwater`). Numbers from such runs are not those of
    the default setup, so every surface that groups or heads a run names them (leaderboard rows, the
    run header, headless output; `faults=False`: the run screen says the faults on its own line)."""
    run = recorded_of(config)
    labels = []
    for option in LABELLED:
        if option.key == "faults" and not faults:
            continue
        value = run.value(option)
        unread = run.unread_value(option)
        label = f"{option.key}: {unread}" if unread is not None else option.label(value) if option.label else None
        if label:
            labels.append(label)
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
