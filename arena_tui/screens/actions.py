"""Actions shared by the run and turn-detail screens: play, stop, re-judge, a person's verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena_tui.spine.events import Judgement
from arena_tui.spine.recorded import RecordedRun
from ..messages import TurnRejudged
from ..run_view import RunState
from ..verdicts import APART, apart_reason, named
from .base import ArenaScreen
from .dialogs.play import PlayDialog

if TYPE_CHECKING:
    from ..store import Store


def play_turn(screen: ArenaScreen, state: RunState, turn: int | None) -> None:
    if turn is None:
        screen.notify("select a turn first", severity="warning")
        return
    if screen.arena.store is None:
        screen.notify(f"no stored audio: {screen.arena.store_error}", severity="error")
        return
    screen.app.push_screen(PlayDialog(state, turn))


def stop_audio(screen: ArenaScreen) -> None:
    stopped = screen.arena.player.stop()
    screen.notify("playback stopped" if stopped else "nothing is playing")


async def new_judgements(store: Store, state: RunState, turn: int | None = None) -> list[Judgement]:
    """The stored judgements of the run (or of one turn) its state has not got, applied to it:
    revisions another process wrote (a `judge RUN` in a terminal) or this app's re-judge stored.
    A state folds a revision once however often it comes (`RunState`)."""
    have = [j for row in state.turns.values() for j in row.judgements]
    new = [j for j in await store.judgements(state.run_id, turn) if j.turn_index is not None and j not in have]
    for j in new:
        state.apply(j)
    return new


def reread_judgements(screen: ArenaScreen, state: RunState, turn: int | None = None) -> None:
    """When a run's screen is shown: read back the judgements stored since its state was built
    (another process may have judged it), in a worker; every screen hears of new ones
    (`TurnRejudged`) and redraws. A run this app is still recording needs none: its bus has them."""
    store = screen.arena.store
    if store is None or screen.arena.running(state.run_id):
        return

    async def go() -> None:
        new = await new_judgements(store, state, turn)
        if new:
            for other in screen.app.screen_stack:  # each on its own loop: dropped by a screen closed meanwhile
                other.post_message(TurnRejudged(state.run_id, turn, new))

    screen.app.run_worker(go(), group=f"reread-{state.run_id}", exclusive=True, exit_on_error=False)


def rejudge(screen: ArenaScreen, state: RunState, turn: int | None) -> None:
    """Judge one turn again in a worker; the new revision is published on the app's bus, and every
    screen hears of it (`TurnRejudged`)."""
    arena = screen.arena
    if turn is None:
        screen.notify("select a turn first", severity="warning")
        return
    try:
        from ..judge import rejudge_turn  # deferred: the UI starts, and says why, even when the judge cannot load
    except ImportError:
        screen.notify("judge unavailable: re-judging is not possible in this build", severity="warning")
        return
    store = arena.store
    if store is None:
        screen.notify(f"cannot re-judge: {arena.store_error}", severity="error")
        return
    row = state.turns.get(turn)
    if row is None or row.result is None:
        screen.notify(f"turn {turn} has not ended yet; nothing to judge", severity="warning")
        return
    if (why := apart_reason(row.status)) is not None:  # not the model's doing: never judged (`verdicts.counts`)
        screen.notify(f"turn {turn} is {APART[why]}: no verdict on the model, never judged", severity="warning")
        return

    async def go() -> None:
        try:
            backend, label = arena.judge_for(state)
            screen.notify(f"re-judging turn {turn} with {label}…", timeout=6)
            await store.flush()  # the turn's result must be readable by the judge
            try:
                await rejudge_turn(store, state.run_id, turn, backend, bus=arena.bus)
            finally:
                if state.run_id not in arena.judges:  # made for this re-judge: release its client
                    await backend.aclose()
        except Exception as e:
            screen.notify(f"re-judge failed: {e}", severity="error", timeout=10)
            return
        await announce(screen, store, state, turn)
        screen.notify(f"turn {turn} re-judged")

    screen.app.run_worker(go(), group="rejudge", exit_on_error=False)


async def announce(screen: ArenaScreen, store: Store, state: RunState, turn: int) -> None:
    """A turn got new revisions on the app's bus: read back what the store holds of it (a stored
    run's state folds no bus events; another process may have written some meanwhile) and tell
    every screen (`TurnRejudged`)."""
    await store.flush()
    new = await new_judgements(store, state, turn)
    screen.arena.pump()
    for other in screen.app.screen_stack:  # each on its own loop: dropped by a screen closed meanwhile
        other.post_message(TurnRejudged(state.run_id, turn, new))


class TurnKeys(ArenaScreen):
    """The keys of a screen showing a run's turns, each acting on the turn it points at
    (`acted_turn`): play its audio, stop the audio, judge it again."""

    state: RunState

    @property
    def acted_turn(self) -> int | None:
        raise NotImplementedError

    def action_play(self) -> None:
        play_turn(self, self.state, self.acted_turn)

    def action_stop_audio(self) -> None:
        stop_audio(self)

    def action_rejudge(self) -> None:
        rejudge(self, self.state, self.acted_turn)


def review(screen: ArenaScreen, state: RunState, turn: int | None) -> None:
    """A person's verdict on the turn, or its withdrawal (`dialogs.review`), recorded by
    `judge.human` as `arena-tui review` records it, published on the app's bus."""
    if turn is None:
        screen.notify("select a turn first", severity="warning")
        return
    store = screen.arena.store
    if store is None:
        screen.notify(f"cannot record a verdict: {screen.arena.store_error}", severity="error")
        return
    row = state.turns.get(turn)
    if turn < 0 or row is None or row.result is None:
        screen.notify("the greeting is no benchmark turn" if turn < 0 else f"turn {turn} has not ended yet",
                      severity="warning")
        return
    if (why := apart_reason(row.status)) is not None:  # no verdict on the model, from anyone (`verdicts.counts`)
        screen.notify(f"turn {turn} is {APART[why]}: no verdict on the model, from the judge or a person",
                      severity="warning")
        return
    try:
        from ..judge.human import default_reviewer, record_verdict, reviewable, withdraw  # deferred: the UI starts, and says why, even when the judge cannot load
    except ImportError as e:
        screen.notify(f"a person's verdict cannot be recorded in this build ({e})", severity="warning")
        return
    from .dialogs.review import Review, ReviewDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

    st = row.standing
    recorded = state.started.recorded if state.started is not None else RecordedRun.of({})
    dims = reviewable(recorded, row.spec.dimensions if row.spec is not None else None, row.judgements)
    judge = st.machine.scores if st is not None and st.machine is not None else {}
    mine = {d: row.scores[d].verdict for d in row.human}
    causes = tuple(st.judgement.causes) if st is not None and st.judgement is not None and st.reviews else ()
    dialog = ReviewDialog(turn, dims, {d: s.verdict for d, s in judge.items()}, mine, default_reviewer(),
                          bool(st and st.reviews), causes)

    async def record(asked: Review | None) -> None:
        if asked is None:
            return
        try:
            await store.flush()  # the turn's row must be readable (a live run's last turn)
            if asked.withdraw:
                await withdraw(store, state.run_id, turn, asked.reason, asked.by, bus=screen.arena.bus)
            else:
                await record_verdict(store, state.run_id, turn, asked.verdicts, asked.reason, asked.by,
                                     causes=asked.causes, benchmark=state.benchmark_data, bus=screen.arena.bus)
        except Exception as e:  # a refusal (`ReviewError`: one line naming the turn or field), or the store's
            screen.notify(f"verdict not recorded: {e}", severity="error", timeout=10)
            return
        await announce(screen, store, state, turn)
        said = "withdrawn: the judge's count again" if asked.withdraw else \
            ", ".join(f"{named(d).words} {v}" for d, v in asked.verdicts.items())
        screen.notify(f"turn {turn}: {said} ({asked.by})")

    def answered(asked: Review | None) -> None:  # recorded in a worker: the dialog closes at once
        screen.app.run_worker(record(asked), group="review", exit_on_error=False)

    screen.app.push_screen(dialog, answered)

