"""One-line summary of a run: what, who, where it is, and how it is going.

How it is going is its tally by the one rule (`arena_tui.verdicts`): turns done (ran to their
end) here; the strict pass and the turns counted apart in `figures_text`, what it cost (an
estimate, the judge's apart: `arena_tui.cost`) in `cost_forms`, the run screen's line under the
tables (full width: never cut at 80 columns).

The line is built for the width it gets: the status, the mode and the judge label sit at the
right in a fixed-width block (the longest status sets it), so they never run into each other or
fall off a narrow terminal; the descriptive part on the left is what gets shortened: its parts
take their short forms one by one (the cost so far goes, then the session, the audio time, the
current turn and the model's label), every figure keeping its label (`elapsed 01:12`, `5/10 done`); then the judge
leaves the right block (the line under the tables names it), and only then is the model's name cut
(with "…"). The benchmark and the model always stay, and so do how the run's input differed (its
condition, effort, speaker: `RunState.variants`): a telephony run never reads as a clean one.
"""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from arena_tui.spine.source import tag, variants_text
from arena_tui.spine.times import duration_text
from ..compare.columns import cost_words
from ..run_view import RunState
from ..verdicts import NEVER_ANSWERED, NO_ANSWER, STRICT

STATUS_STYLE = {
    "loading": "grey62",
    "running": "bold green",
    "starting": "yellow",
    "completed": "bold cyan",
    "interrupted": "bold yellow",
    "failed": "bold red",
}
STATUS_WIDTH = max(len(s) for s in STATUS_STYLE)
GAP = "  "
NARROW_LEFT = 48  # below this much room for the left part, the status block takes its compact form


def elapsed_text(state: RunState) -> Text:
    """Wall-clock time since the start; the audio timeline beside it, labelled, when it ran faster."""
    t = Text(f"elapsed {duration_text(state.elapsed_ms())}")
    if state.speed not in (1.0, None):
        t.append(f" (audio {duration_text(state.last_ms)})", "grey62")
    return t


def loading(state: RunState, mode: str) -> bool:
    """A stored run whose events are still being read: nothing about it is known yet."""
    return mode != "live" and state.started is None and state.ended is None


def describe(state: RunState, room: int | None = None, mode: str = "live", cut: bool = True) -> Text:
    """The left part: benchmark, model, session, elapsed (wall clock), turn progress.

    With `room`, the parts take their short forms one step at a time until the line fits
    (`SHORTER`); then (`cut`) the model's name is cut, down to `NAME_FLOOR` before the elapsed time
    and the turn progress go whole (`DROPPED`), and further only then (`cut=False`: none of it, the
    shortest line as it is); the benchmark, the model's source tag and its variants never: they are
    what a user scans for."""
    if loading(state, mode):
        return Text(f"loading run {state.run_id}…", "grey62", no_wrap=True, overflow="ellipsis")
    cur = state.current_turn
    cur_s = "greeting" if cur == -1 else (str(cur) if cur is not None else "–")
    style = "bold magenta" if state.source else "bold"
    session = Text(f"session {state.session}")
    if state.rotations:
        session.append(f" ({state.rotations} rotation{'s' if state.rotations != 1 else ''})", "yellow")
    # the short form drops the provider, never how the input differed (a telephony run is not a clean one)
    variants = variants_text(state.variants)
    short_model = state.model_name + tag(state.source) + variants
    wait = state.wait_line() if state.ended is None else None
    cost = state.costs.model(state.started.model if state.started else "")
    forms: dict[str, list[Text]] = {  # each part's forms, longest first; [] once a part is dropped
        "benchmark": [Text(f" {state.benchmark} ", "bold reverse")],
        "model": [Text.assemble("model ", (state.model_label, style)), Text(short_model, style)],
        "session": [session, Text()],
        "elapsed": [elapsed_text(state), Text(f"elapsed {duration_text(state.elapsed_ms())}"), Text()],
        "turn": [Text(f"turn {cur_s} · {state.turns_done}/{state.turns_total} done"),
                 Text(f"{state.turns_done}/{state.turns_total} done"), Text()] if state.started or state.ended else [Text()],
        # what it has cost so far, an estimate (the line under the tables says of which prices)
        "cost": [Text(f"cost {cost.short()}" + (" est." if cost.known else ""), "" if cost.known else "grey62"), Text()]
        if cost.reports else [Text()],
        # where the run is when nothing moves: what the engine waits on, how long is left
        "wait": [Text(wait, "bold yellow")] if wait else [Text()],
    }
    level = dict.fromkeys(forms, 0)

    def line() -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        for name in forms:
            part = forms[name][level[name]]
            if part.plain:
                if t.plain:
                    t.append("  ")
                t.append_text(part)
        return t

    t = line()
    for name in SHORTER:
        if room is None or t.cell_len <= room:
            return t
        shortest = max(len(forms[name]) - (2 if name in DROPPED else 1), 0)  # (gone whole: only when `cut`, below)
        level[name] = min(level[name] + 1, shortest)
        t = line()
    if cut and room is not None and t.cell_len > room:  # still too long: the model's name is cut, to at least
        for gone in ((), *(DROPPED[: n + 1] for n in range(len(DROPPED)))):  # NAME_FLOOR before a figure goes whole
            for name in gone:
                level[name] = len(forms[name]) - 1
            t = line()
            if t.cell_len - room <= len(state.model_name) - min(len(state.model_name), NAME_FLOOR):
                break
    if cut and room is not None and t.cell_len > room:  # its source tag and variants never
        model = Text(state.model_name)
        model.truncate(max(4, model.cell_len - (t.cell_len - room)), overflow="ellipsis")
        forms["model"][level["model"]] = Text(model.plain + tag(state.source) + variants, style)
        t = line()
    return t


#: the order the header's parts take their next shorter form in, when the line does not fit
SHORTER = ("cost", "session", "elapsed", "turn", "model")
#: still too long once the judge has left (`cut`): these go whole, one by one, before the model's name is
#: cut below `NAME_FLOOR` (the runs list says how long a run took, the turn table how far it got)
DROPPED = ("elapsed", "turn")
NAME_FLOOR = 10


def figures_text(state: RunState) -> Text:
    """`strict pass 3/5 · counted apart: 1 stopped · 2 not played`: the run's tally by the one rule
    (`RunState.tally`); `no answer` once it ended with no turn the model got, `never answered — check
    the setup` once it ended with every turn the model got unanswered; while it
    runs, the turns still to come or being judged are not said."""
    tally = state.tally()
    passed, judged = tally.strict
    t = Text()
    if state.ended is not None and not tally.scored:
        t.append(NO_ANSWER, "bold red")
        t.append(" (the model got no turn: no scored row)")
    elif judged:
        t.append(f"{STRICT} {passed}/{judged}", "bold")
    if state.ended is not None and tally.never_answered:  # counted, each turn its failure
        t.append(" · " if t else "")
        t.append(NEVER_ANSWERED, "bold red")
    if apart := tally.apart_text(live=state.ended is None):
        t.append(" · " if t else "")
        t.append(f"counted apart: {apart}", "yellow")
    return t


def cost_forms(state: RunState) -> tuple[Text, ...]:
    """What the run cost so far and, apart, its judge's, longest form first, the last empty (the run
    screen's line under the tables gives it up before anything else); () while nothing is reported."""
    cost, judge = state.costs.model(state.started.model if state.started else ""), state.costs.judge()
    if not cost.reports and not judge.reports:
        return ()
    passed = state.tally().strict[0]
    full, short = Text(), Text()
    for name, c, passes in (("cost", cost, passed), ("judge cost", judge, None)):  # the judge's apart
        if c.reports:
            style = "" if c.known else "grey62"
            for t, words in ((full, cost_words(c, passes).line), (short, c.short())):
                t.append(" · " if t else "")
                t.append(f"{name} {words}", style)
    return full, short, Text()


def status_block(state: RunState, mode: str = "live", compact: bool = False, judge: bool = True) -> Text:
    """The right part: status (padded to the widest status), mode, judge; each set off by a gap
    (`compact`: the judge without its "judge: ", for a narrow terminal; `judge=False`: none)."""
    t = Text(no_wrap=True)
    t.append(GAP)
    status = "loading" if loading(state, mode) else state.status
    t.append(status.upper().ljust(STATUS_WIDTH), STATUS_STYLE.get(status, "bold"))
    if mode != "live":
        t.append(f"{GAP}[{mode}]", "bold blue")
    said = "" if compact else "judge: "
    if not judge:
        pass
    elif state.any_heuristic:
        t.append(f"{GAP}{said}heuristic", "italic yellow")
    elif state.judges:
        t.append(f"{GAP}{said}{', '.join(sorted(state.judges))}", "italic")
    if any(r.human for r in state.turns.values()) and (people := state.tally().human_verdicts):
        t.append(f"{GAP}✎{people}", "bold cyan")  # verdicts a person gave (the line under the tables says it in words)
    t.append(" ")
    return t


def header_text(state: RunState, mode: str = "live", width: int | None = None) -> Text:
    """The whole line; with `width`, the left part is cut (…) so the right block always fits."""
    right = status_block(state, mode)
    if width is not None and width - right.cell_len < NARROW_LEFT:  # the left part needs the room more
        right = status_block(state, mode, compact=True)
    if width is not None and describe(state, width - right.cell_len, mode, cut=False).cell_len > width - right.cell_len:
        right = status_block(state, mode, judge=False)  # before the model is cut: the line under the tables says it
    left = describe(state, width - right.cell_len if width else None, mode)
    if width is not None and width > 0:
        room = width - right.cell_len
        if room < 8:  # too narrow for both: the status block alone, cut at the edge
            right.truncate(width, overflow="ellipsis")
            return right
        if left.cell_len > room:
            left.truncate(room, overflow="ellipsis")
        else:
            left.pad_right(room - left.cell_len)  # status block flush right, always at one place
    return Text.assemble(left, right, no_wrap=True)


class RunHeader(Static):
    DEFAULT_CSS = "RunHeader { height: 1; background: $boost; }"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._args: tuple[RunState, str] | None = None

    def refresh_from(self, state: RunState, mode: str = "live") -> None:
        self._args = (state, mode)
        self.update(header_text(state, mode, self.size.width or None), layout=False)  # always one line

    def on_resize(self, event: Resize) -> None:
        if self._args is not None:
            self.update(header_text(*self._args, event.size.width or None), layout=False)
