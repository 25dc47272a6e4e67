"""A run's voice-to-voice over its turns (textual-plotext), the run screen's `l`.

One point per turn on our own timeline (`compare.turn_latency`): ● a turn without a call, ■ a tool
turn; hollow (○ □) a turn in no latency figure (this machine sent the user's audio late, or it was
not the model's turn); the dashed line is the median of those that count. A sped-up run's
latencies are on a compressed clock: the title says they are not comparable. A barge-in has no
latency: the title names those turns.
"""

from __future__ import annotations

from textual_plotext import PlotextPlot

from ..compare.turn_latency import TurnLatency, barge_ins, turn_latencies
from ..run_view import RunState
from ..stats import median
from ..timing import NOT_COMPARABLE, comparable, speed_text
from .board_plots import COLOURS

MARKS = {(False, True): "●", (True, True): "■", (False, False): "○", (True, False): "□"}  # (tool, counted) -> marker
SERIES = [((False, True), "no call"), ((True, True), "tool call"), ((False, False), "no call, in no figure"),
          ((True, False), "tool call, in no figure")]


def chart_title(state: RunState, points: list[TurnLatency]) -> str:
    """`voice-to-voice per turn, p50 1,210 ms`, with the speed when not comparable (the border's title)."""
    p50 = median([p.ms for p in points if p.counted])
    title = "voice-to-voice per turn" + (f", p50 {p50:,.0f} ms" if p50 is not None else ", none measured yet")
    if not comparable(state.speed):
        title += f" at {speed_text(state.speed)}: {NOT_COMPARABLE}"
    return title


def chart_subtitle(barged: list[int]) -> str:
    """What is no point: the barge-ins; and that `l` goes back to the transcript."""
    gone = f"barge-in, no latency: turn{'s' * (len(barged) > 1)} {', '.join(map(str, barged))} · " if barged else ""
    return f"{gone}l: transcript"


def nice_ticks(top: float, n: int = 4) -> list[float]:
    """About `n` round ticks from 0 to `top` (ms): 0, 500, 1000, …"""
    raw = max(top, 1.0) / n
    mag = 10 ** len(str(int(raw))) / 10
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(top // step) + 1)]


class TurnLatencyChart(PlotextPlot):
    """Drawn from a `RunState` (`show`), again only when a turn's result came (`verdict_version`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._key: tuple | None = None

    def show(self, state: RunState) -> None:
        key = (id(state), state.verdict_version)
        if key == self._key:
            return
        self._key = key
        results = [r.result for r in state.turns.values() if r.result is not None]
        points = turn_latencies(results, state.untrusted.turns)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        self.border_title = chart_title(state, points)
        self.border_subtitle = chart_subtitle(barge_ins(results))
        plt.xlabel("turn  ● no call  ■ tool call  ○□ in no latency figure  ─ p50")
        for i, (kind, name) in enumerate(SERIES):
            shown = [p for p in points if (p.tool, p.counted) == kind]
            if shown:
                plt.scatter([p.turn for p in shown], [p.ms for p in shown], marker=MARKS[kind],
                            color=COLOURS[i % 2] if kind[1] else (150, 150, 150))
        counted = [p.ms for p in points if p.counted]
        if (p50 := median(counted)) is not None:
            plt.hline(p50, (251, 191, 36))
        turns: list[float] = sorted(i for i in state.turns if i >= 0) or [0]  # plotext takes its ticks as floats
        plt.xlim(turns[0] - 0.5, turns[-1] + 0.5)
        step = max(1, len(turns) // 12)  # a tick per turn while they have room
        plt.xticks(turns[::step], [str(t) for t in turns[::step]])
        top = max((p.ms for p in points), default=1000.0) * 1.1
        plt.ylim(0, top)
        ticks = nice_ticks(top)
        plt.yticks(ticks, [f"{v:,.0f}" for v in ticks])
        self.refresh()
