"""`ArenaInworldService`: Pipecat's `InworldRealtimeLLMService` with what a benchmark run needs of it
(the runner is `runner.py`):
- history replay: an engine rotation opens a new session; the history goes in as one
  `conversation.item.create` per message, tool call and tool output, before anything else of the
  conversation (marked as ours, so their echoes open no response);
- `--disable-vad`: Pipecat leaves a None `turn_detection` out of `session.update`, and Inworld would
  keep its semantic VAD on: the null is sent (as the xAI runner does);
- a session opened without a kickoff asks for no response: Pipecat's first context always sends
  `response.create`, and the model's answer to nothing would land in the next turn. Pipecat drops
  user audio until the conversation is set up, so the setup runs as soon as the session is;
- each reply's final status reaches the engine (`on_response_status`), liveness and readiness are
  read from the service itself (`connection_alive`, `conversation_ready`).
"""

from __future__ import annotations

import uuid
from typing import Any

from pipecat.utils.types import assert_given
from pipecat.services.inworld.realtime import events as iw
from pipecat.services.inworld.realtime.llm import InworldRealtimeLLMService, InworldRealtimeLLMSettings

from ...base import HistoryItem, ResponseStatus
from ..fair_receive import fair
from ..openai_realtime.runner import history_items


def inworld_items(history: list[HistoryItem]) -> list[iw.ConversationItem]:
    """The OpenAI runner's replay items (the same GA shapes), as Inworld's event classes."""
    return [iw.ConversationItem(**item.model_dump(exclude_none=True, exclude={"id", "object"})) for item in history_items(history)]


class ArenaInworldService(InworldRealtimeLLMService):
    _settings: InworldRealtimeLLMSettings  # (Pipecat's annotation names its class alias, which a checker cannot read)

    def __init__(self, *, replay: list[iw.ConversationItem] | None = None, respond: bool = True,
                 on_response_status: ResponseStatus | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._replay = list(replay or [])
        self._respond_on_setup = respond
        self.replayed_items = 0
        self.on_response_status = on_response_status  # the engine's, from the session's spec
        self.connecting = True  # until the first connect attempt ends (a session still connecting is not a dead one)

    async def _connect(self):
        try:
            await super()._connect()
            # (wrapped before the receive loop, started just now, first reads it)
            self._websocket = fair(self._websocket)  # a burst: a share of each loop step across sessions (`fair_receive`)
        finally:
            self.connecting = False

    async def _ws_send(self, realtime_message):
        # Pipecat sends events without their None fields: a session.update of a session without
        # server turn detection would leave `turn_detection` out, and Inworld keep its semantic VAD
        if realtime_message.get("type") == "session.update" and self._is_manual_turn_detection():
            audio = realtime_message.setdefault("session", {}).setdefault("audio", {})
            audio.setdefault("input", {})["turn_detection"] = None
        await super()._ws_send(realtime_message)

    async def _create_response(self):
        setting_up = self._api_session_ready and not self._response_active and self._llm_needs_conversation_setup
        if setting_up and self._replay:
            items, self._replay = self._replay, []
            for item in items:
                item = item.model_copy(update={"id": uuid.uuid4().hex})
                self._messages_added_manually[item.id] = True
                await self.send_client_event(iw.ConversationItemCreateEvent(item=item))
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
            evt = iw.ConversationItemCreateEvent(item=item)
            self._messages_added_manually[evt.item.id] = True
            await self.send_client_event(evt)
        await self._send_session_update()
        self._llm_needs_conversation_setup = False

    async def _handle_evt_response_done(self, evt):
        if self.on_response_status is not None:
            details = evt.response.status_details or {}
            reason = details.get("reason") or (details.get("error") or {}).get("message") or "" if isinstance(details, dict) else str(details)
            self.on_response_status(evt.response.status or "", str(reason))
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
