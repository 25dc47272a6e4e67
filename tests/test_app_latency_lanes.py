"""The leaderboard's voice-to-voice chart puts every turn's point on its own model's lane, at every
width: read back from the screen (what a user sees), each marker (• a turn, ◆ p50, ▲ p95) sits on
the line that names its row, in that row's legend colour, never on a neighbour's or an unnamed
line; a row with no voice-to-voice (a text model) has no marker. Nine models on one benchmark, as
many as a campaign's conditions × efforts give; real store, real app."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.widgets.board_plots import colour
from tests.pilot import until

from .compare_runs import T, all_pass, events, write_data
from .counting_runs import record

MARKERS = "•◆▲"
MODELS = [f"model-{c}" for c in "abcdefgh"]  # eight with voice-to-voice, each in its own range of ms
TEXT_MODEL = "local:llama3.2"  # a text model: no voice-to-voice


def model_runs() -> list[list]:
    runs = []
    for k, model in enumerate(MODELS):
        base = 400.0 + 150.0 * k
        turns = [T(i, all_pass(i, tool=i == 1, state=i >= 2), base + 20.0 * i,
                   calls=[("book", {"day": "saturday"})] if i == 1 else []) for i in range(4)]
        runs.append(events(f"v{k}", model, "mini_bench", turns, config={"speed": 1.0}))
    text = [T(i, all_pass(i, tool=i == 1, state=i >= 2), None, calls=[("book", {"day": "saturday"})] if i == 1 else [])
            for i in range(4)]
    runs.append(events("txt", TEXT_MODEL, "mini_bench", text, config={"speed": 1.0}, provider="openai"))
    return runs


def chart_lines(screen) -> list[tuple[str, list[tuple[str, tuple[int, int, int] | None]]]]:
    """Each screen line of the chart: (its text, the markers on it with their colours)."""
    region = screen.query_one("#plot-latency").region
    if box := list(screen.query("#plot-latency-lanes")):  # what of it is in view
        region = region.intersection(box[0].region)
    out = []
    for y, strip in enumerate(screen._compositor.render_strips()):
        if not region.y <= y < region.bottom:
            continue
        x, text, marks = 0, [], []
        for seg in strip:
            for ch in seg.text:
                if region.x <= x < region.right:
                    text.append(ch)
                    if ch in MARKERS:
                        c = seg.style.color if seg.style is not None else None
                        marks.append((ch, tuple(c.get_truecolor()) if c is not None else None))
                x += 1
        out.append(("".join(text), marks))
    return out


def lane_label(line: str) -> str:
    """The row name a line starts with (before its axis: plotext's `┤`, a lane's `│`)."""
    for axis in ("┤", "│"):
        if axis in line:
            return line.split(axis, 1)[0].strip().removesuffix("(none)").strip()
    return ""


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)], ids=["80x24", "120x40", "160x48"])
async def test_every_point_sits_on_its_own_models_lane(tmp_path: Path, size) -> None:
    db = tmp_path / "arena.db"
    await record(db, *model_runs())
    app = ArenaApp(db, write_data(tmp_path / "data"))
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == len(MODELS) + 1)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen
        if not board.query_one("#board-plots").display:
            await pilot.press("v")  # a short terminal shows the plots on `v`
        await pilot.pause(0.3)
        rows = [r for r in board.rows if r.benchmark == "mini_bench"]
        assert len(rows) == len(MODELS) + 1
        index = {r.model: k for k, r in enumerate(rows)}  # the plot's colours go by the rows' order
        palette = {colour(k) for k in index.values()}
        scroll = board.query("#plot-latency-lanes")
        seen: dict[str, int] = {}
        for _ in range(4):  # the lanes may scroll in a short plot area: read every page
            for text, all_marks in chart_lines(board):
                marks = [(ch, c) for ch, c in all_marks if c in palette]  # (the key line's are grey)
                if not marks:
                    continue
                label = lane_label(text)
                owners = [m for m in index if label and (m == label or (label.endswith("…") and m.startswith(label[:-1])))]
                assert len(owners) == 1, f"markers on a line naming no single row: {text!r}"
                owner = owners[0]
                assert owner != TEXT_MODEL, f"points on the text model's lane: {text!r}"
                want = colour(index[owner])
                assert all(c == want for _, c in marks), f"{text!r}: {marks} on {owner}'s lane, its colour {want}"
                seen[owner] = seen.get(owner, 0) + len(marks)
            if not scroll or scroll.first().scroll_y >= scroll.first().max_scroll_y:
                break
            scroll.first().scroll_page_down(animate=False)
            await pilot.pause(0.2)
        assert set(seen) == set(MODELS), seen  # every model with voice-to-voice has its points


async def test_the_lanes_name_every_row_and_mark_p50_and_p95_on_the_rows_own_line(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record(db, *model_runs())
    app = ArenaApp(db, write_data(tmp_path / "data"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == len(MODELS) + 1)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        await pilot.pause(0.3)
        lines = chart_lines(app.screen)
        by_label = {lane_label(t): (t, m) for t, m in lines if lane_label(t)}
        for model in MODELS:
            text, marks = by_label[model]
            kinds = {ch for ch, _ in marks}
            assert "◆" in kinds and "▲" in kinds, text  # p50 and p95 on the row's own line
        text, marks = by_label[TEXT_MODEL]
        assert not marks and "none" in text, text

