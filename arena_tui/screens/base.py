"""The bases of the app's screens and dialogs: the app as `Arena`, typed, and a screen's palette.

`self.arena` is the running app seen through `arena_tui.surface.Arena` (screens never import the
app itself: it sits above them); `self.app` stays Textual's for what every app has.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar, cast

from textual.app import SystemCommand
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, Screen

from ..surface import Arena

R = TypeVar("R")


def arena_of(node: MessagePump) -> Arena:
    """The running app as `Arena` (`ArenaApp` satisfies it: tests/test_app_surface.py)."""
    return cast(Arena, node.app)


class ArenaScreen(Screen):
    """A screen of the app."""

    @property
    def arena(self) -> Arena:
        return arena_of(self)

    def palette_commands(self) -> Iterable[SystemCommand]:
        """What the command palette offers besides the app's own while this screen is on top."""
        return ()


class ArenaDialog(ModalScreen[R]):
    """A modal dialog of the app, dismissed with an `R`."""

    @property
    def arena(self) -> Arena:
        return arena_of(self)
