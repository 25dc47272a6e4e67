"""Actions shared by the run and turn-detail screens: play, stop, re-judge."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual.screen import Screen

from ..playback import Which, clip_frames, resample_frames, slice_frames, stereo
from ..widgets.run_state import RunState


class NoAudio(Exception):
    """Nothing stored for this turn/track (the message says which)."""


async def turn_audio(store: Any, state: RunState, turn: int, which: Which) -> tuple[np.ndarray, int]:
    """The stored audio of one turn as int16 frames x channels: user, bot, or both (L user, R bot)."""
    label = "greeting" if turn == -1 else f"turn {turn}"
    if which in ("user", "bot"):
        clip = await store.audio(state.run_id, turn, which)
        if clip is None or not clip.pcm:
            raise NoAudio(f"no {which} audio stored for {label}")
        return clip_frames(clip), clip.sample_rate
    row = state.turns.get(turn)
    conv = await store.conversation_audio(state.run_id)
    if conv is not None and conv.pcm and row is not None and row.started_ms is not None:
        frames = clip_frames(conv)
        end = row.ended_ms if row.ended_ms is not None else state.last_ms
        part = slice_frames(frames, conv.sample_rate, row.started_ms, end, getattr(conv, "start_ms", 0.0) or 0.0)
        if len(part):
            return (part if part.shape[1] == 2 else stereo(part[:, 0], None)), conv.sample_rate
    user = await store.audio(state.run_id, turn, "user")
    bot = await store.audio(state.run_id, turn, "bot")
    if (user is None or not user.pcm) and (bot is None or not bot.pcm):
        raise NoAudio(f"no audio stored for {label}")
    rate = (user or bot).sample_rate
    u = clip_frames(user) if user is not None and user.pcm else None
    b = resample_frames(clip_frames(bot), bot.sample_rate, rate) if bot is not None and bot.pcm else None
    offset = 0
    res = row.result if row else None
    if res is not None and res.user_audio and res.bot_speech:
        offset = int((res.bot_speech[0].start_ms - res.user_audio.start_ms) * rate / 1000)
    return stereo(None if u is None else u[:, 0], None if b is None else b[:, 0], offset), rate


def play_turn(screen: Screen, state: RunState, turn: int | None) -> None:
    from .dialogs import PlayDialog

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
        from ..judge import rejudge_turn
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
        if paint is not None:
            paint(force=True)
        screen.notify(f"turn {turn} re-judged")

    app.run_worker(go(), group="rejudge", exit_on_error=False)
