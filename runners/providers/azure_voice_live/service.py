"""`ArenaVoiceLiveService`: Pipecat's `AzureVoiceLiveLLMService` with what a benchmark run needs of it
(the runner is `runner.py`):
- history replay: an engine rotation opens a new session; the history goes in as one
  `conversation.item.create` per message, tool call and tool output (Voice Live's beta item
  shapes: an assistant's text is `text`), before anything else of the conversation;
- the items we create are ours: Voice Live echoes every item as `conversation.item.created`,
  and Pipecat's Voice Live service (unlike its OpenAI and Inworld ones, which skip the items
  they added) takes an assistant item's echo for the start of a reply and tracks a function
  call's as a call awaiting its arguments. A replayed assistant turn then opened a "response"
  that the user's speech closed empty, and a retry in a fresh session ended as an empty reply
  before the real one came;
- a session opened without a kickoff asks for no response: Pipecat's first context always sends
  `response.create`, and the model's answer to nothing would land in the next turn;
- its usage keeps the audio share: Voice Live's `response.done` splits input and output into text
  and audio tokens (and cached input) as OpenAI Realtime's does, and audio is billed at many times
  the text rate; Pipecat reports the totals alone;
- each reply's final status reaches the engine (`on_response_status`), liveness and readiness are
  read from the service itself (`connection_alive`, `conversation_ready`);
- Pipecat writes every endpoint as `wss://` (`_build_base_url`); a loopback `ws://` endpoint (the
  local fake's) is kept as given, every other is Pipecat's.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from pipecat.metrics.metrics import LLMTokenUsage
from pipecat.utils.types import assert_given
from pipecat.services.azure.voice_live import events as vl
from pipecat.services.azure.voice_live.llm import AzureVoiceLiveLLMService, AzureVoiceLiveLLMSettings

from ...base import HistoryItem, ResponseStatus, is_local
from ..fair_receive import fair
from ..openai_realtime.runner import history_items


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


class ArenaVoiceLiveService(AzureVoiceLiveLLMService):
    _settings: AzureVoiceLiveLLMSettings  # (Pipecat's annotation names its class alias, which a checker cannot read)

    def __init__(self, *, replay: list[vl.ConversationItem] | None = None, respond: bool = True,
                 on_response_status: ResponseStatus | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._replay = list(replay or [])
        self._respond_on_setup = respond
        self.replayed_items = 0
        self._created_items: set[str] = set()  # ids of items we sent whose echo is still to come
        self.on_response_status = on_response_status  # the engine's, from the session's spec
        self.connecting = True  # until the first connect attempt ends (a session still connecting is not a dead one)

    @staticmethod
    def _build_base_url(endpoint: str) -> str:
        parts = urlsplit(endpoint)
        if parts.scheme == "ws" and is_local(endpoint):
            return endpoint.rstrip("/") if parts.path.endswith("/voice-live/realtime") else endpoint.rstrip("/") + "/voice-live/realtime"
        return AzureVoiceLiveLLMService._build_base_url(endpoint)

    async def _connect(self):
        try:
            await super()._connect()
            # (wrapped before the receive loop, started just now, first reads it)
            self._websocket = fair(self._websocket)  # a burst: a share of each loop step across sessions (`fair_receive`)
        finally:
            self.connecting = False

    async def _create_response(self):
        setting_up = self._api_session_ready and not self._response_in_flight and self._llm_needs_conversation_setup
        if setting_up and self._replay:
            items, self._replay = self._replay, []
            for item in items:  # a fresh id per send (a reset re-sends them)
                await self._create_item(item)
            self.replayed_items = len(items)
        if setting_up and not self._respond_on_setup:
            await self._set_up_conversation()
            return
        await super()._create_response()

    async def _set_up_conversation(self) -> None:
        """Pipecat's conversation setup (the context as items, the session settings) without the
        `response.create` that follows it there: the server answers the user's turn."""
        assert self._context is not None
        self._log_llm_conversation_setup(self._context)
        params = await self.get_llm_adapter().get_llm_invocation_params(self._context, system_instruction=assert_given(self._settings.system_instruction))
        for item in params["messages"]:
            await self._create_item(item)
        await self._send_session_update()
        self._llm_needs_conversation_setup = False

    async def _create_item(self, item: vl.ConversationItem) -> None:
        """One item of ours into the conversation, under an id of its own, so its echo is known."""
        item = item.model_copy(update={"id": uuid.uuid4().hex})
        self._created_items.add(item.id)
        await self.send_client_event(vl.ConversationItemCreateEvent(item=item))

    async def _handle_evt_conversation_item_created(self, evt):
        """The echo of an item we created is history, not the model's doing: no reply opens for
        it and no call is tracked (the event handler still hears of it, as Pipecat's does)."""
        if evt.item.id in self._created_items:
            self._created_items.discard(evt.item.id)
            await self._call_event_handler("on_conversation_item_created", evt.item.id, evt.item)
            return
        await super()._handle_evt_conversation_item_created(evt)

    async def _handle_evt_response_done(self, evt):
        if self.on_response_status is not None:
            details = evt.response.get("status_details") or {}
            reason = details.get("reason") or (details.get("error") or {}).get("message") or ""
            self.on_response_status(evt.status or "", str(reason))
        usage = evt.usage
        if usage and usage.total_tokens:  # reported here with its shares; Pipecat's own report (totals) left out
            await self.start_llm_usage_metrics(usage_tokens(usage))
            evt = evt.model_copy(update={"response": {k: v for k, v in evt.response.items() if k != "usage"}})
        await super()._handle_evt_response_done(evt)

    def connection_alive(self) -> bool:
        """Pipecat does not report a closed socket to the pipeline: the receive loop ending is the sign."""
        if self.connecting:
            return True
        task = self._receive_task
        return self._websocket is not None and task is not None and not task.done()

    @property
    def conversation_ready(self) -> bool:
        """Configured (session.updated) and the conversation set up (replay and context sent)."""
        return bool(self._api_session_ready) and not self._llm_needs_conversation_setup
