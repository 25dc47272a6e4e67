"""What a run cost, estimated from what its services said they used (`usage` events) and a dated
price table (`prices.json`, overridable by `--prices FILE` or `ARENA_TUI_PRICES`); the judge's
requests apart. The one place usage is priced: the run header, the runs list, the leaderboard,
the report and its CSVs all show `Estimate.text`/`short` of the same figures (docs/cost.md)."""

from __future__ import annotations

from .estimate import NO_JUDGE_REQUEST, NO_USAGE, UNKNOWN, Estimate, buckets, judge_estimate, money, price_report, run_estimate
from .table import ENV, Price, PriceTable, current_prices, load_prices, prices_path

__all__ = [
    "ENV",
    "NO_JUDGE_REQUEST",
    "NO_USAGE",
    "UNKNOWN",
    "Estimate",
    "Price",
    "PriceTable",
    "buckets",
    "current_prices",
    "judge_estimate",
    "load_prices",
    "money",
    "price_report",
    "prices_path",
    "run_estimate",
]
