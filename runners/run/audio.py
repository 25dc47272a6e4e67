"""The audio turn loop: paced file input → the provider's Pipecat session → paced null output.

It runs a benchmark's turns in order on ONE monotonic timeline (AUDIO time, scaled by
`--speed`): each turn's WAV played into the session, its attempt waited out, retried when it got
no answer or its session died, and recorded.

`AudioRun` is the control; each other job is a collaborator it composes, which reads what it
needs of the run through a Protocol its own module declares: the provider's frames
(`provider_frames.ProviderFrames`: what each means for the attempt under way), when a turn is
over (`turn_end.TurnEnd`: the end-of-turn rule, the watchdog, the handshake), its sessions
(`audio_sessions.SessionKeeper`: opened, rotated, settled), its records
(`audio_records.TurnRecords`: a turn's result, audio and pace check), what it plays
(`clips.Clips`: each clip under the run's condition, where its speech is). `tracks.Tracks` follows
the audio as the transports play it (levels, speech, overlaps, recordings: our own clock, never
the provider's); `audio_attempt.Attempt` is the data they fill and the `TurnResult` it becomes.
The run life (events, tools, history, rotation bookkeeping) is `base.RunBase`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pipecat.frames.frames import Frame, UserStartedSpeakingFrame, UserStoppedSpeakingFrame

from arena_tui.spine.benchmark import Benchmark, Turn
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from arena_tui.spine.events import GREETING_TURN, Interval, Retry, TurnResult, TurnStarted, TurnStatus

from ..base import ProviderRunner
from ..timeline.overlaps import LiveOverlaps
from ..tools import ToolResolver
from ..transports import RunClock
from .audio_attempt import Attempt
from .audio_records import TurnRecords
from .audio_sessions import SessionKeeper
from .base import RunBase
from .clips import Clips
from .history import Seed
from .duplex import CuePlayer
from .provider_frames import ProviderFrames
from .session import Session
from .tracks import Heard, Tracks
from .turn_end import TurnEnd


class AudioRun(RunBase[Session, Attempt]):
    """The audio turn loop: each turn's WAV paced into the session, the reply played out on the same clock."""

    TURN_END: type[TurnEnd] = TurnEnd  # when a turn is over (`full_duplex` has its own rule)
    TRANSCRIPT_TURNS = True  # Pipecat's response brackets are part of a turn (`provider_frames`)

    def __init__(self, benchmark: Benchmark, config: RunSettings, bus: EventBus, run_id: str, provider: ProviderRunner,
                 on_session: Callable[[Session], None] | None = None, seed: Seed | None = None,
                 numbers: Iterator[int] | None = None) -> None:
        """As `RunBase`'s; what it plays is its `clips`, and the audio the transports play is followed by its `tracks`."""
        super().__init__(benchmark, config, bus, run_id, provider, on_session=on_session, seed=seed, numbers=numbers)
        self.rate = self.config.sample_rate
        self.clips = Clips(self.benchmark, self.config)
        self.tracks = Tracks(self.config, lambda cls, **kw: self.publish(self.ev(cls, **kw)), self.start_ms)
        self.frames = ProviderFrames(self, transcript_turns=self.TRANSCRIPT_TURNS)
        self.turn_end = self.TURN_END(self)
        self.keeper = SessionKeeper(self, self.turn_end)
        self.records = TurnRecords(self)

    def run_clock(self) -> RunClock:
        return RunClock(self.config.speed, self.start_ms, self.config.pace)

    # -- the run's life

    def check(self, turns: list[Turn]) -> None:
        for t in turns:  # unreadable audio is an error before anything starts
            # and where its speech is, worked out here (a thread) rather than on the loop at the
            # turn's start: up to tens of ms for a long clip, which every session's pacer would wait
            # (and the clip under the run's condition made here too: noise over a long clip takes a while)
            self.clips.user_speech(t)
            self.clips.user_audio(t)
            for i in range(len(t.duplex)):  # its duplex cues' too
                self.clips.cue_speech(t, i)
                self.clips.cue_audio(t, i)

    async def opening(self) -> None:
        g = self.config.greeting
        keeper = self.keeper
        if self.seed is not None:  # resumed / rehydrated: the history replayed, no greeting turn
            items, _ = self.replays.seeded()
            if not items and g.enabled:  # nothing to replay (turn 0): greeted as a fresh session is, unrecorded
                await keeper.open(g.prompt, detail=self.replays.seed_detail())
                await self.turn_end.handshake(None)
                return
            await keeper.open(keeper.continuation(items), items, detail=self.replays.seed_detail())
            await keeper.settle_opening()
            return
        if not g.enabled:  # no greeting: the session is asked nothing and the first turn starts it
            await keeper.open(None, detail="initial")
            await keeper.settle_opening()
            return
        await keeper.open(g.prompt, detail="initial")
        self.turn_index = GREETING_TURN
        self.publish(self.ev(TurnStarted, attempt=0, input_text=g.prompt))
        self.records.greeting(await self.turn_end.handshake(GREETING_TURN), g.prompt)

    # -- callbacks from the transports (called at PLAYED / scheduled time)

    def on_user_chunk(self, pcm: bytes, t_ms: float) -> None:
        self.tracks.user_chunk(self.heard(), pcm, t_ms)

    def on_bot_audio(self, pcm: bytes, t_ms: float) -> None:
        self.tracks.bot_audio(self.heard(), pcm, t_ms)
        if self.attempt is not None:
            self.attempt.replied()

    def on_truncated(self, t_ms: float, pending_ms: float) -> None:
        self.tracks.truncated(self.heard(), t_ms, pending_ms)

    def heard(self) -> Heard | None:
        return self.attempt.heard if self.attempt is not None else None

    # -- what the run life hands on to a collaborator

    def on_llm_frame(self, session: Session, frame: Frame) -> None:
        self.frames.on_llm_frame(session, frame)

    def tool_settled(self, a: Attempt) -> None:
        self.turn_end.tool_settled(a)

    def interrupted_turn(self, turn: Turn) -> None:
        self.records.interrupted(turn)

    def failed_turn(self, turn: Turn, error: str, status: TurnStatus = "error") -> TurnResult:
        return self.records.failed(turn, error, status)

    def flush_conversation(self, turn_index: int | None) -> None:
        self.records.flush_conversation(turn_index)

    # -- turns

    async def run_turn(self, turn: Turn) -> TurnResult:
        """Play the turn until it is answered, again (after `backoff_ms`, in a fresh session when
        the last one heard it) while it is not and retries are left (`retried`), then record it."""
        self.turn_index = turn.turn_index
        pcm = self.clips.user_audio(turn)
        retries = 0
        reconnects_before = self.replays.reconnects
        outcome = "no_response"
        a: Attempt | None = None
        reached = False  # an attempt got to the model (its answer, or its silence, is the model's)
        wd = self.config.watchdog
        for number in range(wd.max_retries + 1):
            await self.keeper.ensure()
            if number > 0:
                retries = number
                await self.clock.sleep(wd.backoff_ms)
                await self.keeper.ensure()
                s = self.session
                if s is not None and turn.turn_index in s.heard_turns:
                    # Never again into a session that heard the turn: a real server has usually
                    # transcribed it already, and the model would hear the question twice.
                    await self.keeper.rotate("retry")
                self.publish(self.ev(Retry, attempt=number, reason=outcome, session=self.session_number()))
            s = self.session
            a, outcome = await self.run_attempt(turn, number, pcm)
            if outcome == "dead" and s is not None and not a.has_content():
                a.infra = s.infra  # lost with its session to an infrastructure failure (None: to anything else)
            reached = reached or a.infra is None
            if outcome == "dead":
                # Never replay the turn into a dead session: rotate first, then retry.
                await self.keeper.ensure()
                outcome = "no_response" if not a.has_content() else "disconnect"
                continue
            if outcome == "ok":
                self.replays.failing = 0
                break
            if not self.retried(outcome):
                break
        assert a is not None
        return self.records.finish(turn, a, outcome, retries, self.replays.reconnects - reconnects_before,
                                   None if reached else a.infra)

    def retried(self, outcome: str) -> bool:
        """Whether a turn that ended `outcome` (not ok) is played again: every way, here (a paced
        model that did not answer is asked again, in a fresh session)."""
        return True

    async def run_attempt(self, turn: Turn, number: int, pcm: bytes) -> tuple[Attempt, str]:
        """Play the turn's audio once and wait for the end of the turn (`turn_end.TurnEnd.wait`);
        returns (attempt, outcome)."""
        s = self.session
        assert s is not None and s.input is not None
        a = Attempt(
            turn_index=turn.turn_index,
            number=number,
            started_ms=self.now(),
            resolver=ToolResolver(turn),
            heard=Heard(user_speech_rel=self.clips.user_speech(turn), live_overlaps=LiveOverlaps()),
        )
        self.attempt = a
        s.heard_turns.add(turn.turn_index)
        s.input.take_lateness()  # the turn's pace counts from here (a stall while a session opened is no part of it)
        dur_ms = len(pcm) / 2 / self.rate * 1000.0
        self.publish(self.ev(TurnStarted, attempt=number, input_text=turn.input, user_audio_ms=dur_ms))
        fut = s.input.play(pcm, self.turn_marks(a.heard.user_speech_rel, dur_ms))
        cues = CuePlayer(turn, self.clips, self.tracks, a.heard, s.input, self.turn_marks)  # the user's speech scripted into the reply
        try:
            return await self.turn_end.wait(a, s, turn, fut, cues)
        finally:
            cues.drop()

    def turn_marks(self, speech: list[Interval], dur_ms: float) -> list:
        """User-speaking brackets around the clip's speech, for runners that take client-side turns."""
        if not self.provider.client_turns(self.config):
            return []
        start = speech[0].start_ms if speech else 0.0
        stop = speech[-1].end_ms if speech else dur_ms
        return [(start, UserStartedSpeakingFrame), (stop, UserStoppedSpeakingFrame)]
