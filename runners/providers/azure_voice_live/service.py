"""`ArenaVoiceLiveService`: Pipecat's `AzureVoiceLiveLLMService` with what a benchmark run needs of it
(the runner is `runner.py`): the family's history replay, quiet setup without a kickoff, reply
statuses, liveness and readiness (`realtime_family.RealtimeReplay`), and:
- the history in Voice Live's beta item shapes (an assistant's text is `text`);
- the items we create are ours: Voice Live echoes every item as `conversation.item.created`,
  and Pipecat's Voice Live service (unlike its OpenAI and Inworld ones, which skip the items
  they added) takes an assistant item's echo for the start of a reply and tracks a function
  call's as a call awaiting its arguments. A replayed assistant turn then opened a "response"
  that the user's speech closed empty, and a retry in a fresh session ended as an empty reply
  before the real one came;
- its usage keeps the audio share: Voice Live's `response.done` splits input and output into text
  and audio tokens (and cached input) as OpenAI Realtime's does, and audio is billed at many times
  the text rate; Pipecat reports the totals alone;
- Pipecat writes every endpoint as `wss://` (`_build_base_url`); a loopback `ws://` endpoint (the
  local fake's) is kept as given, every other is Pipecat's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from urllib.parse import urlsplit

from pipecat.metrics.metrics import LLMTokenUsage
from pipecat.services.azure.voice_live import events as vl
from pipecat.services.azure.voice_live.llm import AzureVoiceLiveLLMService, AzureVoiceLiveLLMSettings

from ...base import HistoryItem, ResponseStatus, is_local
from ..openai_realtime.runner import history_items
from ..realtime_family import ConversationItem, RealtimeReplay


def voice_live_items(history: list[HistoryItem]) -> list[vl.ConversationItem]:
    """The OpenAI runner's replay items in Voice Live's shapes (the beta's `text` for an assistant's words)."""
    out = []
    for item in history_items(history):
        data = item.model_dump(exclude_none=True, exclude={"id", "object"})
        for part in data.get("content") or []:
            if part.get("type") == "output_text":
                part["type"] = "text"
        out.append(vl.ConversationItem(**data))
    return out


def usage_tokens(usage: vl.TokenUsage) -> LLMTokenUsage:
    """A `response.done` usage as Pipecat's token usage, its text, audio and cached shares kept."""
    given, made = usage.input_token_details or vl.TokenUsageDetails(), usage.output_token_details or vl.TokenUsageDetails()
    return LLMTokenUsage(prompt_tokens=usage.input_tokens or 0, completion_tokens=usage.output_tokens or 0,
                         total_tokens=usage.total_tokens or 0, cache_read_input_tokens=given.cached_tokens or 0,
                         input_audio_tokens=given.audio_tokens or 0, output_audio_tokens=made.audio_tokens or 0)


class ArenaVoiceLiveService(RealtimeReplay, AzureVoiceLiveLLMService):
    _settings: AzureVoiceLiveLLMSettings  # (Pipecat's annotation names its class alias, which a checker cannot read)
    item_event = vl.ConversationItemCreateEvent
    instruction_in_setup = True

    def __init__(self, *, endpoint: str, api_key: str, settings: AzureVoiceLiveLLMSettings,
                 replay: Sequence[ConversationItem] = (), respond: bool = True,
                 on_response_status: ResponseStatus | None = None) -> None:
        super().__init__(endpoint=endpoint, api_key=api_key, settings=settings, replay=replay, respond=respond,
                         on_response_status=on_response_status)
        self._created_items: set[str] = set()  # ids of items we sent whose echo is still to come

    @staticmethod
    def _build_base_url(endpoint: str) -> str:
        parts = urlsplit(endpoint)
        if parts.scheme == "ws" and is_local(endpoint):
            return endpoint.rstrip("/") if parts.path.endswith("/voice-live/realtime") else endpoint.rstrip("/") + "/voice-live/realtime"
        return AzureVoiceLiveLLMService._build_base_url(endpoint)

    def _replying(self) -> bool:
        return self._response_in_flight

    def _response_outcome(self, evt: object) -> tuple[str | None, object]:
        assert isinstance(evt, vl.ResponseDone)
        return evt.status, evt.response.get("status_details")

    async def _create_item(self, item: ConversationItem, *, fresh: bool) -> None:
        """One item of ours into the conversation, always under an id of its own, so its echo is
        known (Pipecat's Voice Live service keeps no mark of the items it added)."""
        item_id = uuid.uuid4().hex
        self._created_items.add(item_id)
        await self.send_client_event(vl.ConversationItemCreateEvent(item=item.model_copy(update={"id": item_id})))

    async def _handle_evt_conversation_item_created(self, evt):
        """The echo of an item we created is history, not the model's doing: no reply opens for
        it and no call is tracked (the event handler still hears of it, as Pipecat's does)."""
        if evt.item.id in self._created_items:
            self._created_items.discard(evt.item.id)
            await self._call_event_handler("on_conversation_item_created", evt.item.id, evt.item)
            return
        await super()._handle_evt_conversation_item_created(evt)

    async def _handle_evt_response_done(self, evt):
        usage = evt.usage
        if usage and usage.total_tokens:  # reported here with its shares; Pipecat's own report (totals) left out
            await self.start_llm_usage_metrics(usage_tokens(usage))
            evt = evt.model_copy(update={"response": {k: v for k, v in evt.response.items() if k != "usage"}})
        await super()._handle_evt_response_done(evt)
