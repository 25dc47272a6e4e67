"""One turn in full: golden vs actual, expected vs actual tool calls, latencies, flags, judgements,
why it failed (each cause and who decided it), and a person's verdict over the judge's (`v`: given
or withdrawn here, `arena_tui.judge.human`), with who, why, when and what the judge said."""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Static

from arena_tui.spine.causes import CAUSES as MEANING
from arena_tui.spine.records import ToolCallRecord
from ..messages import LiveUpdate, TurnRejudged
from ..run_view import RunState, TurnRow
from ..compare.duplex import early_start_text, interrupted_text, outcome_text
from ..timing import UNTRUSTED, barge_in_ms, barge_in_text, latency_counts, latency_text, speed_note
from ..verdicts import APART, named
from ..widgets.judgement_text import cause_source, judgement_renderable
from ..widgets.render_once import RenderedOnce
from ..widgets.run_header import RunHeader
from ..widgets.turn_table import FAULT, HUMAN, row_signature
from . import actions

LATENCY_LABELS = [
    ("voice_to_voice_ms", "voice-to-voice", "user speech end (VAD) → audible bot speech, our timeline"),
    ("pipeline_ttfb_ms", "pipeline TTFB", "user speech end (VAD) → first bot audio frame played"),
    ("provider_ttfb_ms", "provider TTFB", "as reported by the provider (not our clock)"),
    ("leading_silence_ms", "leading silence", "first bot frame → audible speech"),
]
#: a cascade's stages (`Latencies.stages`), each from the one before; they add up to the pipeline TTFB
STAGE_LABELS = [
    ("stt_ms", "  STT final", "user speech end → the STT's final transcript"),
    ("turn_ms", "  turn end", "→ Pipecat's VAD and turn strategy hand the LLM the turn"),
    ("llm_ms", "  LLM first token", "→ the LLM's first text token (tool round trips included)"),
    ("tts_ms", "  TTS first audio", "→ the TTS's first audio frame played"),
]


def _json(v: object, limit: int = 600) -> str:
    s = json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def call_text(name: object, args: object) -> str:
    """`book_repair( bike_type: "road", date: "2025-05-06" )`: a call as it reads in a narrow column
    (it wraps after the name, an argument's name and between arguments; only a value longer than
    the column folds, never cut)."""
    shown = ", ".join(f"{k}: {_json(v, 200)}" for k, v in sorted(args.items())) if isinstance(args, dict) else _json(args, 200)
    return f"{name}( {shown} )" if shown else f"{name}()"


def _words(text: str) -> list[str]:
    """A text's words for comparing what was said with what an STT heard (case and punctuation aside)."""
    return "".join(c.lower() if c.isalnum() or c.isspace() else " " for c in text).split()


def text_panel(row: TurnRow) -> tuple[Text, Text]:
    golden = Text()
    golden.append("golden\n", "bold underline")
    if row.spec is not None:
        golden.append(row.spec.golden_text)
    else:  # the greeting is no benchmark turn: nothing to compare it with
        golden.append("(the greeting has no golden answer)" if row.index < 0 else "(benchmark not loaded)", "grey50")
    actual = Text()
    actual.append("actual\n", "bold underline")
    res = row.result
    if res is None:
        actual.append("(turn not finished)", "grey50")
    else:
        if res.sentinel:
            actual.append(res.sentinel + "\n", "bold red")
        actual.append(res.assistant_text or "(no speech)", "" if res.assistant_text else "grey50")
    return golden, actual


def tools_table(row: TurnRow) -> Table:
    t = Table(title="tool calls", title_justify="left", expand=True, show_lines=True)
    # a call's arguments are one long word to Rich: folded at the column's edge, never cut with "…"
    t.add_column("expected", ratio=1, overflow="fold")
    t.add_column("made (status)", ratio=1, overflow="fold")
    t.add_column("payload sent back to the model", ratio=2, overflow="fold")
    expected = row.spec.expected_calls if row.spec else []
    made = list(row.result.tool_calls) if row.result else []
    by_exp = {c.expected_index: c for c in made if c.expected_index is not None}
    used: set[str] = set()
    for i, e in enumerate(expected):
        call = by_exp.get(i)
        if call is None:
            call = next((c for c in made if c.name == e.get("name") and c.call_id not in used), None)
        if call is not None:
            used.add(call.call_id)
        t.add_row(call_text(e.get("name"), e.get("args", {})), *_made_cells(call))
    for c in made:
        if c.call_id not in used:
            t.add_row(Text("(none)", "grey50"), *_made_cells(c))
    if not expected and not made:
        if row.result is None:
            for called in row.tool_calls:
                t.add_row("?", call_text(called.name, called.args), Text("(in progress)", "grey50"))
        if not row.tool_calls:
            t.add_row(Text("none", "grey50"), Text("none", "grey50"), "")
    return t


def _made_cells(call: ToolCallRecord | None) -> tuple[Text, Text]:
    if call is None:
        return Text("✗ not called", "bold red"), Text("")
    ok = call.status in ("matched", "end_session") and not call.is_duplicate
    made = Text(f"{call_text(call.name, call.args)}\n")
    made.append(("✓ " if ok else "✗ ") + call.status + (" (duplicate)" if call.is_duplicate else ""),
                "bold green" if ok else "bold red")
    if call.made_by is not None:  # a delegating model's: which of its two models made it
        made.append(f"\nby the {'backend' if call.made_by == 'back' else 'front'} model"
                    + (f" {call.made_by_model}" if call.made_by_model else ""), "grey62")
    return made, Text(_json(call.response))


def latency_table(row: TurnRow, speed: float | None = 1.0) -> Table:
    """Each figure; at a speed other than 1 the title says they are not comparable, and a figure
    from the user's end below 0 reads as what it is (the bot came in before the user finished); a
    turn whose latencies count in no figure (`timing.latency_counts`) says why in the title."""
    notes = [speed_note(speed)]
    if row.untrusted:
        notes.append(f"{UNTRUSTED}; in no latency figure")
    elif row.result is not None and not latency_counts(row.status):
        notes.append(f"{APART.get(row.status, row.status)}: in no latency figure")
    note = "; ".join(n for n in notes if n)
    t = Table(title="latencies" + (f" ({note})" if note else ""), title_justify="left", expand=True)
    t.add_column("measure")
    t.add_column("ms", justify="right")
    t.add_column("what it is", style="grey62")
    lat = row.result.latencies if row.result else None
    overlap = barge_in_ms(lat) if lat else None
    for field, label, why in LATENCY_LABELS:
        v = getattr(lat, field, None) if lat else None
        if field == "voice_to_voice_ms" and overlap is not None:
            t.add_row(label, Text(barge_in_text(overlap), "bold dark_orange"), why)
        else:
            t.add_row(label, latency_text(v, unit=False), why)  # the title carries the speed note
        if field == "pipeline_ttfb_ms" and lat is not None and lat.stages() is not None:
            for stage, stage_label, stage_why in STAGE_LABELS:
                t.add_row(stage_label, latency_text(getattr(lat, stage), unit=False), stage_why)
    return t


def flags_text(row: TurnRow, speed: float | None = 1.0) -> Text:
    t = Text()
    t.append("turn-taking  ", "bold underline")
    res = row.result
    if res is None:
        t.append("(turn not finished)", "grey50")
        return t
    flags = []
    overlap = barge_in_ms(res.latencies)
    if overlap is not None:
        flags.append((barge_in_text(overlap), "bold dark_orange"))
    if res.overlap_ms >= 100:
        flags.append((f"overlap {res.overlap_ms:.0f} ms", "bold red"))
    elif res.overlap_ms > 0:
        flags.append((f"overlap {res.overlap_ms:.0f} ms (<100)", "yellow"))
    if (interrupted := interrupted_text(res)) is not None:
        flags.append((interrupted, "bold yellow"))
    if res.agent_interruptions:
        flags.append((f"bot started over the user {res.agent_interruptions}×", "bold dark_orange"))
    if res.early_start_ms is not None:
        flags.append((early_start_text(res.early_start_ms, speed), "bold dark_orange"))
    if res.retries:
        flags.append((f"{res.retries} retr{'y' if res.retries == 1 else 'ies'}", "bold dark_orange"))
    if res.reconnects:
        flags.append((f"{res.reconnects} reconnect(s)", "bold blue"))
    ls = res.latencies.leading_silence_ms
    if ls is not None and ls > 5000:
        flags.append((f"leading silence {ls / 1000:.1f} s", "bold red"))
    if res.status != "ok":
        flags.append((f"status {res.status}", "bold red"))
    if not flags:
        t.append("clean", "green")
    for i, (f, style) in enumerate(flags):
        t.append(("  ·  " if i else "") + f, style)
    t.append(f"\nsession {res.session}   user audio "
             + (f"{res.user_audio.start_ms / 1000:.2f}–{res.user_audio.end_ms / 1000:.2f}s" if res.user_audio else "–")
             + f"   bot speech {len(res.bot_speech)} span(s)", "grey62")
    cues = row.spec.duplex if row.spec else []
    for o in res.duplex or []:  # the user speaking during the reply (the turn's duplex cues)
        cue = cues[o.index] if o.index < len(cues) else None
        said = f"“{cue.text}” {cue.at_ms:,.0f} ms into the reply: " if cue is not None else ""
        t.append("\nduplex  ", "bold")
        t.append(said + outcome_text(o, speed))
    if res.error:
        t.append(f"\nerror: {res.error}", "bold red")
    return t


def why_text(row: TurnRow, causes: tuple[str, ...] = ()) -> Text:
    """What the turn's verdict comes from, said at the top: the fault injected on it (by design:
    the simulator's, named with what it does), each failing dimension with the reason that counts
    (a person's marked `✎`), and each cause with what it means and who decided it."""
    t = Text()
    if row.fault is not None:
        t.append(f"{FAULT} fault injected by design: {row.fault.meaning}", "bold magenta")
    if row.verdict == "fail":
        for dim, s in row.scores.items():
            if s.verdict == "fail":
                t.append("\n" if t else "")
                t.append(f"✗ {named(dim).words}", "bold red")
                t.append(f" {HUMAN} {s.by}" if s.by else "", "bold cyan")
                t.append(f": {s.reasoning}" if s.reasoning else "")
    for cause in causes:
        t.append("\n" if t else "")
        t.append(f"cause  {MEANING.get(cause, cause)}", "yellow" if row.verdict in APART else "red")
        t.append(f"  ({cause_source(cause, row.standing)})", "grey62")
    return t


class TurnDetailScreen(actions.TurnKeys):
    HELP_WHERE, HELP_ORDER = "turn detail", 4
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("p", "play", "Play"),
        Binding("s", "stop_audio", "Stop audio", show=False),
        Binding("r", "rejudge", "Re-judge"),
        Binding("v", "review", "Verdict", tooltip="Your verdict on this turn (pass/fail per dimension, why), or withdraw it"),
        Binding("left,comma", "prev", "Prev", tooltip="Previous turn"),
        Binding("right,full_stop", "next", "Next", tooltip="Next turn"),
    ]

    def __init__(self, state: RunState, turn: int) -> None:
        super().__init__()
        self.state = state
        self.turn = turn
        self._painted: tuple | None = None
        self._body: tuple | None = None  # what the panels show (`row_signature` of the turn)

    def compose(self) -> ComposeResult:
        yield RunHeader(id="run-header")
        with VerticalScroll(id="detail"):
            yield Static(id="detail-title")
            with Horizontal(id="detail-texts"):
                yield Static(id="golden", classes="panel")
                yield Static(id="actual", classes="panel")
            yield Static(id="detail-input")
            yield Static(id="detail-tools")
            yield Static(id="detail-latency")
            yield Static(id="detail-flags")
            yield Static(id="detail-judgement")
        yield Footer()

    def on_mount(self) -> None:
        self.paint(force=True)
        self._reread()

    def show_turn(self, turn: int) -> None:
        """Show `turn` (the screen is kept between openings: `RunScreen.action_detail`), with any
        judgement of it stored since (another process may have judged it)."""
        self.turn = turn
        if self.is_mounted:
            self.paint(force=True)
            self._reread()

    def _reread(self) -> None:
        if self.state.ended is not None:
            actions.reread_judgements(self, self.state, self.turn)

    def on_live_update(self, message: LiveUpdate) -> None:
        if self.state.run_id in message.run_ids:
            self.paint()

    def on_turn_rejudged(self, message: TurnRejudged) -> None:
        if message.run_id == self.state.run_id:
            self.paint(force=True)

    def paint(self, force: bool = False) -> None:
        """The header follows the run; the panels only this turn: while other turns stream (every
        delta is new content), re-rendering its tables and laying the screen out again held the UI."""
        # levels alone change nothing here but the elapsed clock (once a second is enough)
        key = (self.state.content_version, int(self.state.last_ms // 1000))
        if not force and self._painted == key:
            return
        self._painted = key
        self.query_one(RunHeader).refresh_from(self.state)
        row = self.state.turns.get(self.turn) or TurnRow(index=self.turn, spec=self.state.specs.get(self.turn))
        causes = self.state.causes().get(self.turn, ())
        body = (self.turn, row_signature(row, [], self.state.speed), len(row.tool_results), causes)
        if not force and body == self._body:
            return
        self._body = body
        title = Text()
        title.append("greeting" if self.turn == -1 else f"turn {self.turn}", "bold reverse")
        title.append(f"  status {row.status}")
        if row.categories:
            title.append(f"  categories {', '.join(row.categories)}")
        if row.attempts > 1:
            title.append(f"  attempts {row.attempts}", "dark_orange")
        if why := why_text(row, causes):
            title.append("\n").append_text(why)
        self.query_one("#detail-title", Static).update(title)
        golden, actual = text_panel(row)
        self.query_one("#golden", Static).update(golden)
        self.query_one("#actual", Static).update(actual)
        inp = Text()
        inp.append("user said  ", "bold underline")
        inp.append(row.spec.input if row.spec else (row.result.user_text if row.result else "–"))
        if row.result and row.result.user_transcript:
            said = row.spec.input if row.spec else row.result.user_text
            stt = row.result.latencies.stages() is not None  # a cascade: what its STT gave the LLM
            inp.append("\nSTT heard  " if stt else "\nprovider heard  ", "bold underline")
            inp.append(row.result.user_transcript, "italic")
            if stt and _words(row.result.user_transcript) != _words(said):
                inp.append("  (not what was said: the LLM answered these words)", "bold dark_orange")
        self.query_one("#detail-input", Static).update(inp)
        self.query_one("#detail-tools", Static).update(RenderedOnce(tools_table(row)))
        self.query_one("#detail-latency", Static).update(RenderedOnce(latency_table(row, self.state.speed)))
        self.query_one("#detail-flags", Static).update(flags_text(row, self.state.speed))
        self.query_one("#detail-judgement", Static).update(RenderedOnce(judgement_renderable(row)))

    def _step(self, delta: int) -> None:
        order = sorted(self.state.turns)
        if self.turn in order:
            i = order.index(self.turn) + delta
            if 0 <= i < len(order):
                self.turn = order[i]
                self.paint(force=True)

    def action_prev(self) -> None:
        self._step(-1)

    def action_next(self) -> None:
        self._step(1)

    def action_back(self) -> None:
        self.app.pop_screen()

    @property
    def acted_turn(self) -> int | None:
        return self.turn

    def action_review(self) -> None:
        actions.review(self, self.state, self.turn)

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Play turn audio", "Play (or export) this turn's audio", self.action_play)
        yield SystemCommand("Re-judge turn", "Judge this turn again", self.action_rejudge)
        yield SystemCommand("Your verdict on this turn", "Pass or fail per dimension with a reason: it wins over "
                            "the judge's until withdrawn (or withdraw yours)", self.action_review)
        yield SystemCommand("Next turn", "Show the next turn", self.action_next)
        yield SystemCommand("Previous turn", "Show the previous turn", self.action_prev)
