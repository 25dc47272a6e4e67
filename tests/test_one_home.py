"""Rules the duplicates tool cannot see, each in one home: the dimensions' list (`verdicts.DIMENSION_TABLE`),
run time → wall time in SQL (`spine.times.wall_ms`, the store connection's own function), how long a
turn's WAV may be (`benchmarks.audio_checks.too_long`), the fake timings' names (`spine.settings.FAKE_TIMINGS`).
(The heap's settling: tests/test_structure.py; the judge kinds: tests/test_judge_kinds.py; whose voices the
dialog offers: the benchmark's, tests/test_app_new_run.py.)"""

from __future__ import annotations

import ast
import asyncio
import datetime as dt
from pathlib import Path

from arena_tui.spine.events import RunEnded, RunStarted
from arena_tui.spine.settings import FAKE_TIMINGS, RunSettings
from arena_tui.store import Store
from arena_tui.verdicts import DIMENSIONS
from benchmarks.audio_checks import too_long
from runners.fakes.timing import ENVELOPE, INSTANT, pick

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena_tui", "runners", "benchmarks")


def _sources(*packages: str) -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(ROOT).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
            for pkg in packages for p in sorted((ROOT / pkg).rglob("*.py"))]


def test_no_module_lists_the_dimensions_but_the_table() -> None:
    """A list of dimension names is the table's; the benchmark data's default (every turn's three, which
    the table asserts it starts with) is the one other (a rule naming the dimensions it is about is no list)."""
    found = {}
    for rel, tree in _sources(*PACKAGES):
        if rel in ("arena_tui/verdicts/dimensions.py", "arena_tui/spine/benchmark.py"):
            continue
        unpacked = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and id(node) not in unpacked:
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            else:
                continue
            names = [e.value for e in items if isinstance(e, ast.Constant) and e.value in DIMENSIONS]
            if len(names) >= 3:
                found.setdefault(rel, []).append((node.lineno, names))
    assert found == {}


def test_wall_time_is_worked_out_by_the_spines_rule_in_sql_too(tmp_path: Path) -> None:
    """Outside the migrations (history, run once), the store's SQL says wall time as `wall_ms(t, speed)`."""
    by_hand = [(rel, n.lineno) for rel, tree in _sources("arena_tui") if rel.startswith("arena_tui/store/")
               and rel != "arena_tui/store/schema.py" for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str) and "seconds'" in n.value
               and "wall_ms(" not in n.value]
    assert by_hand == []

    async def ended_at() -> dt.datetime | None:
        async with await Store.open(tmp_path / "a.db") as store:
            t0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
            store.submit(RunStarted(run_id="r", t_ms=0.0, benchmark="b", model="sim", provider="sim", turn_indices=[0],
                                    config=RunSettings(speed=4.0).public(), speed=4.0, wall_time=t0))
            store.submit(RunEnded(run_id="r", t_ms=8000.0, status="completed"))  # (no wall time of its own)
            await store.flush()
            run = await store.get_run("r")
            return run.ended_at if run is not None else None

    assert asyncio.run(ended_at()) == dt.datetime(2026, 3, 1, 9, 0, 2, tzinfo=dt.UTC)  # 8 s of audio at 4x


def test_how_long_a_turns_wav_may_be_is_said_in_one_place() -> None:
    said = {rel for rel, tree in _sources("benchmarks") for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and "long, more than the" in n.value}
    assert said == {"benchmarks/audio_checks.py"}
    assert too_long(299.0, 300.0) is None
    assert too_long(301.0, 300.0) == "05:01 long, more than the 05:00 one turn may take (ARENA_TUI_MAX_TURN_AUDIO_S)"


def test_the_fake_timings_are_named_once() -> None:
    assert FAKE_TIMINGS == ("real", "instant")
    assert [pick(name, ENVELOPE) for name in FAKE_TIMINGS] == [ENVELOPE, INSTANT]
    quoted = [rel for rel, tree in _sources("runners", "arena_tui") if rel != "arena_tui/spine/settings.py" for n in ast.walk(tree)
              if isinstance(n, (ast.Tuple, ast.List)) and [getattr(e, "value", None) for e in n.elts] == ["real", "instant"]]
    assert quoted == []
