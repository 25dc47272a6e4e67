#!/usr/bin/env python
"""Regenerate screenshots/: every screen as SVG (Textual's own screenshot) and PNG (cairosvg).

The data is the frozen real demo recording in tests/snapshots/demo_run.jsonl and the long-named
one (a long model id, a turn answered empty after three retries: tests/snapshots/long_run.jsonl),
loaded into a throw-away database, so screenshots show no machine paths and no keys. Every screen
is shot at 120x40 (`<name>.svg`) and at the other sizes the tests check (`<name>_80x24.svg`, ...);
the review shots (a person's verdict given on a turn, the latency chart) are of the demo recording;
the leaderboard, its failure mix, compare and report.png show real runs recorded here first (`real_runs`: the
engine on demo_bench against the simulator, with and without faults, under two acoustic conditions
(one with a reasoning effort), and two providers' protocol fakes, at speed 1 so their latencies
count, and one sped up; a few minutes); the campaign screens
show tests/snapshots/fixture_campaign.py's campaign (a cell in every state) and a variant campaign run now
(`VARIANT_CAMPAIGN`: three conditions × two efforts, its matrix and its leaderboard); the duplex figures (a duplex
turn's detail, the leaderboard's duplex columns) a duplex_bench run against the simulator. report.png is that
report.html at 1280 px in headless Chromium (Debian's `chromium-headless-shell` or `chromium`;
without one, said and skipped). `--smoke` checks that every screen still renders, quickly: one size
(120x40), four of the real runs (SMOKE_RUNS) recorded at SMOKE_SPEED, SVG only (no cairosvg, no Chromium), into a temp folder
removed after unless --out is given (tests/test_scripts_smoke.py runs it). Usage:
    python -m scripts.screenshots [--out screenshots] [--no-png] [--size 120x40 ...] [--only board|campaigns|duplex|report]
    python -m scripts.screenshots --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import io
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from arena_tui.app import ArenaApp  # noqa: E402
from arena_tui.orchestration.launch import EngineLauncher  # noqa: E402
from arena_tui.screens.dialogs.new_run import NewRunDialog  # noqa: E402
from arena_tui.screens.replay import ReplayScreen  # noqa: E402
from arena_tui.screens.run import RunScreen  # noqa: E402
from arena_tui.screens.runs import RunsScreen  # noqa: E402
from arena_tui.run_view import RunState, specs_from_benchmark  # noqa: E402
from arena_tui.widgets.turn_table import TurnTable  # noqa: E402
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events, load_layout_db  # noqa: E402

SIZES = [(120, 40), (80, 24), (160, 48)]
MAIN = SIZES[0]  # the size whose shots carry no size suffix
SMOKE_SPEED = 20.0  # --smoke: the recorded runs' speed (the real shots record at 1x, so their latencies count)
_RUN: dict[str, object] = {"speed": None, "scratch": None}  # this invocation's: recording speed, scratch folder


def scratch(prefix: str) -> Path:
    """A fresh folder for a throw-away database, inside this invocation's scratch folder (removed at its end)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_RUN["scratch"]))


def speed_args() -> list[str]:
    """`--speed` for a recorded run: none for the real shots (1x), SMOKE_SPEED for --smoke (a row's own comes after)."""
    return [] if _RUN["speed"] is None else ["--speed", f"{_RUN['speed']:g}"]


async def until(pilot, cond, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise RuntimeError("screen did not settle")


async def open_turn(pilot, app, turn: int) -> None:
    """Select turn `turn` in the run screen's table and open its detail (enter)."""
    table = app.screen.query_one(TurnTable)
    table.move_cursor(row=table.get_row_index(str(turn)))
    await pilot.press("enter")


async def shoot(out: Path, size: tuple[int, int]) -> list[Path]:
    db = scratch("arena-shots-") / "arena.db"
    long_id = await load_layout_db(db)
    events = fixture_events()
    run_id = events[0].run_id
    shots: list[Path] = []
    suffix = "" if size == MAIN else f"_{size[0]}x{size[1]}"

    def save(app, name: str) -> None:
        shots.append(Path(app.save_screenshot(f"{name}{suffix}.svg", path=str(out))))

    app = ArenaApp(db, launcher=EngineLauncher())
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await pilot.pause(0.3)
        save(app, "runs_list")

        # the model list open: every alias with what it still needs (key names, never values)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewRunDialog) and app.screen.choices)
        app.screen.query_one("#model").focus()
        await pilot.press("enter")
        await pilot.pause(0.3)
        save(app, "new_run_dialog")
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))

        # live: the recording cut in the middle of the turn that overlaps, meters mid-speech
        from benchmarks.registry import load_benchmark

        turn = next(ev.turn_index for ev in events if ev.kind == "overlap")
        live_id = run_id + "-live"
        state = app.live[live_id] = RunState(live_id, specs_from_benchmark(load_benchmark("demo_bench")))
        shown = cut_mid_turn(events, turn)
        for ev in shown:
            app.bus.publish(ev.model_copy(update={"run_id": live_id}))
        app.pump()
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        ended = {ev.turn_index for ev in shown if ev.kind == "turn_ended"}  # shown once committed (CommitGate)
        await until(pilot, lambda: {i for i, r in state.turns.items() if r.result is not None} == ended)
        await pilot.pause(0.3)
        save(app, "live_run")
        await pilot.press("escape")

        app.open_replay(long_id)  # the long model id and `empty_response (3 retries)`
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.3)
        save(app, "stored_run_long")
        await pilot.press("escape")

        app.open_replay(run_id)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.3)
        save(app, "stored_run")
        await pilot.press("t")
        await pilot.press("n", "n", "n")
        await pilot.pause(0.3)
        save(app, "replay")
        await pilot.press("t")
        await open_turn(pilot, app, 3)
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
        await shoot_review(pilot, app, run_id, save)
    return shots


async def shoot_review(pilot, app, run_id: str, save) -> None:
    """The stored demo run's latency over its turns (`l`), a person's verdict being given on turn 2
    (the dialog: knowledge base set to fail, a reason) and the turn detail once it is recorded."""
    from textual.widgets import Input

    from arena_tui.screens.dialogs.review import ReviewDialog
    from arena_tui.screens.turn_detail import TurnDetailScreen

    await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
    await pilot.press("l")
    await pilot.pause(0.4)
    save(app, "latency_chart")
    await pilot.press("l")
    await open_turn(pilot, app, 2)
    await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
    await pilot.press("v")
    await until(pilot, lambda: isinstance(app.screen, ReviewDialog))
    await pilot.press("enter", "enter")  # knowledge base: the judge's → pass → fail
    dialog = app.screen
    dialog.query_one("#review-reason", Input).value = "it offered the slots but never said the price"
    dialog.query_one("#review-by", Input).value = "alice"
    await pilot.pause(0.3)
    save(app, "review_dialog")
    dialog.query_one("#review-reason", Input).focus()
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen) and app.screen.state.turns[2].human)
    await pilot.pause(0.3)
    app.screen.query_one("#detail").scroll_end(animate=False, immediate=True)  # down to the judgement
    await pilot.pause(0.2)
    save(app, "review_detail")
    await pilot.press("escape", "escape")


# (label, argv of `arena-tui run demo_bench …`): real runs of the engine, each its own leaderboard row
REAL_RUNS = [
    ("sim", ["--model", "sim"]),
    ("sim again", ["--model", "sim"]),
    # no answer, a reply cut short (compare marks the words it never said) and a wrong call
    ("sim with faults", ["--model", "sim", "--faults", "0:no_response,1:truncated,2:wrong_call"]),
    ("gpt-realtime fake", ["--model", "gpt-realtime", "--fake"]),  # timed as the real service answers
    ("gemini fake", ["--model", "gemini-native-audio", "--fake"]),
    ("sim at 4x", ["--model", "sim", "--speed", "4"]),
    # the user audio under acoustic conditions, one with a reasoning effort: each its own row
    ("sim under telephony", ["--model", "sim", "--condition", "telephony"]),
    ("sim under noise, high effort", ["--model", "sim", "--condition", "noise=10", "--effort", "high"]),
]
# --smoke: enough for every board screen (the faulted run without its no-response turn: the retries' waits are most of a smoke)
SMOKE_RUNS = {"sim": None, "sim again": None, "sim with faults": ["--model", "sim", "--faults", "1:truncated,2:wrong_call"],
              "sim under telephony": None}
_REAL: dict[str, tuple[Path, list[str]]] = {}


def real_runs() -> tuple[Path, list[str]]:
    """A database of `REAL_RUNS` (turns 0-2 of demo_bench, heuristic judge), recorded once per
    invocation; returns it and the run ids in `REAL_RUNS` order."""
    if "db" not in _REAL:
        from arena_tui.cli import main
        from arena_tui.store import Store

        db = scratch("arena-real-") / "arena.db"
        ids: list[str] = []
        runs = REAL_RUNS if _RUN["speed"] is None else [(k, SMOKE_RUNS[k] or v) for k, v in REAL_RUNS if k in SMOKE_RUNS]
        for label, argv in runs:
            print(f"recording {label}…", file=sys.stderr, end=" ", flush=True)
            t0 = time.monotonic()
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(["--db", str(db), "run", "demo_bench", *speed_args(), *argv, "--turns", "0-2", "--headless",
                             "--judge", "heuristic"])
            print(f"{time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
            if code != 0:
                raise RuntimeError(f"recording {label} failed ({code})")

            async def newest() -> str:
                async with await Store.open(db) as store:
                    return (await store.list_runs())[0].run_id

            ids.append(asyncio.run(newest()))
        _REAL["db"] = (db, ids)
    return _REAL["db"]


async def shoot_board(out: Path, size: tuple[int, int], db: Path, ids: list[str]) -> list[Path]:
    """The leaderboard of the real runs (`real_runs`; cursor on the simulator's row, so the plots
    have data), its failure mix (`m`), and the clean simulator run beside the faulted one (the turn
    whose reply was cut short selected: both answers, the words it never said marked)."""
    from arena_tui.screens.compare import CompareScreen
    from arena_tui.screens.leaderboard import LeaderboardScreen

    app = ArenaApp(db)
    shots: list[Path] = []
    suffix = "" if size == MAIN else f"_{size[0]}x{size[1]}"
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen
        keys = [board.row_key(r) for r in board.shown]
        board.query_one("#board").move_cursor(row=next(i for i, k in enumerate(keys) if k.startswith("sim [")))
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"leaderboard{suffix}.svg", path=str(out))))
        await pilot.press("m")
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"failure_mix{suffix}.svg", path=str(out))))
        await pilot.press("m")
        app.push_screen(CompareScreen(run_ids=(ids[0], ids[2])))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        pair = app.screen.query_one("#pair")
        pair.move_cursor(row=pair.get_row_index("1"))  # turn 1: the faulted run's reply was cut short
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"compare{suffix}.svg", path=str(out))))
    return shots


_DUPLEX_DB: list[Path] = []  # recorded once, shot at every size


async def record_duplex_run() -> tuple[Path, str]:
    """duplex_bench's first three turns against the simulator at speed 1 (its yield latency counts)
    as a selective model (it stops 300 ms into an interruption, talks through a backchannel, leaves
    side speech unanswered), judged by the offline heuristic judge: a real recording's duplex figures."""
    import argparse
    import io

    from loguru import logger

    from arena_tui.orchestration.headless import run_headless
    from arena_tui.orchestration.live import choose_judge
    from arena_tui.store import Store
    from benchmarks.registry import DUPLEX_NAME, load_benchmark
    from arena_tui.spine.settings import RunSettings

    if not _DUPLEX_DB:
        db = scratch("arena-duplex-") / "arena.db"
        logger.remove()
        logger.add(sys.stderr, level="WARNING")
        config = RunSettings(model="sim", speed=_RUN["speed"] or 1.0, turns=[0, 1, 2],
                             faults="yield=300,backchannel=ignore,side_speech=ignore")
        judge = choose_judge(argparse.Namespace(judge="heuristic"))
        await run_headless(load_benchmark(DUPLEX_NAME), config, db, io.StringIO(), judge)
        _DUPLEX_DB.append(db)
    store = await Store.open(_DUPLEX_DB[0])
    try:
        return _DUPLEX_DB[0], (await store.list_runs())[0].run_id
    finally:
        await store.close()


async def shoot_duplex(out: Path, size: tuple[int, int]) -> list[Path]:
    """The duplex figures: a duplex turn's detail (what the bot did about the user's interruption)
    and the leaderboard scrolled to its duplex columns."""
    from arena_tui.screens.leaderboard import LeaderboardScreen

    db, run_id = await record_duplex_run()
    app = ArenaApp(db)
    shots: list[Path] = []
    suffix = "" if size == MAIN else f"_{size[0]}x{size[1]}"
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.open_replay(run_id)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await open_turn(pilot, app, 1)  # the interruption the bot stopped for
        await pilot.pause(0.3)
        app.screen.query_one("#detail").scroll_end(animate=False, immediate=True)  # down to the duplex lines
        await pilot.pause(0.2)
        shots.append(Path(app.save_screenshot(f"duplex_turn_detail{suffix}.svg", path=str(out))))
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen
        duplex = ("yield", "yielded", "backchannel", "side", "agent")
        for _ in board.columns:  # scroll by whole columns until the duplex ones are in view
            if "agent" not in {c.key for c in board.hidden}:
                break
            await pilot.press("right")
            await pilot.pause(0.05)
        assert any(c.key in duplex for c in board.columns), "the leaderboard shows no duplex columns"
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"leaderboard_duplex{suffix}.svg", path=str(out))))
    return shots
CHROMIUMS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def shoot_report(out: Path) -> list[Path]:
    """report.png: `arena-tui report all` of the real runs, its report.html at 1280 px."""
    from arena_tui.cli import main

    browser = next((b for b in map(shutil.which, CHROMIUMS) if b), None)
    if browser is None:
        print(f"no headless Chromium ({', '.join(CHROMIUMS)}): report.png not made "
              "(apt-get install chromium-headless-shell)", file=sys.stderr)
        return []
    db, _ = real_runs()
    dest = db.parent / "report"
    with contextlib.redirect_stdout(io.StringIO()):
        if main(["--db", str(db), "report", "all", str(dest)]) != 0:
            raise RuntimeError("the report failed")
    png = out / "report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={png}", "--window-size=1280,1600", (dest / "report.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    return [png]


async def open_campaigns(app: ArenaApp, pilot) -> None:
    """From the runs list to the campaigns list (`C`), once it has read them."""
    from arena_tui.screens.campaigns import CampaignsScreen

    await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
    await pilot.press("C")
    await until(pilot, lambda: isinstance(app.screen, CampaignsScreen) and app.screen.views is not None)


async def open_campaign(app: ArenaApp, pilot) -> None:
    """The campaign under the list's cursor (`enter`), once it has read it."""
    from arena_tui.screens.campaigns import CampaignScreen

    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)


async def shoot_campaigns(out: Path, size: tuple[int, int]) -> list[Path]:
    """The campaigns list and one campaign's matrix (every cell state; cursor on a skipped cell)."""
    from tests.snapshots.fixture_campaign import load_campaign_db

    db = scratch("arena-campaign-") / "arena.db"
    await load_campaign_db(db)
    suffix = "" if size == MAIN else f"_{size[0]}x{size[1]}"
    app = ArenaApp(db)
    shots: list[Path] = []
    async with app.run_test(size=size) as pilot:
        await open_campaigns(app, pilot)
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"campaigns{suffix}.svg", path=str(out))))
        await open_campaign(app, pilot)
        await pilot.press("down", "down", "down", "down")
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"campaign{suffix}.svg", path=str(out))))
    return shots


#: a campaign over conditions and efforts (`campaign run`, demo_bench turns 0-2, simulator, heuristic judge):
#: six cells of one model that differ only in how the user was heard and what effort was asked
VARIANT_CAMPAIGN = ["--bench", "demo_bench", "--model", "sim", "--condition", "clean,telephony,noise=10",
                    "--effort", "low,high", "--turns", "0-2", "--judge", "heuristic"]
VARIANT_SPEED = 4.0  # its runs' speed (labelled as such on every surface): six runs in about a minute
_VARIANT_DB: list[Path] = []  # recorded once, shot at every size


def variant_campaign() -> Path:
    """A database holding `VARIANT_CAMPAIGN`, run for real by `arena-tui campaign run` (once per invocation)."""
    if not _VARIANT_DB:
        from arena_tui.cli import main

        db = scratch("arena-variants-") / "arena.db"
        print("recording the variant campaign…", file=sys.stderr, end=" ", flush=True)
        t0 = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["--db", str(db), "campaign", "run", *VARIANT_CAMPAIGN, "--speed", f"{_RUN['speed'] or VARIANT_SPEED:g}"])
        print(f"{time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
        if code != 0:
            raise RuntimeError(f"the variant campaign failed ({code})")
        _VARIANT_DB.append(db)
    return _VARIANT_DB[0]


async def shoot_variants(out: Path, size: tuple[int, int], db: Path) -> list[Path]:
    """The variant campaign's matrix (six cells: condition × effort) and its leaderboard (six rows
    told apart by their condition and effort, what they share said once in the header)."""
    from arena_tui.screens.leaderboard import LeaderboardScreen

    suffix = "" if size == MAIN else f"_{size[0]}x{size[1]}"
    app = ArenaApp(db)
    shots: list[Path] = []
    async with app.run_test(size=size) as pilot:
        await open_campaigns(app, pilot)
        await open_campaign(app, pilot)
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"variant_campaign{suffix}.svg", path=str(out))))
        app.pop_screen()
        app.pop_screen()
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        await pilot.pause(0.3)
        shots.append(Path(app.save_screenshot(f"variant_leaderboard{suffix}.svg", path=str(out))))
    return shots


# --- PNG rendering ------------------------------------------------------------------------------
# Textual's SVG places each run of same-styled cells as one <text> with `textLength`, in "Fira Code"
# fetched from a CDN. cairosvg ignores textLength and cannot fetch the font, so a fallback font's
# glyph advances (and its own box-drawing and block glyphs, which do not fill a cell) drift off
# the cell grid: borders overshoot dialogs and labels run into each other. Before converting, the
# SVG is rewritten so every glyph sits at its own cell (an x per letter, in a font that is here),
# and block elements and box-drawing lines become rectangles drawn exactly on the cell grid.

PNG_FONT = "DejaVu Sans Mono"
_TEXT = re.compile(r'<text class="([^"]+)" x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)" clip-path="url\(#([^)]+)\)">([^<]*)</text>')
_CLIP = re.compile(r'<clipPath id="([^"]+)">\s*<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"\s*/>')
_FONT_FACE = re.compile(r"@font-face\s*{[^}]*}")
# block elements: (left, top, width, height) as fractions of the cell; several boxes for quadrants
_EIGHTHS = {0x2581 + i: [(0, 1 - (i + 1) / 8, 1, (i + 1) / 8)] for i in range(8)}  # ▁ … █
_EIGHTHS.update({0x2589 + i: [(0, 0, (7 - i) / 8, 1)] for i in range(7)})  # ▉ … ▏
_Q = {"ul": (0, 0, .5, .5), "ur": (.5, 0, .5, .5), "ll": (0, .5, .5, .5), "lr": (.5, .5, .5, .5)}
BLOCKS: dict[str, list[tuple[float, float, float, float]]] = {
    chr(k): v for k, v in {
        **_EIGHTHS,
        0x2580: [(0, 0, 1, .5)], 0x2590: [(.5, 0, .5, 1)], 0x2594: [(0, 0, 1, 1 / 8)], 0x2595: [(7 / 8, 0, 1 / 8, 1)],
        0x2596: [_Q["ll"]], 0x2597: [_Q["lr"]], 0x2598: [_Q["ul"]], 0x259D: [_Q["ur"]],
        0x2599: [_Q["ul"], _Q["ll"], _Q["lr"]], 0x259A: [_Q["ul"], _Q["lr"]], 0x259B: [_Q["ul"], _Q["ur"], _Q["ll"]],
        0x259C: [_Q["ul"], _Q["ur"], _Q["lr"]], 0x259E: [_Q["ur"], _Q["ll"]], 0x259F: [_Q["ur"], _Q["ll"], _Q["lr"]],
    }.items()
}
# glyphs DejaVu Sans Mono lacks (cairo's toy font API has no fallback): the nearest glyph it has
SUBSTITUTES = {"\u2b58": "\u25cb"}  # ⭘ (the header's icon) -> ○
SHADES = {"\u2591": .25, "\u2592": .5, "\u2593": .75}
_DIRS = {"UP": ("up",), "DOWN": ("down",), "LEFT": ("left",), "RIGHT": ("right",),
         "HORIZONTAL": ("left", "right"), "VERTICAL": ("up", "down")}


def box_arms(ch: str) -> dict[str, str] | None:
    """Arms of a box-drawing character from its Unicode name: {"up": "light"|"heavy", ...}.

    Dashed lines draw solid and arcs as square corners; double lines keep their glyph (None).
    """
    import unicodedata

    name = unicodedata.name(ch, "")
    if not name.startswith("BOX DRAWINGS ") or "DOUBLE" in name.replace("DOUBLE DASH", "") or "DIAGONAL" in name:
        return None
    words = [w for w in name[len("BOX DRAWINGS "):].split() if w not in ("ARC", "DOUBLE", "TRIPLE", "QUADRUPLE", "DASH")]
    segments = " ".join(words).split(" AND ")
    overall = next((w for w in segments[0].split() if w in ("LIGHT", "HEAVY")), "LIGHT")
    arms: dict[str, str] = {}
    for seg in segments:
        toks = seg.split()
        weight = next((w for w in toks if w in ("LIGHT", "HEAVY")), overall)
        for t in toks:
            for d in _DIRS.get(t, ()):
                arms[d] = weight.lower()
    return arms or None


def _rect(cls: str, clip: str, x: float, y: float, w: float, h: float, opacity: float | None = None) -> str:
    op = f' fill-opacity="{opacity}"' if opacity is not None else ""
    return (f'<rect class="{cls}" x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}"{op} '
            f'shape-rendering="crispEdges" clip-path="url(#{clip})"/>')


def cell_shapes(ch: str, cls: str, clip: str, x: float, top: float, cw: float, lh: float) -> list[str] | None:
    """Rectangles drawing `ch` in its cell, or None when it is an ordinary glyph."""
    if ch in BLOCKS:
        return [_rect(cls, clip, x + left * cw, top + t * lh, w * cw, h * lh) for left, t, w, h in BLOCKS[ch]]
    if ch in SHADES:
        return [_rect(cls, clip, x, top, cw, lh, SHADES[ch])]
    arms = box_arms(ch) if 0x2500 <= ord(ch) <= 0x257F else None
    if arms is None:
        return None
    cx, cy = x + cw / 2, top + lh / 2
    out = []
    for d, weight in arms.items():
        t = max(1.0, cw * (0.24 if weight == "heavy" else 0.11))
        h = t / 2
        if d == "left":
            out.append(_rect(cls, clip, x, cy - h, cw / 2 + h, t))
        elif d == "right":
            out.append(_rect(cls, clip, cx - h, cy - h, x + cw - cx + h, t))
        elif d == "up":
            out.append(_rect(cls, clip, cx - h, top, t, lh / 2 + h))
        else:
            out.append(_rect(cls, clip, cx - h, cy - h, t, top + lh - cy + h))
    return out


def grid_svg(svg: str) -> str:
    """The SVG with every glyph pinned to its cell and cell graphics drawn as rectangles."""
    from rich.cells import cell_len

    rows = {m.group(1): (float(m.group(2)), float(m.group(3))) for m in _CLIP.finditer(svg)}
    lh_m = re.search(r"line-height:\s*([\d.]+)px", svg)
    line_h = float(lh_m.group(1)) if lh_m else None
    first = next((v for k, v in rows.items() if k.endswith("-line-0")), None)
    if first is not None and line_h:  # Textual gives the last line no clipPath: place rows by number
        for m in re.finditer(r'clip-path="url\(#([^)]+-line-(\d+))\)"', svg):
            rows.setdefault(m.group(1), (first[0] + int(m.group(2)) * line_h, first[1]))

    def one(m: re.Match) -> str:
        cls, x0, y, length, clip, raw = m.groups()
        chars = html.unescape(raw)
        cells = cell_len(chars)
        if not cells or clip not in rows:
            return m.group(0)
        cw = float(length) / cells
        top, h = rows[clip]
        lh = line_h or h
        out: list[str] = []
        run: list[tuple[float, str]] = []

        def flush() -> None:
            if run:
                xs = " ".join(f"{px:.2f}" for px, _ in run)
                text = html.escape("".join(c for _, c in run), quote=False)
                out.append(f'<text class="{cls}" x="{xs}" y="{y}" clip-path="url(#{clip})">{text}</text>')
                run.clear()

        x = float(x0)
        for ch in chars:
            w = cell_len(ch)
            shapes = cell_shapes(ch, cls, clip, x, top, cw, lh)
            if shapes is not None:
                flush()
                out.extend(shapes)
            elif ch.isspace():
                flush()
            else:
                run.append((x, SUBSTITUTES.get(ch, ch)))
            x += w * cw
        flush()
        return "".join(out)

    svg = _FONT_FACE.sub("", svg)
    svg = re.sub(r"font-family:\s*Fira Code,\s*monospace", f'font-family: "{PNG_FONT}", monospace', svg)
    return _TEXT.sub(one, svg)


def to_png(svgs: list[Path]) -> list[Path]:
    try:
        import cairosvg
    except ImportError:
        print("cairosvg not installed: pip install cairosvg (needs libcairo2); SVGs only", file=sys.stderr)
        return []
    pngs = []
    for svg in svgs:
        png = svg.with_suffix(".png")
        cairosvg.svg2png(bytestring=grid_svg(svg.read_text()).encode(), write_to=str(png), output_width=1800)
        pngs.append(png)
    return pngs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder to write to (default: screenshots/; --smoke: a temp folder)")
    ap.add_argument("--no-png", action="store_true")
    ap.add_argument("--size", action="append", help="WIDTHxHEIGHT (repeatable; default: 120x40 80x24 160x48)")
    ap.add_argument("--only", choices=["board", "campaigns", "duplex", "report"], help="only the leaderboard and compare "
                    "screens, only the campaign screens, only the duplex figures (a duplex_bench run recorded now), "
                    "or only report.png")
    ap.add_argument("--smoke", action="store_true", help=f"every screen once, quickly: 120x40 only, runs recorded at "
                    f"{SMOKE_SPEED:g}x, SVG only, into a temp folder removed after (unless --out)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-shots-") as tmp:  # the throw-away databases, removed at the end
        _RUN["scratch"] = tmp
        if not args.smoke:
            return shoot_all(args, Path(args.out) if args.out else ROOT / "screenshots")
        _RUN["speed"] = SMOKE_SPEED
        args.no_png, args.size = True, args.size or [f"{MAIN[0]}x{MAIN[1]}"]
        return shoot_all(args, Path(args.out) if args.out else Path(tmp) / "shots")


def shoot_all(args: argparse.Namespace, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.size] if args.size else SIZES
    svgs = [] if args.only else [p for size in sizes for p in asyncio.run(shoot(out, size))]
    if args.only in (None, "board"):
        db, ids = real_runs()  # recorded before any screen's loop: a run has its own
        svgs += [p for size in sizes for p in asyncio.run(shoot_board(out, size, db, ids))]
    if args.only in (None, "campaigns"):
        svgs += [p for size in sizes for p in asyncio.run(shoot_campaigns(out, size))]
        variants = variant_campaign()  # recorded before any screen's loop: a campaign runs its own
        svgs += [p for size in sizes for p in asyncio.run(shoot_variants(out, size, variants))]
    if args.only in (None, "duplex"):
        svgs += [p for size in sizes for p in asyncio.run(shoot_duplex(out, size))]
    pngs = [] if args.no_png else to_png(svgs)
    if args.only in (None, "report") and not args.no_png:
        pngs += shoot_report(out)
    for p in svgs + pngs:
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
    print(f"{len(svgs)} SVG, {len(pngs)} PNG" + (" (--smoke: SVG only, in a temp folder)" if args.smoke else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
