"""The cost columns of run_results.csv and model_summary.csv (ours, after the reference's): what
each run's services said they used, summed by kind, what that cost by the price table
(`arena_tui.cost`: an estimate, its prices' dates in `cost_note`), dollars per passed turn, and the
judge's cost apart. A cost no price covers is empty with `cost_note` naming what had none
("price unknown: …"), a run that recorded no usage "usage not recorded": never 0."""

from __future__ import annotations

from typing import Any

from ..cost import ENV, NO_JUDGE_REQUEST, Estimate, buckets, current_prices
from .leaderboard import BoardRow, RunFigures

#: usage summed over a run, as billed: tokens by kind, an STT's audio seconds, a TTS's characters,
#: sessions' connected seconds
USAGE_COLUMNS = [
    "usage_text_in_tokens", "usage_cached_in_tokens", "usage_audio_in_tokens", "usage_text_out_tokens",
    "usage_audio_out_tokens", "usage_stt_audio_seconds", "usage_tts_characters", "usage_session_seconds",
]  # fmt: skip
COST_RUN_COLUMNS = [*USAGE_COLUMNS, "cost_usd", "cost_per_passed_turn_usd", "cost_note", "judge_cost_usd", "judge_cost_note"]
COST_ROW_COLUMNS = ["cost_usd_total", "cost_per_passed_turn_usd", "cost_note", "judge_cost_usd_total", "judge_cost_note"]
#: text columns: not averaged over runs
COST_NOTES = {"cost_note", "judge_cost_note"}


def _note(cost: Estimate) -> str:
    return cost.label if cost.known else cost.text()


def _usage(f: RunFigures) -> dict[str, Any]:
    totals: dict[str, float] = dict.fromkeys(USAGE_COLUMNS, 0)  # tokens and characters stay ints
    if not f.run.usage:
        return dict.fromkeys(USAGE_COLUMNS)  # not recorded: empty, not 0
    for u in f.run.usage:
        if u.service == "llm":
            b = buckets(u)
            totals["usage_text_in_tokens"] += b["text_in"] + b["cache_write_in"]
            totals["usage_cached_in_tokens"] += b["cached_text_in"] + b["cached_audio_in"]
            totals["usage_audio_in_tokens"] += b["audio_in"]
            totals["usage_text_out_tokens"] += b["text_out"]
            totals["usage_audio_out_tokens"] += b["audio_out"]
        totals["usage_stt_audio_seconds"] += round(u.audio_seconds, 3)
        totals["usage_tts_characters"] += u.characters
        totals["usage_session_seconds"] += round(u.session_seconds, 3)
    return totals


def cost_fields(cost: Estimate, judge: Estimate, passes: int) -> dict[str, Any]:
    """A run's cost and, apart, its judge's as numbers (None: not known: the note says why) with
    their notes: run_results.csv's cost columns and `arena-tui runs --json`'s fields."""
    return {
        "cost_usd": cost.value,
        "cost_per_passed_turn_usd": cost.per_pass(passes),
        "cost_note": _note(cost),
        "judge_cost_usd": judge.value,
        "judge_cost_note": _note(judge) if judge.reports else NO_JUDGE_REQUEST,
    }


def run_cost_columns(f: RunFigures) -> dict[str, Any]:
    """One run's usage and cost columns (`COST_RUN_COLUMNS`)."""
    return {**_usage(f), **cost_fields(f.run.cost, f.run.judge_cost, f.strict.passes)}


def row_cost_columns(row: BoardRow) -> dict[str, Any]:
    """A row's cost over all its runs (`COST_ROW_COLUMNS`)."""
    return {
        "cost_usd_total": row.cost.value,
        "cost_per_passed_turn_usd": row.cost_per_pass,
        "cost_note": _note(row.cost),
        "judge_cost_usd_total": row.judge_cost.value,
        "judge_cost_note": _note(row.judge_cost) if row.judge_cost.reports else NO_JUDGE_REQUEST,
    }


def cost_note(costs: list[Estimate]) -> str | None:
    """What a table's cost figures are (None: no figure in it): an estimate, of which prices and
    from which table; the judge's apart."""
    total = sum(costs, Estimate())
    if not total.reports:
        return None
    table = current_prices()
    source = f"prices from {table.override} over arena-tui's table" if table.override else "arena-tui's price table"
    return f"cost: {total.label} ({source}; --prices FILE or {ENV} to change); the judge's cost is apart"
