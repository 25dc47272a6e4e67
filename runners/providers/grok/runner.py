"""xAI Grok Voice Agent through Pipecat's `GrokRealtimeLLMService` (server VAD, 24 kHz PCM).

Why a subclass: an engine rotation opens a NEW service, and Pipecat would seed it with the
LLM context packed into ONE user message of JSON; the history is replayed instead as one
`conversation.item.create` per message, tool call and tool output (the same items as the
OpenAI runner's, in xAI's event classes), before anything else of the conversation; a session
opened without a kickoff asks for no response (`ReplayBeforeFirstResponse`). Pipecat's own
`reset_conversation()` reconnects without history until the client sets the conversation up
(with server VAD the server answers first, without it): the subclass sets it up again at once
(history re-sent; a response asked for only if the session had a kickoff) and reports the reset
as events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pipecat.services.xai.realtime import events as xe
from pipecat.services.xai.realtime.llm import GrokRealtimeLLMService, GrokRealtimeLLMSettings

from arena_tui.spine.events import Reconnected, ReplaySummary, SessionRotated

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import HistoryItem, Publish, ResponseStatus, SessionSpec
from ..openai_realtime.runner import ReplayBeforeFirstResponse, history_items
from ..realtime_family import RealtimeRunner

DEFAULT_BASE_URL = "wss://api.x.ai/v1/realtime"
FAKE_KEY = "xai-fake-not-a-secret"


def grok_history_items(history: list[HistoryItem]) -> list[xe.ConversationItem]:
    """The OpenAI runner's replay items (same wire shape), as xAI's event classes."""
    return [xe.ConversationItem(**item.model_dump(exclude_none=True, exclude={"id", "object"})) for item in history_items(history)]


class GrokReplayingService(ReplayBeforeFirstResponse, GrokRealtimeLLMService):
    """Replays history items before the first response; makes a reset re-seed and be seen."""

    item_event = xe.ConversationItemCreateEvent

    def __init__(self, *, api_key: str, base_url: str, settings: GrokRealtimeLLMSettings,
                 replay: list[xe.ConversationItem] | None = None, respond: bool = True,
                 on_response_status: ResponseStatus | None = None, session_number: int = 0,
                 publish: Publish | None = None) -> None:
        super().__init__(api_key=api_key, base_url=base_url, settings=settings, replay=replay or [], respond=respond,
                         on_response_status=on_response_status)
        self._history_items = list(replay or [])
        self.session_number = session_number
        self.resets = 0
        self.publish = publish  # the engine's, from the session's spec

    async def _ws_send(self, realtime_message):
        # Pipecat sends events without their None fields: a session.update of a session without
        # server VAD would leave `turn_detection` out, and the server keep its default (VAD on)
        if realtime_message.get("type") == "session.update" and not self._is_turn_detection_enabled():
            session = realtime_message.setdefault("session", {})
            session["turn_detection"] = None
        await super()._ws_send(realtime_message)

    def _response_outcome(self, evt: object) -> tuple[str | None, object]:
        assert isinstance(evt, xe.ResponseDone)
        return evt.response.status, evt.response.status_details

    async def reset_conversation(self):
        self.resets += 1
        await super().reset_conversation()
        self._replay = list(self._history_items)
        # Without a client-created response the new session has no history at all.
        await self._create_response()
        if self.publish is not None:
            summary = self._reset_summary()
            n = self.session_number
            self.publish(SessionRotated, reason="provider_reset", from_session=n, to_session=n, replayed=summary)
            self.publish(Reconnected, session=n, reason="provider_reset", attempt=self.resets)

    def _reset_summary(self) -> ReplaySummary:
        msgs: list[Mapping[str, Any]] = [m for m in (self._context.get_messages() if self._context else []) if isinstance(m, dict)]
        items = [i.model_dump(exclude_none=True) for i in self._history_items]
        return ReplaySummary(
            strategy="full_history",
            messages=sum(1 for i in items if i["type"] == "message") + sum(1 for m in msgs if m.get("role") in ("user", "assistant") and m.get("content")),
            tool_calls=sum(1 for i in items if i["type"] == "function_call") + sum(len(m.get("tool_calls") or []) for m in msgs),
            chars=sum(len(json.dumps(x, ensure_ascii=False, default=str)) for x in items + msgs),
            note="Pipecat reset: history items re-sent, then this session's context packed into one JSON user message",
        )


class GrokRealtimeRunner(RealtimeRunner[GrokReplayingService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = FAKE_KEY

    def __init__(self) -> None:
        self.sessions = 0

    def build_service(self, spec: SessionSpec) -> GrokReplayingService:
        vad = spec.config.vad
        # --disable-vad: no server VAD (`turn_detection: null`, sent as such: Pipecat leaves
        # None out); Pipecat commits and asks for a response at our speech end (`client_turns`)
        props = xe.SessionProperties(
            turn_detection=None if spec.config.disable_vad else xe.TurnDetection(
                type="server_vad",
                threshold=vad.threshold,
                prefix_padding_ms=vad.prefix_padding_ms,
                silence_duration_ms=vad.silence_duration_ms,
            ),
        )
        self.sessions += 1
        settings = GrokRealtimeLLMService.Settings(model=spec.model, system_instruction=spec.system_prompt, session_properties=props)
        return GrokReplayingService(base_url=self.endpoint(spec.config), settings=settings, replay=grok_history_items(spec.history),
                                    session_number=self.sessions, publish=spec.publish, **self.session_args(spec))

    def provider_ttfb_label(self) -> str:
        return "xAI TTFB (Pipecat metrics, from server speech_stopped)"

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        self.sessions = 0
