"""One-line summary of a run: what, who, where it is, and how it is going."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from .run_state import RunState

STATUS_STYLE = {
    "running": "bold green",
    "starting": "yellow",
    "completed": "bold cyan",
    "interrupted": "bold yellow",
    "failed": "bold red",
}


def fmt_elapsed(ms: float) -> str:
    s = int(ms // 1000)
    return f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


def header_text(state: RunState, mode: str = "live") -> Text:
    t = Text()
    t.append(f" {state.benchmark} ", "bold reverse")
    t.append("  model ")
    t.append(state.model_label, "bold magenta" if state.started and state.started.simulator else "bold")
    t.append(f"  session {state.session}")
    if state.rotations:
        t.append(f" ({state.rotations} rotation{'s' if state.rotations != 1 else ''})", "yellow")
    t.append(f"  elapsed {fmt_elapsed(state.last_ms)}")
    cur = state.current_turn
    cur_s = "greeting" if cur == -1 else (str(cur) if cur is not None else "–")
    t.append(f"  turn {cur_s} · {state.turns_done}/{state.turns_total} done  ")
    t.append(state.status.upper(), STATUS_STYLE.get(state.status, "bold"))
    if mode != "live":
        t.append(f"  [{mode}]", "bold blue")
    if state.any_heuristic:
        t.append("  judge: heuristic", "italic yellow")
    elif state.judges:
        t.append(f"  judge: {', '.join(sorted(state.judges))}", "italic")
    return t


class RunHeader(Static):
    DEFAULT_CSS = "RunHeader { height: 1; background: $boost; }"

    def refresh_from(self, state: RunState, mode: str = "live") -> None:
        self.update(header_text(state, mode))
