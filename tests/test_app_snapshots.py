"""Snapshots of every screen, from a frozen real recording (fixed times, fixed data).

Regenerate after an intended UI change with `pytest tests/test_app_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.run_view import RunState, specs_from_benchmark
from arena_tui.widgets.turn_table import TurnTable
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events, load_fixture_db, load_layout_db, long_events
from tests.pilot import until

SIZES = [(80, 24), (120, 40), (160, 48)]
sizes = pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])


@pytest.fixture
def fixture_db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_fixture_db(db))


@pytest.fixture
def layout_db(tmp_path: Path) -> tuple[Path, str]:
    """The demo recording and the long-named run (a long model id and run id, `empty_response (3 retries)`)."""
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_layout_db(db))


@pytest.fixture
def no_keys(monkeypatch) -> None:
    """The new-run dialog says which keys are missing: make that the same on every machine."""
    from runners.base import get_runner, known_models

    for alias in known_models():
        for env in get_runner(alias).key_env:
            monkeypatch.delenv(env, raising=False)


async def _followed(pilot) -> None:
    """The transcript and event log have reached their end (they follow once the layout settles)."""
    from arena_tui.widgets.event_log import BlockText

    await pilot.pause(0.2)
    await until(pilot, lambda: all(w.scroll_y == w.max_scroll_y for w in pilot.app.screen.query(BlockText)))


async def _stored_ready(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
    await _followed(pilot)


async def _runs_ready(pilot) -> None:
    await until(pilot, lambda: isinstance(pilot.app.screen, RunsScreen) and len(pilot.app.screen.rows) == 2)
    await pilot.pause(0.2)


@sizes
def test_runs_list(snap_compare, layout_db, size) -> None:
    """Model and benchmark of both runs in view at every width, the pass rates whole with their legend."""
    db, _ = layout_db
    assert snap_compare(ArenaApp(db), terminal_size=size, run_before=_runs_ready)


@sizes
def test_delete_question_wraps(snap_compare, layout_db, size) -> None:
    db, _ = layout_db

    async def ask(pilot) -> None:
        await _runs_ready(pilot)
        await pilot.press("d")
        await until(pilot, lambda: type(pilot.app.screen).__name__ == "ConfirmDialog")
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(db), terminal_size=size, run_before=ask)


@sizes
def test_stored_run_with_a_long_status_and_model(snap_compare, layout_db, size) -> None:
    db, run_id = layout_db
    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=size, run_before=_stored_ready)


def _live_until(events: list, turn: int):
    """A run_before that shows `events` as a live run cut in the middle of `turn`."""

    async def live(pilot) -> None:
        app = pilot.app
        from benchmarks.registry import load_benchmark

        run_id = events[0].run_id
        state = app.live[run_id] = RunState(run_id, specs_from_benchmark(load_benchmark("demo_bench")))
        shown = cut_mid_turn(events, turn)
        for ev in shown:
            app.bus.publish(ev)
        app.pump()
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        # a turn's end is shown once the store has committed it (CommitGate): wait for every one
        ended = {ev.turn_index for ev in shown if ev.kind == "turn_ended"}
        await until(pilot, lambda: {i for i, r in state.turns.items() if r.result is not None} == ended)
        await _followed(pilot)

    return live


@sizes
def test_live_run_with_a_long_status_and_model(snap_compare, tmp_path: Path, size) -> None:
    """Mid-run, after the turn answered empty four times: the columns are the finished run's."""
    assert snap_compare(ArenaApp(tmp_path / "arena.db"), terminal_size=size, run_before=_live_until(long_events(), 3))


@sizes
def test_live_run_mid_turn_with_overlap(snap_compare, tmp_path: Path, size) -> None:
    events = fixture_events()
    turn = next(ev.turn_index for ev in events if ev.kind == "overlap")
    assert snap_compare(ArenaApp(tmp_path / "arena.db"), terminal_size=size, run_before=_live_until(events, turn))


@sizes
def test_stored_run_opens_finished(snap_compare, fixture_db, size) -> None:
    db, run_id = fixture_db
    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=size, run_before=_stored_ready)


@sizes
def test_turn_detail(snap_compare, fixture_db, size) -> None:
    db, run_id = fixture_db

    async def detail(pilot) -> None:
        await _stored_ready(pilot)
        table = pilot.app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("3"))  # the turn with the rotation and retry
        await pilot.press("enter")
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=size, run_before=detail)


@sizes
def test_play_dialog(snap_compare, fixture_db, size) -> None:
    db, run_id = fixture_db

    async def play(pilot) -> None:
        await _stored_ready(pilot)
        table = pilot.app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("3"))
        await pilot.press("p")
        # the dialog up and laid out (a fixed pause was too short on a busy machine)
        await until(pilot, lambda: type(pilot.app.screen).__name__ == "PlayDialog" and pilot.app.screen.query("#close-btn"))
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=size, run_before=play)


@sizes
def test_replay_step(snap_compare, fixture_db, size) -> None:
    db, run_id = fixture_db

    async def replay(pilot) -> None:
        await _stored_ready(pilot)
        await pilot.press("t", "n", "n", "n")
        await _followed(pilot)

    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=size, run_before=replay)


@sizes
def test_help(snap_compare, tmp_path: Path, size) -> None:
    assert snap_compare(ArenaApp(tmp_path / "arena.db"), terminal_size=size, press=["question_mark"])


@sizes
def test_new_run_dialog(snap_compare, tmp_path: Path, no_keys, size) -> None:
    async def dialog(pilot) -> None:
        from arena_tui.screens.dialogs.new_run import NewRunDialog

        await pilot.press("n")
        await until(pilot, lambda: isinstance(pilot.app.screen, NewRunDialog) and pilot.app.screen.choices, 60)
        await pilot.pause(0.3)

    app = ArenaApp(tmp_path / "arena.db", tmp_path, launcher=EngineLauncher())  # no benchmark data: the same choices everywhere
    assert snap_compare(app, terminal_size=size, run_before=dialog)


def _screenshots_module():
    """scripts/screenshots.py (a script, not a package) loaded by path."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "screenshots.py"
    spec = importlib.util.spec_from_file_location("arena_screenshots", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_png_render_keeps_dialog_borders_on_the_cell_grid(tmp_path: Path) -> None:
    """The PNG of a dialog has its border where the SVG has it: nothing of the border's colour to the
    right of the dialog (cairosvg drew borders in a fallback font, overshooting by whole cells)."""
    import io
    import re

    import numpy as np

    cairosvg = pytest.importorskip("cairosvg")
    cairocffi = pytest.importorskip("cairocffi")
    from rich.cells import cell_len

    shots = _screenshots_module()

    async def shoot() -> tuple[str, object]:
        app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("n")
            await pilot.pause(0.3)
            return app.export_screenshot(), app.screen.query_one("#new-run").region

    svg, box = asyncio.run(shoot())
    rendered = shots.grid_svg(svg)
    assert "cdnjs" not in rendered and "Fira Code" not in rendered.split("</style>")[0].split("@font-face")[-1]
    texts = re.findall(r"<text [^>]*>([^<]*)</text>", rendered)
    assert not any(ch in shots.BLOCKS or 0x2500 <= ord(ch) <= 0x257F and shots.box_arms(ch) for t in texts for ch in t)

    m = re.search(r'<g transform="translate\(([\d.]+), ([\d.]+)\)" clip-path', svg)
    ox, oy = float(m.group(1)), float(m.group(2))
    first = re.search(r'<text class="[^"]+" x="[\d.]+" y="[\d.]+" textLength="([\d.]+)"[^>]*>([^<]+)</text>', svg)
    import html as _html

    cw = float(first.group(1)) / cell_len(_html.unescape(first.group(2)))
    lh = float(re.search(r"line-height:\s*([\d.]+)px", svg).group(1))
    top0 = float(re.search(r'<clipPath id="[^"]+-line-0">\s*<rect x="[\d.]+" y="([\d.]+)"', svg).group(1))

    png = cairosvg.svg2png(bytestring=rendered.encode())
    surface = cairocffi.ImageSurface.create_from_png(io.BytesIO(png))
    h, stride = surface.get_height(), surface.get_stride()
    px = np.frombuffer(bytes(surface.get_data()), np.uint8).reshape(h, stride // 4, 4)[:, :, :3].astype(int)

    def at(col: float, row: float) -> np.ndarray:
        return px[int(oy + top0 + row * lh), int(ox + col * cw)]

    mid = box.y + box.height // 2 + 0.5
    border = at(box.x + 0.5, mid)  # the left border's colour, mid-height
    assert (np.abs(border - at(box.x + 3, mid)) > 30).any()  # it differs from the inside
    right = int(ox + box.right * cw + 2)
    rows = slice(int(oy + top0 + box.y * lh), int(oy + top0 + box.bottom * lh))
    outside = px[rows, right : right + int(20 * cw)]
    same = (np.abs(outside - border) <= 12).all(axis=2)
    assert same.sum() == 0, f"{same.sum()} pixels of the dialog border's colour right of the dialog"
    inside = px[rows, int(ox + (box.right - 1) * cw) + 1 : int(ox + box.right * cw) - 1]
    assert (np.abs(inside - border) <= 12).all(axis=2).mean() > 0.5  # and the right border is there


@pytest.fixture
def campaign_db(tmp_path: Path) -> Path:
    from tests.snapshots.fixture_campaign import load_campaign_db

    db = tmp_path / "arena.db"
    asyncio.run(load_campaign_db(db))
    return db


async def _campaigns_ready(pilot) -> None:
    from arena_tui.screens.campaigns import CampaignsScreen

    await until(pilot, lambda: isinstance(pilot.app.screen, RunsScreen) and pilot.app.screen.rows)
    await pilot.press("C")
    await until(pilot, lambda: isinstance(pilot.app.screen, CampaignsScreen) and pilot.app.screen.views is not None)
    await pilot.pause(0.2)


@sizes
def test_campaigns_list(snap_compare, campaign_db, size) -> None:
    assert snap_compare(ArenaApp(campaign_db), terminal_size=size, run_before=_campaigns_ready)


@sizes
def test_campaign_matrix(snap_compare, campaign_db, size) -> None:
    """Every state a cell shows; the cursor on a skipped cell, its preflight reason whole below."""
    from arena_tui.screens.campaigns import CampaignScreen

    async def matrix(pilot) -> None:
        await _campaigns_ready(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, CampaignScreen) and pilot.app.screen.view is not None)
        await pilot.press("down", "down", "down", "down")
        await pilot.pause(0.2)

    assert snap_compare(ArenaApp(campaign_db), terminal_size=size, run_before=matrix)
