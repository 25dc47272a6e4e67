"""One turn of a comparison in full, under the compare table: what the user said, the golden answer,
what each side said with the words the other did not say marked (`compare.word_diff`), its calls
with their arguments, its latency and its verdict with the causes of a failure. A side that did not
play the turn reads "not played": no answer and no verdict, never a failure.

Two runs: each side is its run's turn. Two leaderboard rows: each side is every repeat that played
the turn, the first of each side diffed against the other's first.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..compare.pair import HUMAN_MARK, ModelTurnComparison, Side, TurnComparison
from ..compare.render import ms
from ..compare.word_diff import Piece, word_diff
from ..judge.causes import causes_text
from ..verdicts import APART, apart_text, named
from .board_cells import MUTED, verdict_text

GONE = "bold red strike"  # only this side said it (the other left it out)
NEW = "bold green underline"  # only this side said it (the other did not)
SIDE_BY_SIDE = 110  # narrower than this the two sides are stacked
LEGEND = Text.assemble(("struck red", GONE), ": only A said it · ", ("underlined green", NEW), ": only B said it")


def pieces_text(pieces: list[Piece]) -> Text:
    t = Text()
    for p in pieces:
        t.append(p.text, GONE if p.op == "gone" else NEW if p.op == "new" else "")
    return t


def verdict_line(side: Side, latency_note: str = "") -> Text:
    """`✗ fail · tool use, KB · missed call, partial answer · v2v 1,210 ms`, or why it is no verdict."""
    if not side.played:
        return Text("not played: no answer, no verdict (never a failure)", "yellow")
    t = verdict_text(side.verdict).copy()
    if side.verdict not in APART:
        t.append(f" {side.verdict}")
    if side.human:  # a person's verdict decides some dimension (their reason, marked, is under the side)
        t.append(f" {HUMAN_MARK} a person's verdict", "bold cyan")
    failing = [named(d).words for d, v in side.dimensions.items() if v == "fail"]
    if failing:
        t.append(f" · {', '.join(failing)}", "red")
    if side.causes:
        t.append(f" · {causes_text(side.causes)}", "yellow")
    t.append(f" · status {side.status}", MUTED)
    t.append(f" · v2v {ms(side.voice_to_voice_ms)}" if side.voice_to_voice_ms is not None else f" · v2v – {latency_note}".rstrip(),
             MUTED)  # fmt: skip
    return t


def side_text(name: str, side: Side, said: Text | None, latency_note: str = "") -> Text:
    """A side: its verdict line, what it said (`said`: marked against the other side), its calls."""
    t = Text.assemble((f"{name} ", "bold"), verdict_line(side, latency_note))
    if not side.played:
        return t
    t.append("\n")
    t.append_text(said if said is not None else Text(side.answer or "(no speech)", "" if side.answer else MUTED))
    for call in side.calls:
        t.append(f"\n  call {call}", "cyan")
    for dim, why in side.reasons.items():
        t.append(f"\n  {named(dim).words}: {why}", MUTED)
    return t


def _sides(a: Text, b: Text, width: int) -> RenderableType:
    if width < SIDE_BY_SIDE:
        return Group(a, Text(""), b)
    grid = Table.grid(expand=True, padding=(0, 2))
    grid.add_column(ratio=1)
    grid.add_column(ratio=1)
    grid.add_row(a, b)
    return grid


def _marked(a: Side, b: Side) -> tuple[Text | None, Text | None]:
    """Each side's words with the other's differences marked, when both said something."""
    if not (a.played and b.played and a.answer and b.answer):
        return None, None
    left, right = word_diff(a.answer, b.answer)
    return pieces_text(left), pieces_text(right)


def pair_turn(t: TurnComparison | ModelTurnComparison, width: int, notes: tuple[str, str] = ("", "")) -> RenderableType:
    """The turn in full for a pane `width` cells wide (`notes`: why a side's latency is not compared)."""
    head = Text.assemble((f"turn {t.turn_index}", "bold reverse"), "  user: ", (t.user_text or "–", "italic"))
    golden = Text.assemble(("golden ", "bold"), t.golden or Text("(the benchmark's data is not at hand)", MUTED))
    parts: list[RenderableType] = [head, golden, LEGEND, Text("")]
    if isinstance(t, TurnComparison):
        sa, sb = _marked(t.a, t.b)
        parts.append(_sides(side_text("A", t.a, sa, notes[0]), side_text("B", t.b, sb, notes[1]), width))
        return Group(*parts)
    first_a = t.a.repeats[0][1] if t.a.repeats else None
    first_b = t.b.repeats[0][1] if t.b.repeats else None
    sa, sb = _marked(first_a, first_b) if first_a is not None and first_b is not None else (None, None)

    def repeats(name: str, side_repeats: tuple[tuple[int, Side], ...], marked: Text | None, apart: str) -> Text:
        if not side_repeats:
            return Text.assemble((f"{name} ", "bold"), (f"no repeat played it ({apart or 'not played'}): no verdict",
                                                        "yellow"))
        out = Text()
        for i, (n, side) in enumerate(side_repeats):
            out.append("\n" if i else "")
            out.append_text(side_text(f"{name} #{n}", side, marked if i == 0 else None))
        return out

    parts.append(_sides(repeats("A", t.a.repeats, sa, apart_text(t.a.apart)),
                        repeats("B", t.b.repeats, sb, apart_text(t.b.apart)), width))
    return Group(*parts)
