"""`ArenaInworldService`: Pipecat's `InworldRealtimeLLMService` with what a benchmark run needs of it
(the runner is `runner.py`): the family's history replay, quiet setup without a kickoff, reply
statuses, liveness and readiness (`realtime_family.RealtimeReplay`), and:
- `--disable-vad`: Pipecat leaves a None `turn_detection` out of `session.update`, and Inworld would
  keep its semantic VAD on: the null is sent (as the xAI runner does).
"""

from __future__ import annotations

from pipecat.services.inworld.realtime import events as iw
from pipecat.services.inworld.realtime.llm import InworldRealtimeLLMService, InworldRealtimeLLMSettings

from ...base import HistoryItem
from ..openai_realtime.runner import history_items
from ..realtime_family import RealtimeReplay


def inworld_items(history: list[HistoryItem]) -> list[iw.ConversationItem]:
    """The OpenAI runner's replay items (the same GA shapes), as Inworld's event classes."""
    return [iw.ConversationItem(**item.model_dump(exclude_none=True, exclude={"id", "object"})) for item in history_items(history)]


class ArenaInworldService(RealtimeReplay, InworldRealtimeLLMService):
    _settings: InworldRealtimeLLMSettings  # (Pipecat's annotation names its class alias, which a checker cannot read)
    item_event = iw.ConversationItemCreateEvent
    instruction_in_setup = True

    def _response_outcome(self, evt: object) -> tuple[str | None, object]:
        assert isinstance(evt, iw.ResponseDone)
        return evt.response.status, evt.response.status_details

    async def _ws_send(self, realtime_message):
        # Pipecat sends events without their None fields: a session.update of a session without
        # server turn detection would leave `turn_detection` out, and Inworld keep its semantic VAD
        if realtime_message.get("type") == "session.update" and self._is_manual_turn_detection():
            audio = realtime_message.setdefault("session", {}).setdefault("audio", {})
            audio.setdefault("input", {})["turn_detection"] = None
        await super()._ws_send(realtime_message)
