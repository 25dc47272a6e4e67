"""Inline SVG plots for report.html: no script, no stylesheet, no font or file fetched at view time.

Two shapes cover the report: horizontal rate bars with Wilson whiskers (pass rate per dimension
or category, one bar per model), and a latency strip per model (every turn a dot, the p50 and p95
marked with their bootstrap intervals). Text is escaped; sizes are computed, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

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
