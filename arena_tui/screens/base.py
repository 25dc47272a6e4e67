"""The bases of the app's screens and dialogs: the app as `Arena`, typed, a screen's palette, and
the register `?` reads.

`self.arena` is the running app seen through `arena_tui.surface.Arena` (screens never import the
app itself: it sits above them); `self.app` stays Textual's for what every app has. A screen
that names itself for the help (`HELP_WHERE`) is registered where it is defined (`SCREENS`):
the help screen lists every registered screen's keys from its own BINDINGS, nothing kept by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, TypeVar, cast

from textual.app import SystemCommand
from textual.binding import Binding
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, Screen

from ..surface import Arena

R = TypeVar("R")


def arena_of(node: MessagePump) -> Arena:
    """The running app as `Arena` (`ArenaApp` satisfies it: tests/test_app_surface.py)."""
    return cast(Arena, node.app)


#: escape goes back to the screen underneath (every pushed screen that has nothing to close first)
BACK = Binding("escape", "app.pop_screen", "Back")

#: every screen that names itself for the help, as its class is defined (`ArenaScreen.HELP_WHERE`)
SCREENS: list[type[ArenaScreen]] = []


class ArenaScreen(Screen):
    """A screen of the app. `HELP_WHERE` (what `?` calls it) registers it for the help, which lists
    its BINDINGS (a subclass: only the keys its registered base lacks) and `HELP_EXTRA` (keys it
    answers without a binding: the mouse, a table's own), in `HELP_ORDER`."""

    HELP_WHERE: ClassVar[str | None] = None
    HELP_ORDER: ClassVar[int] = 100
    HELP_EXTRA: ClassVar[list[Binding]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("HELP_WHERE"):
            SCREENS.append(cls)

    @classmethod
    def help_keys(cls) -> list[Binding]:
        """Its keys as the help lists them: its own, then its unregistered bases' (Textual binds them
        all: `PollingScreen`'s reload); what a registered base already lists is not repeated."""
        base = next((b for b in cls.__mro__[1:] if b in SCREENS), None)
        inherited = list(getattr(base, "BINDINGS", [])) if base is not None else []
        lineage = cls.__mro__[: cls.__mro__.index(base)] if base is not None else cls.__mro__
        declared = [b for k in lineage if issubclass(k, ArenaScreen) for b in k.__dict__.get("BINDINGS", [])]
        own = [b if isinstance(b, Binding) else Binding(*b) for b in dict.fromkeys(declared) if b not in inherited]
        return own + [b for b in cls.HELP_EXTRA if b not in getattr(base, "HELP_EXTRA", [])]

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
