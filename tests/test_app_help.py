"""`?` lists every screen's keys from the screens themselves: each registers where it is defined."""

from __future__ import annotations


def test_help_lists_every_screen_registered_where_it_is_defined() -> None:
    """A screen names itself for `?` in its own class (`HELP_WHERE`): the help lists it without an
    entry of its own, each screen once, a subclass with only the keys its base lacks."""
    from rich.console import Console
    from textual.binding import Binding

    from arena_tui.screens.base import SCREENS, ArenaScreen
    from arena_tui.screens.help import bindings_table, registered_screens

    def shown() -> str:
        console = Console(width=200, record=True)
        console.print(bindings_table([]))
        return console.export_text()

    wheres = [s.HELP_WHERE for s in registered_screens()]
    assert wheres[:4] == ["runs list", "run (live)", "replay", "turn detail"]
    assert {"leaderboard", "consistency", "compare", "campaigns", "campaign"} <= set(wheres)
    assert len(wheres) == len(set(wheres))

    class Probe(ArenaScreen):
        HELP_WHERE, HELP_ORDER = "probe screen", 99
        BINDINGS = [Binding("z", "zap", "Zap the probe")]

    try:
        text = shown()
        assert "probe screen" in text and "Zap the probe" in text
        replay = next(s for s in registered_screens() if s.HELP_WHERE == "replay")
        assert "Play" not in {b.description for b in replay.help_keys()}  # the run screen's key, listed there
        for where in ("runs list", "campaigns", "campaign"):  # a key its unregistered base binds is its own
            keys = next(s for s in registered_screens() if s.HELP_WHERE == where).help_keys()
            assert [b.description for b in keys].count("Reload") == 1, where
        assert "Back" in {b.description for b in next(s for s in registered_screens() if s.HELP_WHERE == "campaign").help_keys()}
    finally:
        SCREENS.remove(Probe)
