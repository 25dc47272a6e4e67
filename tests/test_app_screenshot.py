"""The palette's Screenshot writes where exports go and says where (or why not)."""

from __future__ import annotations

from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.screens.runs import RunsScreen
from tests.pilot import until


def _notes(app: ArenaApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_palette_screenshot_goes_to_the_exports_folder(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "exports"
    monkeypatch.setenv("ARENA_TUI_EXPORTS", str(out))
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), 10)
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Screenshot")
        command.callback()  # what choosing it in the palette does
        await until(pilot, lambda: any("screenshot" in n for n in _notes(app)), 10)
        svgs = list(out.glob("*.svg"))
        assert len(svgs) == 1 and "<svg" in svgs[0].read_text()
        assert any(f"screenshot saved: {svgs[0]}" in n for n in _notes(app)), _notes(app)


async def test_screenshot_into_a_folder_it_cannot_make_says_why_in_one_line(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("ARENA_TUI_EXPORTS", str(blocker / "sub"))
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), 10)
        assert app.deliver_screenshot() is None
        await until(pilot, lambda: any("screenshot" in n for n in _notes(app)), 10)
        note = next(n for n in _notes(app) if "screenshot" in n)
        assert note.startswith("screenshot not saved: ") and "\n" not in note and str(blocker) in note
