"""A person's verdict on a turn, from its detail (`v`): pass or fail per dimension, why, and who.

What it records is `arena_tui.judge.human` (`record_verdict`, `withdraw`), as `arena-tui review`
does: a new revision that wins over the judge's on the dimensions given until withdrawn. The
dialog only gathers it: the dimensions the turn is judged on (`human.reviewable`), each left to
the judge or set pass / fail (`enter` or `p` `f` `-` on the highlighted one), the causes of a
failure (`human.CAUSES`), the reason (required for a verdict, not to withdraw one) and the reviewer ($USER unless changed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option

from arena_tui.spine.causes import CAUSES as MEANING
from arena_tui.spine.causes import label
from ...judge.human import CAUSES
from ...verdicts import named
from ...widgets.turn_table import VERDICT_CELL
from ..base import ArenaDialog

CYCLE = {None: "pass", "pass": "fail", "fail": None}  # enter on a dimension: the judge's → pass → fail → the judge's


@dataclass(frozen=True)
class Review:
    """What the dialog was given: the verdicts (dimension → pass|fail), why, who and the causes;
    or, `withdraw`, to take every person's verdict on the turn back."""

    verdicts: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    by: str = ""
    causes: tuple[str, ...] = ()
    withdraw: bool = False


class ReviewDialog(ArenaDialog[Review | None]):
    """`dimensions`: what the turn may be judged on; `judge`: the judge's verdicts (dimension → verdict);
    `mine`: the person's verdicts standing now (pre-set); `withdrawable`: a person's verdict stands."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("p", "set('pass')", "Pass", show=False),
        Binding("f", "set('fail')", "Fail", show=False),
        Binding("minus,delete", "set('')", "Leave to the judge", show=False),
    ]
    DEFAULT_CSS = """
    ReviewDialog #review { height: auto; max-height: 100%; }
    ReviewDialog #review-dims { height: auto; max-height: 8; margin-bottom: 1; }
    ReviewDialog #review-causes { height: 6; margin-bottom: 1; }
    ReviewDialog #review-who { height: auto; }
    ReviewDialog #review-reason { width: 1fr; }
    ReviewDialog #review-by { width: 20; }
    ReviewDialog #review-error { height: auto; color: $error; }
    """

    def __init__(self, turn: int, dimensions: list[str], judge: dict[str, str], mine: Mapping[str, str], by: str,
                 withdrawable: bool, causes: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.turn = turn
        self.dimensions = dimensions
        self.judge = judge
        self.mine: dict[str, str | None] = {d: mine.get(d) for d in dimensions}
        self.by = by
        self.withdrawable = withdrawable
        self.causes = causes

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="review", classes="dialog wide"):
            yield Static(Text.assemble((f"Your verdict on turn {self.turn}", "bold"),
                                       " (wins over the judge's in every figure until withdrawn)"))
            yield Label("enter cycles the judge's → pass → fail; p f - set it", classes="hint")
            yield OptionList(*(Option(self._prompt(d), id=d) for d in self.dimensions), id="review-dims")
            yield Label("why it fails (causes, space picks):")
            yield SelectionList[str](*((f"{label(c)}: {MEANING[c].split(': ', 1)[-1]}", c, c in self.causes) for c in CAUSES),
                                     id="review-causes")
            with Horizontal(id="review-who"):
                yield Input(placeholder="why (required: kept with the verdict)", id="review-reason")
                yield Input(self.by, placeholder="who", id="review-by")
            yield Static("", id="review-error")
            with Horizontal(classes="buttons"):
                yield Button("Record", id="record", variant="primary")
                if self.withdrawable:
                    yield Button("Withdraw mine", id="withdraw", variant="warning")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#review-dims", OptionList).focus()

    def _prompt(self, dim: str) -> Text:
        judged = self.judge.get(dim)
        mine = self.mine.get(dim)
        t = Text(f"{named(dim).code} {named(dim).words:<16}", "bold" if mine else "")
        t.append("judge ")
        t.append_text(VERDICT_CELL.get(judged or "na", Text("?")).copy() if judged else Text("–", "grey50"))
        t.append("   yours ")
        t.append(mine or "the judge's", ("bold green" if mine == "pass" else "bold red") if mine else "grey50")
        return t

    def _redraw(self, dim: str) -> None:
        self.query_one("#review-dims", OptionList).replace_option_prompt(dim, self._prompt(dim))

    @on(OptionList.OptionSelected, "#review-dims")
    def _cycle(self, event: OptionList.OptionSelected) -> None:
        dim = str(event.option.id)
        self.mine[dim] = CYCLE[self.mine.get(dim)]
        self._redraw(dim)

    def action_set(self, verdict: str) -> None:
        dims = self.query_one("#review-dims", OptionList)
        if dims.highlighted is None:
            return
        dim = str(dims.get_option_at_index(dims.highlighted).id)
        self.mine[dim] = verdict or None
        self._redraw(dim)

    def _error(self, text: str) -> None:
        self.query_one("#review-error", Static).update(text)

    def _who_and_why(self, reason_needed: bool = True) -> tuple[str, str] | None:
        """(who, why); `reason_needed=False` (a withdrawal): the reason may be left empty."""
        reason = " ".join(self.query_one("#review-reason", Input).value.split())
        by = self.query_one("#review-by", Input).value.strip()
        if not reason and reason_needed:
            self._error("say why: the reason is kept with the verdict and shown with it")
            self.query_one("#review-reason", Input).focus()
            return None
        if not by:
            self._error("say who reviews")
            self.query_one("#review-by", Input).focus()
            return None
        return by, reason

    @on(Button.Pressed, "#record")
    @on(Input.Submitted)
    def record(self) -> None:
        verdicts = {d: v for d, v in self.mine.items() if v}
        if not verdicts:
            self._error("set at least one dimension to pass or fail (enter on it)")
            return
        causes = tuple(self.query_one("#review-causes", SelectionList).selected)
        if causes and "fail" not in verdicts.values():
            self._error("causes say why a turn fails: give them with a fail")
            return
        if (who := self._who_and_why()) is not None:
            self.dismiss(Review(verdicts, who[1], who[0], causes))

    @on(Button.Pressed, "#withdraw")
    def withdraw(self) -> None:
        if (who := self._who_and_why(reason_needed=False)) is not None:
            self.dismiss(Review(reason=who[1], by=who[0], withdraw=True))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
