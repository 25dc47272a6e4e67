"""How sure the judge is, on screen: a turn's majority of repeated judgings in the turn detail
(how many judgings gave each verdict), and the judge agreement on the leaderboard."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from arena_tui.judge.rubric import JUDGE_VERSION
from arena_tui.app import ArenaApp
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.widgets.turn_table import TurnTable
from tests.pilot import until

from .test_judge_agreement import judged_three_times
from .test_judge_worker import RUN
from .test_judge_worker import conv as conv  # noqa: F401 - the module's benchmark fixture

SIZE = (150, 45)


def text_of(renderable: object, width: int = 150) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.fixture
def repeated(conv, tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """A database with RUN judged three times (outside the test's event loop: the CLI runs its own)."""
    db = tmp_path / "arena.db"
    code, _, _ = judged_three_times(conv, db, shared_data, monkeypatch)
    assert code == 0
    return db


async def test_turn_detail_and_leaderboard_show_how_sure_the_judge_was(repeated: Path) -> None:
    db = repeated
    app = ArenaApp(db, open_run=RUN)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("end")
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("10"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        detail = app.screen
        shown = text_of(detail.query_one("#detail-judgement").content)
        assert f"anthropic:claude-test ({JUDGE_VERSION})" in shown and "majority" in shown, shown
        assert "the majority of 3 judgings (revisions" in shown
        assert any("kb_grounding" in line and "✗" in line and "2/3" in line for line in shown.splitlines())
        assert any("instruction_following" in line and "3/3" in line for line in shown.splitlines())
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows, 10)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None, 10)
        board = app.screen
        row = board.shown[0]
        from arena_tui.compare.judging import row_agreement  # the figure the cell shows

        assert row_agreement(row).text() == "94.4% (34/36 verdicts; 4 turns, 3 judgings each)"
        notes = str(board.query_one("#board-notes").render())
        assert f"judged by anthropic:claude-test ({JUDGE_VERSION})" in notes
        from textual.widgets import DataTable

        for first in range(0, 60):  # scroll the columns until the judge's agreement comes into view
            board.first = first
            board.render_board()
            await pilot.pause()
            head = [str(c.label) for c in board.query_one("#board", DataTable).columns.values()]
            if "judge agree" in head:
                break
        assert "judge agree" in head, head
        cell = board.query_one("#board", DataTable).get_row_at(0)[head.index("judge agree")]
        assert str(cell).startswith("94% 34/36"), str(cell)
