"""Actions shared by the run and turn-detail screens: play, stop, re-judge."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from ..run_view import RunState
from .dialogs import PlayDialog


def play_turn(screen: Screen, state: RunState, turn: int | None) -> None:
    if turn is None:
        screen.notify("select a turn first", severity="warning")
        return
    if screen.app.store is None:  # type: ignore[attr-defined]
        screen.notify(f"no stored audio: {screen.app.store_error}", severity="error")  # type: ignore[attr-defined]
        return
    screen.app.push_screen(PlayDialog(state, turn))


def stop_audio(screen: Screen) -> None:
    stopped = screen.app.player.stop()  # type: ignore[attr-defined]
    screen.notify("playback stopped" if stopped else "nothing is playing")


def rejudge(screen: Screen, state: RunState, turn: int | None) -> None:
    """Judge one turn again in a worker; the new revision is published on the app's bus."""
    app: Any = screen.app
    if turn is None:
        screen.notify("select a turn first", severity="warning")
        return
    try:
        from ..judge import rejudge_turn  # deferred: the UI starts, and says why, even when the judge cannot load
    except ImportError:
        screen.notify("judge unavailable: re-judging is not possible in this build", severity="warning")
        return
    if app.store is None:
        screen.notify(f"cannot re-judge: {app.store_error}", severity="error")
        return
    row = state.turns.get(turn)
    if row is None or row.result is None:
        screen.notify(f"turn {turn} has not ended yet; nothing to judge", severity="warning")
        return

    async def go() -> None:
        try:
            backend, label = app.judge_for(state)
            screen.notify(f"re-judging turn {turn} with {label}…", timeout=6)
            await app.store.flush()  # the turn's result must be readable by the judge
            try:
                await rejudge_turn(app.store, state.run_id, turn, backend, bus=app.bus)
            finally:
                if state.run_id not in app.judges:  # made for this re-judge: release its client
                    await backend.aclose()
        except Exception as e:
            screen.notify(f"re-judge failed: {e}", severity="error", timeout=10)
            return
        if app.live.get(state.run_id) is not state:
            # a stored run: nothing folds bus events into this state, so read the new revisions back
            await app.store.flush()
            seen = {(j.revision, j.phase, j.rule, j.t_ms) for j in row.judgements}
            for j in await app.store.judgements(state.run_id, turn):
                if (j.revision, j.phase, j.rule, j.t_ms) not in seen:
                    state.apply(j)
                    for other in app.screen_stack:  # a replay rebuilds its state from its event list
                        if getattr(other, "run_id_replayed", None) == state.run_id:
                            other.events.append(j)
        app.pump()
        paint = getattr(screen, "paint", None)
        if paint is not None:  # on the screen's own loop: dropped if it was closed meanwhile
            screen.call_later(paint, force=True)
        screen.notify(f"turn {turn} re-judged")

    app.run_worker(go(), group="rejudge", exit_on_error=False)
