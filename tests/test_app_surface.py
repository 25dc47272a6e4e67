"""The app's surface: screens see the app as `arena_tui.surface.Arena`, which `ArenaApp` satisfies,
and reach what is the app's own only through it (`self.arena`), never by untyped attribute."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.screens.runs import RunsScreen
from arena_tui.surface import Arena

SCREENS = Path(__file__).resolve().parents[1] / "arena_tui" / "screens"


def _members(protocol: type) -> list[str]:
    return sorted(n for n in vars(protocol) if not n.startswith("_"))


async def test_the_app_is_what_its_screens_take_it_for(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app, Arena)
        assert isinstance(app.screen, RunsScreen) and app.screen.arena is app
        assert app.screen.arena.store is not None and app.screen.arena.store_error is None
    for name in _members(Arena):
        declared = getattr(Arena, name)
        if isinstance(declared, property):
            assert hasattr(app, name), name
            continue
        want = list(inspect.signature(declared).parameters)
        got = list(inspect.signature(getattr(ArenaApp, name)).parameters)
        assert got == want, f"ArenaApp.{name}{got} is not Arena.{name}{want}"


def _app_reaches(source: str, members: set[str]) -> list[int]:
    """Lines that use an `Arena` member through Textual's `.app` (`self.app.store`), which a type
    checker cannot follow: they belong on `.arena`."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Attribute) and node.attr in members
                   and isinstance(node.value, ast.Attribute) and node.value.attr == "app"})


def test_screens_reach_the_app_through_its_typed_surface() -> None:
    members = set(_members(Arena))
    found = [f"{path.relative_to(SCREENS)}:{line}" for path in sorted(SCREENS.rglob("*.py"))
             for line in _app_reaches(path.read_text(encoding="utf-8"), members)]
    assert found == []
    ignored = [f"{path.relative_to(SCREENS)}" for path in sorted(SCREENS.rglob("*.py"))
               if "type: ignore[attr-defined]" in path.read_text(encoding="utf-8")]
    assert ignored == []


def test_the_surface_check_sees_an_untyped_reach() -> None:
    source = "def f(self, screen):\n    self.app.store.flush()\n    screen.app.push_screen(x)\n    self.arena.store\n"
    assert _app_reaches(source, {"store"}) == [2]
