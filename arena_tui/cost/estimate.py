"""What a run cost, estimated: each usage report its services made (`spine.events.Usage`), priced
by the dated table (`table.py`), and the judge's requests apart (`judge_estimate`). A report no
entry prices is "price unknown", named, never 0; a run that recorded no usage (recorded before
usage was kept, or imported) says so. Every figure is labelled with the dates of the prices it used
("estimate, prices of 2026-12-07"): the one wording every surface shows (`Estimate.text`).

An LLM's tokens are split into what is billed apart (`buckets`): Pipecat's `total_tokens` is gross
of the prompt cache on every service, its `prompt_tokens` gross or net as the provider reports
(Anthropic, Bedrock: net), so the input is `total - completion` at least `prompt`; the audio share
of input, output and cache reads (OpenAI Realtime, Gemini Live, Nova Sonic) is billed at the audio
rates, the rest at the text rates, reasoning with the output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from arena_tui.spine.events import TokenUsage, Usage

from .table import Price, PriceTable

NO_USAGE = "usage not recorded"
NO_JUDGE_REQUEST = "no judge request"  # judged offline (or by a person), or not judged: nothing was billed
UNKNOWN = "price unknown"
#: what each token bucket is, in words (a missing price names it)
BUCKET_WORDS = {
    "text_in": "text input", "cached_text_in": "cached text input", "cache_write_in": "cache writes",
    "text_out": "text output", "audio_in": "audio input", "cached_audio_in": "cached audio input",
    "audio_out": "audio output",
}  # fmt: skip
#: a bucket without its own price billed at another's (no discount); every other missing price is unknown
FALLBACK = {"cached_text_in": "text_in", "cache_write_in": "text_in", "cached_audio_in": "audio_in"}
LOCAL_JUDGE = "local"  # a keyless server of the user's own: nobody bills its tokens
LOCAL_MODEL = "local:"  # the alias of a model such a server answers for (`local:llama3.2`)
FREE = "served locally: no bill"
FREE_JUDGES = ("heuristic", "human")  # no request was sent


def buckets(u: Usage) -> dict[str, int]:
    """An LLM report's tokens by what they are billed as (the keys of `table.TOKEN_PRICES`)."""
    total = u.total_tokens or u.prompt_tokens + u.completion_tokens
    gross_in = max(total - u.completion_tokens, u.prompt_tokens)
    cached_audio = u.cache_read_input_audio_tokens
    cached_text = max(0, u.cache_read_input_tokens - cached_audio)
    out = {
        "text_in": gross_in - u.input_audio_tokens - cached_text - u.cache_creation_input_tokens,
        "cached_text_in": cached_text,
        "cache_write_in": u.cache_creation_input_tokens,
        "audio_in": u.input_audio_tokens - cached_audio,
        "cached_audio_in": cached_audio,
        "text_out": u.completion_tokens - u.output_audio_tokens,
        "audio_out": u.output_audio_tokens,
    }
    return {k: max(0, v) for k, v in out.items()}


@dataclass(frozen=True)
class Estimate:
    """A cost in US dollars over the reports priced, what had no price, and the prices' dates."""

    usd: float = 0.0
    unknown: tuple[str, ...] = ()  # what no entry prices ("gemini-3.1-flash (audio output)")
    dates: tuple[str, ...] = ()  # the dates of the entries used, sorted
    reports: int = 0  # usage reports it covers (0: none recorded)
    missing: int = 0  # runs in it that recorded no usage at all (recorded before usage was kept, imported)

    def __add__(self, other: Estimate) -> Estimate:
        return Estimate(self.usd + other.usd, tuple(dict.fromkeys((*self.unknown, *other.unknown))),
                        tuple(sorted({*self.dates, *other.dates})), self.reports + other.reports,
                        self.missing + other.missing)

    @property
    def known(self) -> bool:
        """A figure to show: usage was recorded (by every run it sums) and every report of it has a price."""
        return self.reports > 0 and not self.unknown and not self.missing

    @property
    def label(self) -> str:
        """`estimate, prices of 2026-12-07` (of 2025-04-14…2026-12-07 when entries differ)."""
        if not self.dates:
            return FREE if self.known and not self.usd else "estimate"
        span = self.dates[0] if len(self.dates) == 1 else f"{self.dates[0]}…{self.dates[-1]}"
        return f"estimate, prices of {span}"

    @property
    def value(self) -> float | None:
        """The dollars, only when known (a CSV's number; None: unknown or not recorded)."""
        return self.usd if self.known else None

    def short(self) -> str:
        """`$0.0123`, `price unknown` or `usage not recorded`: a cell."""
        if not self.reports or self.missing:
            return NO_USAGE
        return money(self.usd) if self.known else UNKNOWN

    def text(self) -> str:
        """The figure in full: `$0.0123 (estimate, prices of 2026-12-07)`, `price unknown: X`, `usage not recorded`
        (`… for 1 of its runs`: a sum no total is given for)."""
        if not self.reports:
            return NO_USAGE
        if self.unknown:
            return f"{UNKNOWN}: {', '.join(self.unknown)}"
        if self.missing:
            return f"{NO_USAGE} for {self.missing} of its runs"
        return f"{money(self.usd)} ({self.label})"

    def per_pass(self, passes: int) -> float | None:
        """Dollars per passed turn (None: not known, or no turn passed)."""
        return self.usd / passes if self.known and passes > 0 else None

    def per_pass_text(self, passes: int) -> str:
        if not self.known:
            return self.short()
        return money(self.usd / passes) if passes > 0 else "no turn passed"


def money(usd: float) -> str:
    """Dollars with the digits a small figure needs: `$0.0042`, `$0.123`, `$2.50`, `$1,234.50`."""
    if usd == 0:
        return "$0"
    if usd < 0.1:
        return f"${usd:.4f}"
    return f"${usd:.3f}" if usd < 1 else f"${usd:,.2f}"


def price_report(u: Usage, entry: Price | None, name: str) -> Estimate:
    """One report priced by its entry (None: no entry covers it)."""
    if entry is None:
        return Estimate(unknown=(name,), reports=1)
    dates = (entry.date,)
    by_minute = entry.minutes.get("session")
    if u.service == "session" or (u.service == "llm" and by_minute is not None):
        # billed by connected time, tokens included; a token-priced model's session costs nothing itself
        usd = u.session_seconds / 60.0 * by_minute if by_minute is not None and u.service == "session" else 0.0
        return Estimate(usd, (), dates, 1)
    if u.service == "stt":
        rate = entry.minutes.get("audio")
        return Estimate(u.audio_seconds / 60.0 * rate, (), dates, 1) if rate is not None else Estimate(
            unknown=(f"{name} (audio minutes)",), reports=1)
    if u.service == "tts":
        if entry.characters is None:
            return Estimate(unknown=(f"{name} (characters)",), reports=1)
        return Estimate(u.characters / 1e6 * entry.characters, (), dates, 1)
    usd, missing = 0.0, []
    for bucket, n in buckets(u).items():
        rate = entry.tokens.get(bucket, entry.tokens.get(FALLBACK.get(bucket, ""), None))
        if n and rate is None:
            missing.append(BUCKET_WORDS[bucket])
        elif n and rate is not None:
            usd += n / 1e6 * rate
    if missing:
        return Estimate(unknown=(f"{name} ({', '.join(missing)})",), reports=1)
    return Estimate(usd, (), dates, 1)


def run_estimate(alias: str, usages: Iterable[Usage], table: PriceTable) -> Estimate:
    """The model's side of a run: every report its services made, each priced by the entry of the
    model it named (an LLM's or a session's also by the run's alias). No report at all: the run
    recorded no usage (`missing`), so no sum that holds it has a total."""
    usages = list(usages)
    total = Estimate(missing=0 if usages else 1)
    for u in usages:
        names = (u.model, alias) if u.service in ("llm", "session") else (u.model,)
        entry = table.find(*names)
        if alias.startswith(LOCAL_MODEL) and u.service in ("llm", "session") and entry is None:
            total += Estimate(reports=1)  # a server of the user's own
            continue
        if entry is not None and u.service == "llm" and u.model and u.model not in entry.names() and "session" in entry.minutes:
            entry = None  # another model's tokens (a live model's backend) are not inside the run's model's minutes
        total += price_report(u, entry, u.model or alias)
    return total


def judge_estimate(usage: Mapping[str, TokenUsage], table: PriceTable) -> Estimate:
    """The judge's side, apart: every request's tokens per judge (`Store.judge_usage`), priced by
    the judge's model; an offline or a person's verdict cost nothing, a local server bills nobody."""
    total = Estimate()
    for judge, t in usage.items():
        kind, _, model = judge.partition(":")
        if kind in FREE_JUDGES or not (t.input_tokens or t.output_tokens):
            continue
        if kind == LOCAL_JUDGE:
            total += Estimate(reports=1)
            continue
        report = Usage(model=model, prompt_tokens=t.input_tokens, completion_tokens=t.output_tokens,
                       total_tokens=t.input_tokens + t.output_tokens, cache_read_input_tokens=t.cached_input_tokens)
        total += price_report(report, table.find(model), model or judge)
    return total
