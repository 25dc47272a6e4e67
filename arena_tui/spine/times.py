"""Times as every layer reads and shows them: run time → wall time, and how a moment or a span reads.

- **Run time → wall time** (`wall_ms`). A run's timeline (every `t_ms`) is audio time: at `--speed` s
  it runs s times faster than the wall clock (the run clock is exactly wall × speed), so wall ms =
  t_ms / s. A run whose speed was not recorded is taken at its word (s = 1).
- **A moment** (`when_text`): UTC, labelled, to the minute — `2026-03-01 09:05 UTC` — on every
  surface (`arena-tui runs`, `campaign list`, the runs list, the campaign screens), so one run never
  shows two start times. Stored times are ISO 8601 UTC (`as_utc` reads them, and older naive ones).
- **A span** (`duration_text`): wall-clock `MM:SS`, `H:MM:SS` from an hour, whole seconds (a clock
  reading: it never shows a second that has not passed).
"""

from __future__ import annotations

import datetime as dt

NO_TIME = "–"


def wall_ms(t_ms: float, speed: float | None) -> float:
    """A place (or a span) on the run timeline as wall-clock ms."""
    return t_ms / speed if speed else t_ms


def as_utc(value: object) -> dt.datetime | None:
    """A stored time (datetime, ISO 8601 text, POSIX seconds) as an aware UTC datetime; None when
    absent or unreadable. A time without a zone is UTC (how the store writes them)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        d = value
    elif isinstance(value, (int, float)):
        return dt.datetime.fromtimestamp(value, dt.UTC)
    else:
        try:
            d = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return None
    return d.astimezone(dt.UTC) if d.tzinfo else d.replace(tzinfo=dt.UTC)


def when_text(value: object) -> str:
    """A moment as every surface shows it: `2026-03-01 09:05 UTC` (`–` when unknown)."""
    d = as_utc(value)
    return d.strftime("%Y-%m-%d %H:%M UTC") if d is not None else NO_TIME


def duration_text(ms: float | None) -> str:
    """A wall-clock span: `04:07`, `1:02:03` from an hour (`–` when unknown)."""
    if ms is None:
        return NO_TIME
    s = int(max(ms, 0.0) // 1000)
    return f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"
