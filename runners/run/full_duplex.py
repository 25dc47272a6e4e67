"""The full-duplex turn loop: a model that listens while it speaks and answers when it chooses
(`gpt-live-1`; a provider whose catalog entry says `duplex`).

The audio loop (`audio.AudioRun`) already streams the user's audio without a break: each turn's
WAV on the paced input at its time, digital silence between them, and for a duplex model no
commit and no client turn brackets. What differs is what a turn is, and when it is over:

- The turn's window (`arena_tui.spine.duplex.FULL_DUPLEX_TURN`): its answer is what the model
  said and did from the turn's audio start until the next turn starts. The next turn waits for
  the answer, as the benchmark's pacing requires (a turn's words take the previous answer as
  said: "The window one, please" follows the tables offered): it starts once the model has gone
  quiet after its reply by the end-of-turn rule, or when nothing came within the watchdog window.
  Speech the model begins before the user has finished is the turn's too (an early start, measured).
- The model's output never stops: its service streams audio continuously, silence included, so
  only audible audio is the reply (`tracks.Tracks.bot_audio(stream=True)`); whether the reply is
  under way is whether the bot is speaking on our timeline, a call is being answered, or work it
  delegated is in flight (`ProviderRunner.delegating`), after which a reply is due.
- Its reply frames are Pipecat's transcript turns, which it closes after 0.8 s of WALL time: they
  are not read at all (at `--speed` 10 that is 8 s of audio: the previous reply's end would land
  in the next turn and read as a reply to it). A reply is what was heard, said and called.
- Not answering is its choice: a turn it let pass is recorded as such (no_response), never asked
  again; only a dead session is replaced and the turn played again, as in any run.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.source import FULL_DUPLEX

from .audio import AudioRun
from .turn_end import FullDuplexTurnEnd


class FullDuplexRun(AudioRun):
    """The audio loop for a full-duplex model (the module docstring): its own end-of-turn rule
    (`turn_end.FullDuplexTurnEnd`), its transcript turns unread, only its audible audio a reply."""

    TURN_END = FullDuplexTurnEnd
    TRANSCRIPT_TURNS = False

    def public_config(self) -> dict[str, Any]:
        """The run's config, saying it was played in this loop (its rows are labelled `full duplex`)."""
        return {**super().public_config(), FULL_DUPLEX: True}

    def on_bot_audio(self, pcm: bytes, t_ms: float) -> None:
        if self.tracks.bot_audio(self.heard(), pcm, t_ms, stream=True) and self.attempt is not None:
            self.attempt.replied()

    def retried(self, outcome: str) -> bool:
        """Only a turn lost with its session is played again; one the model let pass was its choice."""
        return outcome == "dead"
