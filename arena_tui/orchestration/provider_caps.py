"""Provider caps: the most sessions a campaign holds open against one provider at once, across all its workers.

A provider's account takes only so many sessions at once (a documented concurrent-session limit,
or a tier's); past it new sessions are refused, and turns fail as the provider's fault though the
campaign caused it. The cap is catalog data where the provider documents one limit for every
account (`Provider.max_sessions`); a campaign's `--provider-cap NAME=N` (`[provider_cap]` in a
spec) gives the account's own, over it.

Admission is the coordinator's, not a worker's: both executors hand a queued job to a worker
only when every provider its model uses (`runners.catalog.uses`: its own, a cascade's stages, a
duplex model's backend) has room, and count it from then until the job ends (done, lost or
cancelled: `Executor._finish`), so the cap holds across every process and node. A run holds one
session of each at a time (a rotation closes the old session before it opens the new one); a
rehydrated run holds `parallel`. Jobs held back keep their order; one a cap never has room for
is refused by the preflight (`caps_problems`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from arena_tui.campaign.spec import caps_given_text
from arena_tui.spine.settings import RunSettings
from runners import catalog


class Queued(Protocol):
    """What the caps read of a queued job (`executor.Job`)."""

    @property
    def run_id(self) -> str: ...

    @property
    def settings(self) -> RunSettings: ...


@dataclass(frozen=True)
class Cap:
    """One provider's cap as a campaign runs it: how many sessions at once, and whose word it is."""

    provider: str
    most: int
    given: bool  # by the campaign (`--provider-cap`); else the catalog's `max_sessions`

    @property
    def text(self) -> str:
        return f"{self.most} {self.provider}" + ("" if self.given else " (its documented limit)")


def sessions(settings: RunSettings) -> dict[str, int]:
    """The sessions one run holds at once, by provider (`runners.catalog.uses`); none for a `--service`
    class of the user's own (the catalog does not know whose service it calls)."""
    if settings.service:
        return {}
    each = settings.parallel if settings.mode == "rehydrated" else 1
    return dict.fromkeys(catalog.uses(settings.model), each)


def resolve(models: Iterable[str], given: Mapping[str, int]) -> tuple[dict[str, Cap], list[str]]:
    """The caps on the providers `models` use (the catalog's, the `given` ones over them) and what to
    say of a given cap that caps none of them; ValueError naming a provider the catalog does not know."""
    used = {name for model in models for name in catalog.uses(model)}
    caps = {name: Cap(name, most, False) for name in used if (most := catalog.max_sessions(name)) is not None}
    notes: list[str] = []
    for name, most in given.items():
        try:
            provider = catalog.account(name)
        except ValueError as e:
            raise ValueError(f"--provider-cap {name}={most}: {e}") from None
        if provider in used:
            caps[provider] = Cap(provider, most, True)
        else:
            notes.append(f"--provider-cap {name}={most}: no model of this campaign uses {provider}; it caps nothing")
    return dict(sorted(caps.items())), notes


def caps_text(caps: Mapping[str, Cap]) -> str:
    """What the campaign says of its caps, "" none: "at most 2 openai, 1000 gemini-vertex (its documented limit)
    sessions at once"."""
    return f"at most {', '.join(c.text for c in caps.values())} sessions at once" if caps else ""


def plan_text(models: Iterable[str], given: Mapping[str, int]) -> str:
    """`caps_text` of a recorded campaign (`campaign show`): a cap the catalog no longer knows said as it was given."""
    try:
        return caps_text(resolve(models, given)[0])
    except ValueError:
        return f"{caps_given_text(dict(given))} (as given)"


def runs_at_once(caps: Mapping[str, Cap], models: Iterable[str]) -> int | None:
    """The most runs the caps let run at once, when every model uses a capped provider (their caps
    summed: a bound, so no more workers start than can ever hold a run); None when one is uncapped."""
    used = [[name for name in catalog.uses(model) if name in caps] for model in models]
    if not used or not all(used):
        return None
    return sum(caps[name].most for name in {name for names in used for name in names})


def caps_problems(caps: Mapping[str, Cap], settings: RunSettings) -> list[str]:
    """Why a cell's run could never be admitted under `caps` (it alone holds more sessions than one allows)."""
    return [f"a rehydrated run with --parallel {n} holds {n} {name} sessions at once, more than its cap of "
            f"{caps[name].most} (--provider-cap {name}=N, or a lower parallel)"
            for name, n in sessions(settings).items() if name in caps and n > caps[name].most]


class ProviderCaps:
    """The coordinator's count of sessions open per capped provider, and which queued job may go next."""

    def __init__(self, most: Mapping[str, int] | None = None) -> None:
        self.most = dict(most or {})  # provider -> sessions at once at most
        self.open: Counter[str] = Counter()  # provider -> sessions its admitted runs hold now
        self.peak: Counter[str] = Counter()  # provider -> the most they held at once
        self._held: dict[str, dict[str, int]] = {}  # run id -> what it holds

    def _needs(self, job: Queued) -> dict[str, int]:
        if not self.most:
            return {}
        return {name: n for name, n in sessions(job.settings).items() if name in self.most}

    def fits(self, job: Queued) -> bool:
        """Whether every capped provider the job uses has room for it now."""
        return all(self.open[name] + n <= self.most[name] for name, n in self._needs(job).items())

    def take_next[J: Queued](self, queue: deque[J]) -> J | None:
        """The first queued job that fits, taken off the queue and counted open (None: none fits now)."""
        job = next((j for j in queue if self.fits(j)), None)
        if job is None:
            return None
        queue.remove(job)
        needs = self._needs(job)
        if needs:
            self._held[job.run_id] = needs
            for name, n in needs.items():
                self.open[name] += n
                self.peak[name] = max(self.peak[name], self.open[name])
        return job

    def release(self, run_id: str) -> None:
        """The job ended (done, lost or cancelled): what it held is free (nothing if it held nothing)."""
        for name, n in self._held.pop(run_id, {}).items():
            self.open[name] -= n

    def held_back(self, queue: Iterable[Queued]) -> int:
        """Queued jobs a cap has no room for now."""
        return sum(not self.fits(j) for j in queue) if self.most else 0
