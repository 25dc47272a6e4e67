"""Inline SVG plots for report.html: no script, no stylesheet, no font or file fetched at view time.

Three shapes cover the report: horizontal rate bars with Wilson whiskers (pass rate per dimension
or category, one bar per model), a latency strip per model (every turn a dot, the p50 and p95
marked with their bootstrap intervals), and each run's latency over its turns (`turn_latency_chart`,
as the run screen's `l` draws it). Text is escaped; sizes are computed, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from .turn_latency import TurnLatency

PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d"]
FONT = "font-family:system-ui,sans-serif;font-size:12px"
LABEL_W = 330
PLOT_W = 480
BAR_H = 14


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass(frozen=True)
class Bar:
    model_index: int  # picks the colour, consistent across plots
    label: str
    rate: float | None
    ci: tuple[float, float] | None
    note: str = ""  # e.g. "8/10"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" style="{FONT}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def rate_bars(title: str, groups: Sequence[tuple[str, Sequence[Bar]]]) -> str:
    """One block per group (a dimension or category), one bar per model, 0–100 % axis."""
    x0, width = LABEL_W, PLOT_W
    rows = sum(len(bars) for _, bars in groups) + len(groups)
    height = 40 + rows * (BAR_H + 4) + 24
    body = [f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>']
    for pct in range(0, 101, 25):
        x = x0 + width * pct / 100
        body.append(f'<line x1="{x:.1f}" y1="28" x2="{x:.1f}" y2="{height - 22}" stroke="#e5e7eb"/>')
        body.append(f'<text x="{x:.1f}" y="{height - 8}" text-anchor="middle" fill="#6b7280">{pct}%</text>')
    y = 32
    for name, bars in groups:
        body.append(f'<text x="4" y="{y + BAR_H - 2}" font-weight="bold">{escape(name)}</text>')
        y += BAR_H + 4
        for b in bars:
            body.append(f'<text x="16" y="{y + BAR_H - 3}" fill="#374151">{escape(_clip(b.label, 52))}</text>')
            if b.rate is None:
                body.append(f'<text x="{x0 + 4}" y="{y + BAR_H - 3}" fill="#9ca3af">{escape(b.note or "not scored")}</text>')
            else:
                w = width * b.rate
                body.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{colour(b.model_index)}" '
                            f'fill-opacity="0.75"/>')  # fmt: skip
                if b.ci is not None:
                    lo, hi = (x0 + width * v for v in b.ci)
                    cy = y + BAR_H / 2
                    body.append(f'<line x1="{lo:.1f}" y1="{cy}" x2="{hi:.1f}" y2="{cy}" stroke="#111827"/>')
                    for xx in (lo, hi):
                        body.append(f'<line x1="{xx:.1f}" y1="{y + 3}" x2="{xx:.1f}" y2="{y + BAR_H - 3}" '
                                    f'stroke="#111827"/>')  # fmt: skip
                text = f"{100 * b.rate:.1f}%" + (f" ({b.note})" if b.note else "")
                tx = min(x0 + max(w, (b.ci or (0, b.rate))[1] * width) + 6, x0 + width + 6)
                body.append(f'<text x="{tx:.1f}" y="{y + BAR_H - 3}" fill="#111827">{escape(text)}</text>')
            y += BAR_H + 4
    return _svg(x0 + width + 130, height, body, title)


@dataclass(frozen=True)
class Strip:
    model_index: int
    label: str
    values: Sequence[float]
    p50: float | None
    p50_ci: tuple[float, float] | None
    p95: float | None
    p95_ci: tuple[float, float] | None
    note: str = ""


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1000.0
    mag = 10 ** math.floor(math.log10(v))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= v:
            return step * mag
    return 10 * mag


def latency_strips(title: str, strips: Sequence[Strip], unit: str = "ms") -> str:
    """Per model: each value a dot (deterministic vertical spread), p50 ◆ and p95 ▲ with their
    interval whiskers; models without latency get a line saying so."""
    x0, width, lane = LABEL_W, PLOT_W, 34
    top = max((max(s.values) for s in strips if s.values), default=1000.0)
    top = _nice_max(max(top, max((s.p95_ci[1] for s in strips if s.p95_ci), default=0.0)))
    height = 36 + lane * max(len(strips), 1) + 30

    def sx(v: float) -> float:
        return x0 + width * min(max(v / top, 0.0), 1.0)

    body = [f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>']
    for i in range(6):
        v = top * i / 5
        body.append(f'<line x1="{sx(v):.1f}" y1="26" x2="{sx(v):.1f}" y2="{height - 24}" stroke="#e5e7eb"/>')
        body.append(f'<text x="{sx(v):.1f}" y="{height - 10}" text-anchor="middle" fill="#6b7280">{v:,.0f} {unit}</text>')
    for k, s in enumerate(strips):
        y = 30 + k * lane
        mid = y + lane / 2
        body.append(f'<text x="4" y="{mid + 4:.1f}" fill="#374151">{escape(_clip(s.label, 48))}</text>')
        if not s.values:
            body.append(f'<text x="{x0 + 4}" y="{mid + 4:.1f}" fill="#9ca3af">{escape(s.note or "no latency")}</text>')
            continue
        c = colour(s.model_index)
        for j, v in enumerate(s.values):
            dy = ((j * 7919) % 17 - 8) * 0.9  # spread without randomness: same plot every time
            body.append(f'<circle cx="{sx(v):.1f}" cy="{mid + dy:.1f}" r="2.2" fill="{c}" fill-opacity="0.45"/>')
        for value, ci, shape in ((s.p50, s.p50_ci, "diamond"), (s.p95, s.p95_ci, "triangle")):
            if value is None:
                continue
            if ci is not None:
                body.append(f'<line x1="{sx(ci[0]):.1f}" y1="{mid - 12:.1f}" x2="{sx(ci[1]):.1f}" y2="{mid - 12:.1f}" '
                            f'stroke="#111827" stroke-width="1.5"/>')  # fmt: skip
            x = sx(value)
            if shape == "diamond":
                pts = f"{x:.1f},{mid - 17:.1f} {x + 4:.1f},{mid - 12:.1f} {x:.1f},{mid - 7:.1f} {x - 4:.1f},{mid - 12:.1f}"
            else:
                pts = f"{x:.1f},{mid - 17:.1f} {x + 4:.1f},{mid - 8:.1f} {x - 4:.1f},{mid - 8:.1f}"
            body.append(f'<polygon points="{pts}" fill="#111827"/>')
        if s.note:
            body.append(f'<text x="{x0 + width + 6}" y="{mid + 4:.1f}" fill="#6b7280">{escape(s.note)}</text>')
    return _svg(x0 + width + 150, height, body, title)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


DASHES = ["", "6 3", "2 3", "8 3 2 3"]  # a model's 1st, 2nd, … run


@dataclass(frozen=True)
class Series:
    """One run's voice-to-voice over its turns (`turn_latency.TurnLatency` points)."""

    model_index: int
    label: str
    points: Sequence[TurnLatency]


def turn_latency_chart(title: str, series: Sequence[Series], note: str = "") -> str:
    """Each run a line over its turns: ● a turn without a call, ■ a tool turn, hollow when the turn
    is in no latency figure (its line skips it); runs without a point get a line saying so."""
    x0, width, height = 70, PLOT_W + 120, 230
    top_y, bottom_y = 30, 180
    turns = sorted({p.turn for s in series for p in s.points}) or [0]
    t_lo, t_hi = turns[0], max(turns[-1], turns[0] + 1)
    top = _nice_max(max((p.ms for s in series for p in s.points), default=1000.0))

    def sx(t: float) -> float:
        return x0 + width * (t - t_lo) / (t_hi - t_lo)

    def sy(v: float) -> float:
        return bottom_y - (bottom_y - top_y) * min(max(v / top, 0.0), 1.0)

    body = [f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>']
    for i in range(6):
        v = top * i / 5
        body.append(f'<line x1="{x0}" y1="{sy(v):.1f}" x2="{x0 + width}" y2="{sy(v):.1f}" stroke="#e5e7eb"/>')
        body.append(f'<text x="{x0 - 6}" y="{sy(v) + 4:.1f}" text-anchor="end" fill="#6b7280">{v:,.0f} ms</text>')
    step = max(1, len(turns) // 15)
    for t in turns[::step]:
        body.append(f'<text x="{sx(t):.1f}" y="{bottom_y + 16}" text-anchor="middle" fill="#6b7280">{t}</text>')
    body.append(f'<text x="{x0 + width / 2:.1f}" y="{bottom_y + 32}" text-anchor="middle" fill="#6b7280">turn '
                '(● no call, ■ tool call; hollow: in no latency figure)</text>')  # fmt: skip
    legend_y = top_y
    seen: dict[int, int] = {}  # model -> runs drawn: a model's repeats share its colour, each its own dashes
    for s in series:
        c = colour(s.model_index)
        nth = seen[s.model_index] = seen.get(s.model_index, -1) + 1
        dash = f' stroke-dasharray="{DASHES[nth % len(DASHES)]}"' if nth % len(DASHES) else ""
        counted = [p for p in s.points if p.counted]
        if len(counted) > 1:
            pts = " ".join(f"{sx(p.turn):.1f},{sy(p.ms):.1f}" for p in counted)
            body.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-opacity="0.6"{dash}/>')
        body.append(f'<line x1="{x0 + width + 12}" y1="{legend_y}" x2="{x0 + width + 30}" y2="{legend_y}" '
                    f'stroke="{c}"{dash}/>')  # fmt: skip
        for p in s.points:
            fill = c if p.counted else "#ffffff"
            x, y = sx(p.turn), sy(p.ms)
            if p.tool:
                body.append(f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{fill}" stroke="{c}"/>')
            else:
                body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{fill}" stroke="{c}"/>')
        said = "" if s.points else " (no voice-to-voice)"
        body.append(f'<text x="{x0 + width + 36}" y="{legend_y + 4}" fill="{c}">{escape(_clip(s.label, 30) + said)}</text>')
        legend_y += 16
    if note:
        body.append(f'<text x="4" y="{height - 6}" fill="#6b7280">{escape(note)}</text>')
    return _svg(x0 + width + 230, max(height, legend_y + 10), body, title)
