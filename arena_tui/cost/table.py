"""The dated price table: the one shipped with arena-tui (`prices.json` beside this module), its
entries replaced or extended by a user's file (`--prices FILE`, else `ARENA_TUI_PRICES`). Prices
change often and differ by account, so they are data, each with the date it held and where it was
read, never numbers in code. A file that is not a price table is refused in one line naming the
file and the field (`CliError`), before anything is shown with it.

An entry prices one alias (its key) and the model ids its service reports (`models`):
- `per_million_tokens`: `text_in`, `cached_text_in`, `cache_write_in`, `text_out`, `audio_in`,
  `cached_audio_in`, `audio_out` (US dollars per million tokens); a missing cached or cache-write
  price bills those tokens at the input price (no discount), any other missing one leaves what
  needs it unpriced ("price unknown", never 0);
- `per_minute`: `audio` (an STT's audio seconds), `session` (a session's connected time: what a
  service billed by the minute charges, its tokens included);
- `per_million_characters`: a TTS's characters.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import PRICES_ENV, prices_path

ENV = PRICES_ENV
SHIPPED = "prices.json"
TOKEN_PRICES = ("text_in", "cached_text_in", "cache_write_in", "text_out", "audio_in", "cached_audio_in", "audio_out")
MINUTE_PRICES = ("audio", "session")
_ENTRY_FIELDS = ("models", "date", "source", "note", "per_million_tokens", "per_minute", "per_million_characters")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Price:
    """One entry of the table: an alias, the model ids it covers, its prices, when and where they held."""

    alias: str
    date: str
    source: str
    models: tuple[str, ...] = ()
    tokens: dict[str, float] = field(default_factory=dict)  # per million tokens, `TOKEN_PRICES` keys
    minutes: dict[str, float] = field(default_factory=dict)  # per minute, `MINUTE_PRICES` keys
    characters: float | None = None  # per million characters
    user: bool = False  # from the user's file, not the shipped table

    def names(self) -> tuple[str, ...]:
        return (self.alias, *self.models)


@dataclass(frozen=True)
class PriceTable:
    """The entries a figure is priced by (a user's file first), and which file they came from."""

    entries: tuple[Price, ...]
    override: str | None = None  # the user's file, when one was given

    def find(self, *names: str) -> Price | None:
        """The entry that covers the first of `names` any entry covers (an alias or a model id)."""
        for name in names:
            if name:
                for entry in self.entries:
                    if name in entry.names():
                        return entry
        return None


def load_prices(explicit: str | os.PathLike[str] | None = None) -> PriceTable:
    """The shipped table with the user's file over it (`prices_path`); a bad file is a `CliError`."""
    path = prices_path(explicit)
    if path is None:
        return _cached(None, 0.0)
    try:
        mtime = Path(path).stat().st_mtime
    except OSError as e:
        raise CliError(f"{path}: cannot read the price table: {e.strerror or e}") from None
    return _cached(path, mtime)


_last_good: list[PriceTable] = []


def current_prices() -> PriceTable:
    """The table a surface prices by now (`load_prices`). The command line refused a bad file
    before anything was shown; one that turned bad since (edited while the monitor runs) keeps the
    last table read, so a screen never fails on it."""
    try:
        table = load_prices()
    except CliError:
        return _last_good[-1] if _last_good else _cached(None, 0.0)
    _last_good[:] = [table]
    return table


@lru_cache(maxsize=8)
def _cached(path: str | None, _mtime: float) -> PriceTable:
    shipped = _entries(_json(files(__package__).joinpath(SHIPPED).read_text(encoding="utf-8"), SHIPPED), SHIPPED)
    if path is None:
        return PriceTable(tuple(shipped))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"{path}: cannot read the price table: {getattr(e, 'strerror', None) or e}") from None
    own = _entries(_json(text, path), path, user=True)
    keys = {p.alias for p in own}
    return PriceTable((*own, *(p for p in shipped if p.alias not in keys)), override=path)


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{where}: not JSON: line {e.lineno} column {e.colno}: {e.msg}") from None


def _entries(data: object, where: str, user: bool = False) -> list[Price]:
    if not isinstance(data, dict):
        raise CliError(f"{where}: a price table is a JSON object with `prices`, not {type(data).__name__}")
    for key in data:
        if key not in ("prices", "currency", "note"):
            raise CliError(f"{where}: {key}: unknown field (prices, currency, note)")
    if data.get("currency", "USD") != "USD":
        raise CliError(f"{where}: currency: only USD is shown, not {data['currency']!r}")
    prices = data.get("prices")
    if not isinstance(prices, dict):
        raise CliError(f"{where}: prices: must be an object of alias -> entry")
    return [_entry(alias, body, where, user) for alias, body in prices.items()]


def _entry(alias: str, body: object, where: str, user: bool) -> Price:
    at = f"{where}: prices.{alias}"
    if not isinstance(body, dict):
        raise CliError(f"{at}: must be an object (date, source, and its prices)")
    for key in body:
        if key not in _ENTRY_FIELDS:
            raise CliError(f"{at}.{key}: unknown field ({', '.join(_ENTRY_FIELDS)})")
    date, source = body.get("date"), body.get("source")
    if not isinstance(date, str) or not _DATE.fullmatch(date):
        raise CliError(f"{at}.date: must be the date the price held, YYYY-MM-DD, not {date!r}")
    if not isinstance(source, str) or not source.strip():
        raise CliError(f"{at}.source: must say where the price was read (a URL or a note)")
    models = body.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise CliError(f"{at}.models: must be a list of model ids")
    tokens = _rates(body.get("per_million_tokens", {}), TOKEN_PRICES, f"{at}.per_million_tokens")
    minutes = _rates(body.get("per_minute", {}), MINUTE_PRICES, f"{at}.per_minute")
    chars = body.get("per_million_characters")
    if chars is not None:
        _rate(chars, f"{at}.per_million_characters")
    if not tokens and not minutes and chars is None:
        raise CliError(f"{at}: no price (per_million_tokens, per_minute or per_million_characters)")
    return Price(alias, date, source.strip(), tuple(models), tokens, minutes, None if chars is None else float(chars), user)


def _rates(body: object, allowed: tuple[str, ...], at: str) -> dict[str, float]:
    if not isinstance(body, dict):
        raise CliError(f"{at}: must be an object ({', '.join(allowed)})")
    for key, value in body.items():
        if key not in allowed:
            raise CliError(f"{at}.{key}: unknown price ({', '.join(allowed)})")
        _rate(value, f"{at}.{key}")
    return {k: float(v) for k, v in body.items()}


def _rate(value: object, at: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise CliError(f"{at}: must be a number of US dollars >= 0, not {value!r}")
