"""A fake's script: what it answers, in which order, and what it hears, keyed by reply or by user turn.

`script_for_benchmark` makes the golden script of a benchmark (every expected call, then the
golden text), which is what a `--fake` run plays.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from arena_tui.spine.benchmark import Benchmark, ExpectedCall

from runners.fakes.record import ConnectionRecord
from runners.fakes.timing import FakeClock, ReplyPlan, TimingProfile

# What a reply does once it has been spoken.
Then = Literal["disconnect", "go_away", "expire"]


class ToolCallSpec(BaseModel):
    """A function call the fake makes before speaking its reply."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None  # generated when None


class ScriptedReply(BaseModel):
    """One model response, in reply order (the greeting is reply 0 when the client asks for one)."""

    text: str = ""  # spoken (audio + output transcript); after the tool results when tool_calls are set
    #: made in order before speaking (each answered before the next, in the protocol's own way)
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    user_transcript: str | None = None  # what the fake says it heard for this turn
    audio: bool = True  # False: transcript/text only, no audio (GLM air's failure mode)
    then: Then | None = None  # force a session event after this reply has been spoken
    #: the kinds of the user's duplex cues during this reply, in order (`runners/fakes/duplex.py`)
    duplex: list[str] = Field(default_factory=list)
    close_code: int = 1011  # for then="disconnect"


class Script(BaseModel):
    """Replies keyed by reply number (`key="reply"`), or by user turn (`key="user_turn"`:
    reply k answers the k-th user utterance heard across connections, and a reply with no new
    user utterance — a greeting, a post-rotation kickoff — is `kickoff`); past the end, `default`.

    A reply whose timing (the fake's profile) says `no_output` stalls the first time: nothing
    is sent, and the next utterance heard (the client asking again) gets that same reply."""

    replies: list[ScriptedReply] = Field(default_factory=list)
    default: ScriptedReply = Field(default_factory=lambda: ScriptedReply(text="Okay."))
    key: Literal["reply", "user_turn"] = "reply"
    kickoff: ScriptedReply = Field(default_factory=lambda: ScriptedReply(text="Hello! How can I help you today?"))
    voice: Literal["auto", "tone", "espeak"] = "tone"
    silence_ms: int = 500  # server-VAD end of speech after this much silence
    speech_threshold_dbfs: float = -45.0
    chunk_ms: int = 100  # size of the audio chunks the fake sends back

    _answered: int = PrivateAttr(default=0)
    _repeat: int = PrivateAttr(default=0)  # stalled replies: later utterances map that many back
    _stalled: set[int] = PrivateAttr(default_factory=set)

    def reply(self, n: int) -> ScriptedReply:
        return self.replies[n] if 0 <= n < len(self.replies) else self.default

    def next(self, reply_count: int, heard: int) -> tuple[int, ScriptedReply]:
        """(reply number, reply) for the next response; -1 numbers a kickoff reply."""
        if self.key == "reply":
            return reply_count, self.reply(reply_count)
        if heard > self._answered:
            self._answered = heard
            n = heard - 1 - self._repeat
            return n, self.reply(n)
        return -1, self.kickoff

    def upcoming(self, reply_count: int, heard: int) -> int:
        """The reply number the next user utterance would get (for behaviour that starts while it
        is still being spoken)."""
        return reply_count if self.key == "reply" else heard - self._repeat

    def stalls(self, n: int, plan: ReplyPlan) -> bool:
        """Whether reply `n` gets no output this time (its plan says so and it has not stalled
        before); the next utterance heard is then answered with reply `n`."""
        if not plan.no_output or n in self._stalled or self.key != "user_turn":
            return False
        self._stalled.add(n)
        self._repeat += 1
        return True


def expected_call_spec(expected: ExpectedCall) -> ToolCallSpec:
    """The call a golden answer makes for one expected call (flexible arguments filled in)."""
    args = dict(expected.args)
    for name in expected.flexible_args:
        if not args.get(name):
            args[name] = "as discussed"
    return ToolCallSpec(name=expected.name, args=args)


def script_for_benchmark(benchmark: Benchmark, turns: list[int] | None = None, *,
                         voice: Literal["auto", "tone", "espeak"] = "tone") -> Script:
    """A user-turn-keyed script that answers each selected turn as the golden answer would:
    it "hears" the turn's text, makes EVERY expected call of the turn in order (list-shaped
    expectations too), then speaks the golden text (in `voice`, the `Script`'s)."""
    replies = [
        ScriptedReply(
            user_transcript=turn.input,
            tool_calls=[expected_call_spec(e) for e in turn.expected_calls],
            text=turn.golden_text,
            duplex=[cue.kind for cue in turn.duplex],
        )
        for turn in benchmark.turns
        if turns is None or turn.turn_index in turns
    ]
    return Script(replies=replies, key="user_turn", voice=voice)


class ScriptedReplies:
    """The shared scripting rule of a fake (reply order, or user turns heard across its
    connections), for a class with `script`, `timing`, `reply_count` and `connections`."""

    script: Script
    timing: TimingProfile
    clock: FakeClock  # the audio clock its replies are paced on
    reply_count: int
    connections: list[ConnectionRecord]

    def next_reply(self, rec: ConnectionRecord) -> tuple[int, ScriptedReply]:
        n, reply = self.script.next(self.reply_count, sum(c.user_turns for c in self.connections))
        self.reply_count += 1
        rec.replies.append(n)
        return n, reply

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result it received, once each and in order: `{call_id, name, result}`."""
        return [r for c in self.connections for r in c.tool_results]

    def kickoff_replies(self, after: int = 1) -> int:
        """Replies it made that no user turn asked for (a session's kickoff), on its connections
        after the first `after`."""
        return sum(1 for c in self.connections[after:] for n in c.replies if n == -1)

    def upcoming_plan(self) -> ReplyPlan:
        """The timing of the reply the next user utterance will get."""
        return self.timing.plan(self.script.upcoming(self.reply_count, sum(c.user_turns for c in self.connections)))
