"""The bases of the app's screens and dialogs: the app as `Arena`, typed, a screen's palette, and
the register `?` reads.

`self.arena` is the running app seen through `arena_tui.surface.Arena` (screens never import the
app itself: it sits above them); `self.app` stays Textual's for what every app has. A screen
that names itself for the help (`HELP_WHERE`) is registered where it is defined (`SCREENS`):
the help screen lists every registered screen's keys from its own BINDINGS, nothing kept by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, TypedDict, TypeVar, Unpack, cast

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, Screen

from ..surface import Arena

R = TypeVar("R")


def arena_of(node: MessagePump) -> Arena:
    """The running app as `Arena` (`ArenaApp` satisfies it: tests/test_app_surface.py)."""
    return cast(Arena, node.app)


#: escape goes back to the screen underneath, once nothing on this one is left to close first (an open
#: find or filter line: `Finding.action_back`), so escape never leaves a screen whose bar offers it
BACK = Binding("escape", "back", "Back")

class SubclassOptions(TypedDict, total=False):
    """What a Textual widget class may be declared with (`class S(ArenaScreen, inherit_css=False)`)."""

    can_focus: bool | None
    can_focus_children: bool | None
    inherit_css: bool
    inherit_bindings: bool


#: every screen that names itself for the help, as its class is defined (`ArenaScreen.HELP_WHERE`)
SCREENS: list[type[ArenaScreen]] = []


class ArenaScreen(Screen):
    """A screen of the app. `HELP_WHERE` (what `?` calls it) registers it for the help, which lists
    its BINDINGS (a subclass: only the keys its registered base lacks) and `HELP_EXTRA` (keys it
    answers without a binding: the mouse, a table's own), in `HELP_ORDER`."""

    HELP_WHERE: ClassVar[str | None] = None
    HELP_ORDER: ClassVar[int] = 100
    HELP_EXTRA: ClassVar[list[Binding]] = []
    #: keys (or clicks) this screen has had since it came up in place of another screen (`settled`);
    #: the app's first screen starts settled: nothing changed under the user's fingers
    _keys_here: int = 2
    _shown = False  # it has been the screen on top before
    _left = False  # another screen of the app replaced it on top (a dialog, the palette or the help do not)

    def __init_subclass__(cls, **kwargs: Unpack[SubclassOptions]) -> None:
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

    def action_back(self) -> None:
        """escape (`BACK`): to the screen underneath."""
        self.app.pop_screen()

    # --- a destructive key right after a change of screen does nothing ---------------------------
    # A key pressed as the screen changes under the user's fingers (an escape that left a screen
    # they meant to stay on, an enter that opened one) was meant for the screen before: `d` is
    # "only differences" in compare and "delete" in the runs list. So the first key on a screen
    # that just came up never destroys: `settled` says so and asks for the key again. No timer:
    # a key (or a click) on the screen is what settles it.

    def on_screen_suspend(self) -> None:
        self._left = not isinstance(self.app.screen, ModalScreen)  # (the screen on top by now)

    def on_screen_resume(self) -> None:
        # back from a screen it opened (or one closed over it), or shown first over another of the
        # app's: it just came up; back from its own dialog, the palette or the help: it was in use
        if self._left or (not self._shown and any(isinstance(s, ArenaScreen) for s in self.app.screen_stack
                                                  if s is not self)):
            self._keys_here = 0
        self._shown, self._left = True, False

    def on_key(self, event: events.Key) -> None:  # a screen that reads the key takes it too (`RunScreen`)
        self._keys_here += 1

    def on_click(self) -> None:
        self._keys_here = max(self._keys_here, 2)

    def settled(self, key: str, what: str) -> bool:
        """Whether the destructive `key` (`what` it does) may act: never as the first key on a
        screen that just came up (this key is counted already); then it says to press it again."""
        if self._keys_here > 1:
            return True
        self.notify(f"{what}: this screen just came up; press {key} again to do it", severity="warning", timeout=4,
                    markup=False)
        return False

    def palette_commands(self) -> Iterable[SystemCommand]:
        """What the command palette offers besides the app's own while this screen is on top."""
        return ()


class ArenaDialog(ModalScreen[R]):
    """A modal dialog of the app, dismissed with an `R`."""

    @property
    def arena(self) -> Arena:
        return arena_of(self)
