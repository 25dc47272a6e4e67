"""The run screen: header, turn table, transcript, meters and event log of one run.

Used live (fed by the app's coalesced bus updates) and by the replay screen (fed from
the store); it only ever renders its `RunState`. `l` shows the run's latency over its turns in
the transcript's place; `/` finds turns by what was said, answered, reasoned or caused.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Grid
from rich.text import Text
from textual import events, on
from textual.widgets import DataTable, Footer, Static

from ..messages import LiveUpdate, RunFinished, TurnRejudged
from ..run_view import RunState
from ..timing import comparable, speed_note, speed_text
from arena_tui.spine.duplex import FULL_DUPLEX_TURN
from arena_tui.spine.source import FULL_DUPLEX_LABEL, against
from arena_tui.spine.causes import label
from ..verdicts import human_text
from ..widgets.event_log import EventLog
from ..widgets.latency_chart import TurnLatencyChart
from ..widgets.meters import LevelMeters
from ..widgets.run_header import RunHeader, cost_forms, figures_text
from ..widgets.transcript import TranscriptView
from ..widgets.fit import Forms, fit_parts
from ..widgets.turn_table import FAULT, HUMAN, TurnTable
from . import actions
from .find import FIND_KEYS, Finding, find_line, turn_matches


class Panes(Grid):
    """The run's four panes (app.tcss): the turn table over the transcript, the meters over the
    event log beside them; narrower than 100 columns, the turn table takes the whole width (its
    voice-to-voice column stays in view), the meters and the event log side by side under it,
    the transcript below. Blank, so Textual does not re-render its (empty) lines on every meter
    frame."""

    BLANK = True


FILTER_LINES = 3  # the line under the tables (app.tcss #run-filter max-height)


class RunScreen(Finding, actions.TurnKeys):
    HELP_WHERE, HELP_ORDER = "run (live)", 2
    FIND_TABLE = "turns"
    HELP_EXTRA = [Binding("up,down", "", "Select turn")]
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("enter", "detail", "Detail", show=False),
        # secondary keys are in ? and the palette (and the bar says follow's state): the footer fits 80 columns
        Binding("f", "follow", "Follow", show=False),
        Binding("x", "failures", "Failures", show=False),
        Binding("c", "category", "Category", show=False),
        Binding("p", "play", "Play"),
        Binding("s", "stop_audio", "Stop audio", show=False),
        Binding("r", "rejudge", "Re-judge", show=False),
        # stopping is asked first, on a key no navigation scheme moves with (`k` is up to a vim user)
        Binding("S", "stop_run", "Stop run"),
        Binding("l", "latency", "Latency chart", show=False, tooltip="The run's voice-to-voice per turn as a chart "
                "(in the transcript's place; again: the transcript)"),
        *FIND_KEYS,
    ]
    stepping = False  # stepping through a stored run turn by turn (`ReplayScreen`)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal")]

    def __init__(self, state: RunState, live: bool = True) -> None:
        super().__init__()
        self.state = state
        self.live = live
        self.follow = live
        self._painted = -1
        self._content_key: tuple | None = None
        self._status: str | None = None
        self._header_key: tuple | None = None
        self._filter_text: str | None = None

    @property
    def mode(self) -> str:
        """What the header calls this view of the run."""
        return "live"

    def compose(self) -> ComposeResult:
        yield RunHeader(id="run-header")
        with Panes(id="run-main"):  # in grid order: the table's row span decides where the others go
            yield TurnTable(id="turns")
            yield LevelMeters(self.state, id="meters")
            yield EventLog(id="event-log")
            yield TranscriptView(id="transcript")
            yield TurnLatencyChart(id="latency-chart")
        yield find_line("the turns: said, answered, reasons, causes")
        yield Static("", id="run-filter")
        yield Static("", id="next-steps")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#turns").border_title = "turns"
        self.query_one("#transcript").border_title = "transcript"
        self.query_one("#meters").border_title = "levels (dBFS)"
        self.query_one("#event-log").border_title = "events"
        self.paint(force=True)
        self.query_one(TurnTable).focus()
        if self.state.clock is not None:  # followed live: time moves even when no event comes
            self.set_interval(0.25, self.tick)

    def tick(self) -> None:
        """Elapsed, the watchdog's countdown and falling meters, between events (cheap: both
        compare what they would show with what they show)."""
        st = self.state
        header = (self._content_key, int(st.elapsed_ms() // 1000), st.wait_line(), self.mode)
        if header != self._header_key:
            self._header_key = header
            self.query_one(RunHeader).refresh_from(st, self.mode)
        self.query_one(LevelMeters).refresh_from(st)

    def on_screen_resume(self) -> None:
        self.paint(force=True)
        if self.judged_elsewhere_shown:
            actions.reread_judgements(self, self.state)  # another process may have judged it since

    @property
    def judged_elsewhere_shown(self) -> bool:
        """Whether showing this screen reads back judgements stored since its state was built."""
        return self.state.ended is not None

    def on_resize(self) -> None:
        if self.is_mounted:  # the line under the tables is fitted to the width
            self._filter_bar()

    def on_live_update(self, message: LiveUpdate) -> None:
        if self.state.run_id in message.run_ids:
            self.paint()

    def on_run_finished(self, message: RunFinished) -> None:
        if message.run_id == self.state.run_id:
            self.live = False
            self.refresh_bindings()  # `S Stop run` is offered no more
            self.paint(force=True)
            if message.then:
                self.show_next_steps(message.then)

    def show_next_steps(self, then: str) -> None:
        """What to do next (the demo's end), in a line of its own under the tables: the answer it
        points at stays in view; the next key (escape included) hides it."""
        said = Text(then, "bold")
        said.append("  (any key hides this)", "grey62")
        bar = self.query_one("#next-steps", Static)
        bar.update(said)
        bar.display = True

    def hide_next_steps(self) -> bool:
        """Hide the next-steps line; False when it was not shown."""
        bar = self.query_one("#next-steps", Static)
        if not bar.display:
            return False
        bar.display = False
        return True

    def on_key(self, event: events.Key) -> None:
        if event.key != "escape":  # (escape hides it and does nothing else: `action_back`)
            self.hide_next_steps()

    def action_back(self) -> None:
        """escape: the next-steps line hides first, then an open find bar closes, then back."""
        if not self.hide_next_steps():
            super().action_back()

    def on_turn_rejudged(self, message: TurnRejudged) -> None:
        if message.run_id == self.state.run_id:
            self.paint(force=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that do not apply are not offered: stopping only a run that runs, following only a live one."""
        if action == "stop_run":
            running = self.arena.running(self.state.run_id)
            return bool(self.live and running and self.state.ended is None)
        if action == "follow":
            return self.live or self.stepping
        return True

    def paint(self, force: bool = False) -> None:
        """Bring the widgets up to date with the state, touching only what can have changed.

        Levels (40 events/s) only move the meters; everything else is rebuilt when a non-level
        event came in (`content_version`), and the header also once per elapsed second. Each
        rebuild of the table, transcript or log costs milliseconds of the loop the engine paces on.
        """
        st = self.state
        if not force and st.version == self._painted:
            return
        self._painted = st.version
        content = (id(st), st.content_version)
        if force or content != self._content_key:
            self._content_key = content
            self.query_one(TurnTable).refresh_from(st, follow_turn=st.current_turn if self.follow else None)
            tv = self.query_one(TranscriptView)
            tv.follow = self.follow or not self.live
            tv.refresh_from(st)
            log = self.query_one(EventLog)
            log.refresh_from(st)
            # their times are the run's clock: audio time, the wall clock's only at 1x
            clock = "" if st.speed is None or comparable(st.speed) else f" (audio time, {speed_text(st.speed)})"
            log.border_title, tv.border_title = f"events{clock}", f"transcript{clock}"
            if self.query_one(TurnLatencyChart).display:
                self.query_one(TurnLatencyChart).show(st)
            self._filter_bar()
            self.refind()
        header = (content, int(st.elapsed_ms() // 1000), st.wait_line(), self.mode)
        if st.status != self._status:  # e.g. the run ended: `S Stop run` goes from the footer
            self._status = st.status
            self.refresh_bindings()
        if force or header != self._header_key:
            self._header_key = header
            self.query_one(RunHeader).refresh_from(st, self.mode)
        self.query_one(LevelMeters).refresh_from(st)

    def filter_parts(self) -> list[Forms]:
        """The line under the tables, part by part, each part's forms longest first (`fit_parts`
        takes shorter ones until it fits its three lines)."""
        t = self.query_one(TurnTable)
        st = self.state
        parts: list[Forms] = [(f"follow {'ON' if self.follow else 'off'}",)]
        if figures := figures_text(st):  # the strict pass and the turns counted apart
            parts.append((figures,))
        tally = st.tally() if any(r.human for r in st.turns.values()) else None
        if tally is not None and (human := human_text(tally.human_verdicts, len(tally.human))):  # a person's, not the judge's
            parts.append((f"{HUMAN} {human}", f"{HUMAN} {tally.human_verdicts} person's verdict(s)"))
        turn = t.selected_turn
        if turn is not None and (causes := st.causes().get(turn)):  # why the selected turn failed, at any width
            said = [label(c) for c in causes]
            parts.append((Text(f"turn {turn}: {', '.join(said)}", "red"),
                          Text(f"t{turn}: {said[0]}" + (f" +{len(said) - 1}" if len(said) > 1 else ""), "red")))
        if t.failures_only:
            parts.append(("failures only",))
        if t.category:
            parts.append((f"category: {t.category}",))
        if st.source:
            parts.append((f"scores are against {against(st.source, loud=True)}", f"vs {st.source.upper()}"))
        if st.any_heuristic:
            parts.append(("judge: heuristic (offline)", "judge: heuristic"))
        elif st.judges:  # the header may leave it out on a narrow terminal: said here always
            parts.append((f"judge: {', '.join(sorted(st.judges))}",))
        if cost := cost_forms(st):  # an estimate, the judge's apart; the first part a narrow line gives up
            parts.append(cost)
        if st.latency_caveat:
            parts.append((f"* {st.latency_caveat}", f"* {speed_note(st.speed)}"))
        if st.started and st.started.recorded.full_duplex:  # how its turns were delimited, said where they are shown
            parts.append((f"{FULL_DUPLEX_LABEL}: {FULL_DUPLEX_TURN}",
                           f"{FULL_DUPLEX_LABEL}: a turn's answer is what the model said and did until the next turn "
                           "started, which waited for it", f"{FULL_DUPLEX_LABEL}: a turn = until the next began"))
        faults = st.started.recorded.fault_text if st.started else ""
        if faults:  # part of what the run is (its own leaderboard row); last: the longest
            parts.append((f"faults injected: {faults}", f"faults: {faults}", f"{FAULT} faults injected (turn detail)"))
        return parts

    def _filter_bar(self) -> None:
        width = (self.size.width or self.app.size.width) - 2  # the bar's padding
        text = fit_parts(self.filter_parts(), width, FILTER_LINES)
        if text.markup != self._filter_text:  # an update is a relayout of the screen: only on change
            self._filter_text = text.markup
            self.query_one("#run-filter", Static).update(text)

    @property
    def selected_turn(self) -> int | None:
        return self.query_one(TurnTable).selected_turn

    acted_turn = selected_turn

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_detail()

    @on(DataTable.RowHighlighted, "#turns")
    def _highlighted(self) -> None:
        self._filter_bar()  # the selected turn's causes

    def found(self, text: str) -> list[str]:
        causes = self.state.causes()
        return [str(r.index) for r in self.query_one(TurnTable).visible_rows(self.state)
                if turn_matches(r, causes.get(r.index, ()), text)]

    # --- actions -------------------------------------------------------------------------
    def action_detail(self) -> None:
        from .turn_detail import TurnDetailScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        turn = self.selected_turn
        if turn is None:
            return
        # one detail screen per run screen, kept installed: composing and mounting it anew on every
        # Enter held the key's answer 40-80 ms while runs streamed; a kept one only repaints its turn
        if not self.app.is_screen_installed(self._detail_name):
            self.app.install_screen(TurnDetailScreen(self.state, turn), self._detail_name)
        detail = self.app.get_screen(self._detail_name)
        assert isinstance(detail, TurnDetailScreen)
        detail.show_turn(turn)
        self.app.push_screen(self._detail_name)

    @property
    def _detail_name(self) -> str:
        return f"turn-detail-{id(self)}"

    def on_unmount(self) -> None:
        name = self._detail_name
        if self.app.is_screen_installed(name) and self.app.get_screen(name) not in self.app.screen_stack:
            self.app.uninstall_screen(name)  # (still stacked only while the app closes: it goes with it)

    def action_latency(self) -> None:
        chart, transcript = self.query_one(TurnLatencyChart), self.query_one(TranscriptView)
        chart.display, transcript.display = not chart.display, chart.display
        if chart.display:
            chart.show(self.state)

    def action_follow(self) -> None:
        self.follow = not self.follow
        self.notify(f"follow live {'on' if self.follow else 'off'}")
        self.paint(force=True)

    def action_failures(self) -> None:
        t = self.query_one(TurnTable)
        t.failures_only = not t.failures_only
        self.paint(force=True)

    def action_category(self) -> None:
        from .dialogs.category import CategoryDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        cats = sorted({c for r in self.state.turns.values() for c in r.categories})

        def chosen(cat: str | None) -> None:
            if cat is None:
                return
            self.query_one(TurnTable).category = cat or None
            self.paint(force=True)

        self.app.push_screen(CategoryDialog(cats, self.query_one(TurnTable).category), chosen)

    def action_stop_run(self) -> None:
        """Stop the live run, once asked (No has the focus): it is kept as interrupted, and resumable."""
        from .dialogs.confirm import ConfirmDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        run_id = self.state.run_id
        if not self.arena.running(run_id):
            self.notify("this run is not running")
            return
        if not self.settled("S", "stop this run"):
            return

        def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            if not self.arena.running(run_id):  # it ended while the question was up
                self.notify("the run has ended already")
                return
            self.notify("stopping the run (it is kept as interrupted)…")
            self.app.run_worker(self.arena.stop_runs([run_id]), group="stop")  # the app's: outlives this screen

        question = (f"Stop run {run_id} ({self.state.benchmark}, {self.state.model_name}) at {self.state.turns_done}/"
                    f"{self.state.turns_total} turns? It is kept as interrupted: `arena-tui resume` goes on from where "
                    "it stopped.")
        self.app.push_screen(ConfirmDialog(question, yes="Stop run", no="Keep running"), confirmed)

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Turn detail", "Open the selected turn", self.action_detail)
        if self.check_action("follow", ()):
            yield SystemCommand("Toggle follow live", "Keep the newest turn selected", self.action_follow)
        yield SystemCommand("Failures only", "Show only failed turns (toggle)", self.action_failures)
        yield SystemCommand("Filter by category", "Show only turns of one category", self.action_category)
        yield SystemCommand("Play turn audio", "Play (or export) the selected turn's audio", self.action_play)
        yield SystemCommand("Stop audio", "Stop playback", self.action_stop_audio)
        yield SystemCommand("Re-judge turn", "Judge the selected turn again", self.action_rejudge)
        yield SystemCommand("Latency chart", "The run's voice-to-voice per turn (toggles with the transcript)",
                            self.action_latency)
        yield SystemCommand("Find turns", "Find turns by what was said, answered, reasoned or caused (/)",
                            self.action_find)
        if self.check_action("stop_run", ()):
            yield SystemCommand("Stop this run", "Stop the run; it is kept as interrupted", self.action_stop_run)
