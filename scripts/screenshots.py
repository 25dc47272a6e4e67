#!/usr/bin/env python
"""Regenerate screenshots/: every screen as SVG (Textual's own screenshot) and PNG (cairosvg).

The data is the frozen real demo recording in tests/snapshots/demo_run.jsonl, loaded into a
throw-away database, so screenshots show no machine paths and no keys. Usage:
    python scripts/screenshots.py [--out screenshots] [--no-png]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_tui.app import ArenaApp  # noqa: E402
from arena_tui.screens.replay import ReplayScreen  # noqa: E402
from arena_tui.screens.run import RunScreen  # noqa: E402
from arena_tui.screens.runs import RunsScreen  # noqa: E402
from arena_tui.widgets.run_state import RunState, specs_from_benchmark  # noqa: E402
from arena_tui.widgets.turn_table import TurnTable  # noqa: E402
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events, load_fixture_db  # noqa: E402

SIZE = (160, 46)


async def until(pilot, cond, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise RuntimeError("screen did not settle")


async def shoot(out: Path) -> list[Path]:
    tmp = Path(tempfile.mkdtemp(prefix="arena-shots-"))
    db = tmp / "arena.db"
    run_id = await load_fixture_db(db)
    events = fixture_events()
    shots: list[Path] = []

    def save(app, name: str) -> None:
        shots.append(Path(app.save_screenshot(f"{name}.svg", path=str(out))))

    app = ArenaApp(db)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        await pilot.pause(0.3)
        save(app, "runs_list")

        # live: the recording cut in the middle of the turn that overlaps, meters mid-speech
        from benchmarks.loader import load_benchmark

        turn = next(ev.turn_index for ev in events if ev.kind == "overlap")
        live_id = run_id + "-live"
        app.live[live_id] = RunState(live_id, specs_from_benchmark(load_benchmark("demo_bench")))
        for ev in cut_mid_turn(events, turn):
            app.bus.publish(ev.model_copy(update={"run_id": live_id}))
        app.pump()
        app.push_screen(RunScreen(app.live[live_id], live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        await pilot.pause(0.3)
        save(app, "live_run")
        await pilot.press("escape")

        app.open_replay(run_id)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.press("n", "n", "n")
        await pilot.pause(0.3)
        save(app, "replay")
        await pilot.press("end")
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("3"))
        await pilot.press("enter")
        await pilot.pause(0.3)
        app.screen.query_one("#detail").scroll_to(y=0, animate=False, immediate=True)
        save(app, "turn_detail")
        await pilot.press("p")
        await pilot.pause(0.3)
        save(app, "play_dialog")
        await pilot.press("escape", "escape")
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        save(app, "help")
        await pilot.press("escape")
    return shots


def to_png(svgs: list[Path]) -> list[Path]:
    try:
        import cairosvg
    except ImportError:
        print("cairosvg not installed: pip install cairosvg (needs libcairo2); SVGs only", file=sys.stderr)
        return []
    pngs = []
    for svg in svgs:
        png = svg.with_suffix(".png")
        cairosvg.svg2png(url=str(svg), write_to=str(png), output_width=1800)
        pngs.append(png)
    return pngs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "screenshots"))
    ap.add_argument("--no-png", action="store_true")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    svgs = asyncio.run(shoot(out))
    pngs = [] if args.no_png else to_png(svgs)
    for p in svgs + pngs:
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
