"""The Textual app: owns the event bus, the store and the run workers; screens render state.

Runs execute as async workers of the app (several at once). One bus subscription folds
every event into a per-run `RunState`; a `REFRESH_HZ` (30 Hz) timer drains it (coalescing,
never a repaint per event) and tells the active screen what changed. The app never imports the
runners or Pipecat: runs start through the `launcher` the CLI gives it (`arena_tui.launcher`).
The store and the judge are imported lazily so the UI starts (and degrades with a message)
without them.

One module per job, each a collaborator the app holds (never a base class of it), with what it
calls back declared as a Protocol in its own module: `arena.py` (the app: its life from mount to
shutdown, the coalescing pump, a run's and a campaign's end said), `store_life.py` (`StoreLife`:
the database opened, recording, a refused write, closed), `runs.py` (`RunSupervisor`: runs
started, stopped, settled), `judging.py` (`JudgeSupervisor`: a run's judge, the judge a re-judge
gets), `navigation.py` (`Navigator`: screens opened, the palette, screenshots).
"""

from .arena import QUIT_DIALOG, REFRESH_HZ, ArenaApp, quit_question

__all__ = ["QUIT_DIALOG", "REFRESH_HZ", "ArenaApp", "quit_question"]
