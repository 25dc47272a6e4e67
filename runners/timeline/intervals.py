"""Interval maths on the timeline: merging pauses, intersecting two speakers' speech."""

from __future__ import annotations

from collections.abc import Sequence

from arena_tui.spine.events import Interval

# An overlap of user and bot speech counts from this long.
MIN_OVERLAP_MS = 100.0


def merge_intervals(intervals: Sequence[Interval], min_gap_ms: float) -> list[Interval]:
    """Sort, then join intervals separated by less than `min_gap_ms` (overlaps always join)."""
    merged: list[Interval] = []
    for iv in sorted(intervals, key=lambda i: i.start_ms):
        if merged and iv.start_ms - merged[-1].end_ms < min_gap_ms:
            last = merged[-1]
            merged[-1] = Interval(start_ms=last.start_ms, end_ms=max(last.end_ms, iv.end_ms))
        else:
            merged.append(iv)
    return merged


def overlap_intervals(a: Sequence[Interval], b: Sequence[Interval], min_ms: float = 0.0) -> list[Interval]:
    """Intersections of two interval sets (each first merged), keeping those >= `min_ms`."""
    xs, ys = merge_intervals(a, 0.0), merge_intervals(b, 0.0)
    out: list[Interval] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        start = max(xs[i].start_ms, ys[j].start_ms)
        end = min(xs[i].end_ms, ys[j].end_ms)
        if end > start and end - start >= min_ms - 1e-9:
            out.append(Interval(start_ms=start, end_ms=end))
        if xs[i].end_ms < ys[j].end_ms:
            i += 1
        else:
            j += 1
    return out
