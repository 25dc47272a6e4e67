"""OpenAI Realtime through Pipecat's `OpenAIRealtimeLLMService`, and `sim`: the same runner
pointed at the in-process simulator that speaks the same protocol.

The simulator (`runners.simulator`, driven by the benchmark's golden answers) is also the
local fake of every OpenAI Realtime alias: `--fake` runs them against it on 127.0.0.1.

History is replayed as one `conversation.item.create` per message, tool call and tool
output (Pipecat's own setup would pack the history into a single JSON user message and
drop the call structure), before the session's first `response.create`.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from pipecat.services.openai.realtime import events as rt
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
from websockets.protocol import State

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import HistoryItem, LocalFake, ProviderRunner, ResponseStatus, SessionSpec
from ..effort import effort_parts
from ..fair_receive import fair

DEFAULT_BASE_URL = "wss://api.openai.com/v1/realtime"
SIMULATOR_KEY = "sk-simulator-not-a-secret"


def history_items(history: list[HistoryItem]) -> list[rt.ConversationItem]:
    """Replay items in conversation order, tool structure kept."""
    items: list[rt.ConversationItem] = []
    for h in history:
        if h.kind == "user":
            items.append(
                rt.ConversationItem(type="message", role="user", content=[rt.ItemContent(type="input_text", text=h.text)])
            )
        elif h.kind == "assistant":
            items.append(
                rt.ConversationItem(
                    type="message", role="assistant", content=[rt.ItemContent(type="output_text", text=h.text)]
                )
            )
        elif h.kind == "tool_call":
            items.append(
                rt.ConversationItem(
                    type="function_call", call_id=h.call_id, name=h.name, arguments=json.dumps(h.args, ensure_ascii=False)
                )
            )
        else:
            items.append(
                rt.ConversationItem(
                    type="function_call_output",
                    call_id=h.call_id,
                    output=json.dumps(h.response, ensure_ascii=False) if h.response else "COMPLETED",
                )
            )
    return items


if TYPE_CHECKING:  # the service it is mixed into: Pipecat's OpenAI Realtime one, or xAI's of the same shape
    _RealtimeService = OpenAIRealtimeLLMService
else:
    _RealtimeService = object


class ReplayBeforeFirstResponse(_RealtimeService):
    """For OpenAI-Realtime-shaped services (OpenAI, xAI): send the replay items once the session
    is configured, before anything else of the conversation, and report each reply's final status.

    `respond=False` (a session opened without a kickoff): the conversation is set up (replay
    items, context, session settings) with no `response.create`; Pipecat would ask for one on
    its first context, and the model's answer to nothing would land in the next turn."""

    item_event: Any = rt.ConversationItemCreateEvent

    def __init__(self, *, replay: list[Any] | None = None, respond: bool = True,
                 on_response_status: ResponseStatus | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._replay = list(replay or [])
        self._respond_on_setup = respond
        self.replayed_items = 0
        self.on_response_status = on_response_status  # the engine's, from the session's spec
        # True until the first connect attempt ends: the pipeline starts playing input before
        # the socket is up, and a session still connecting is not a dead one.
        self.connecting = True

    async def _connect(self):
        try:
            await super()._connect()
        finally:
            self.connecting = False

    async def _receive_task_handler(self):
        self._websocket = fair(self._websocket)  # a burst: a share of each loop step across sessions (`fair_receive`)
        await super()._receive_task_handler()

    async def _ws_send(self, realtime_message):
        # A socket the server closed: the session is dead (connection_alive says so and the engine
        # rotates). Pipecat would push an error for every send meanwhile, one per 20 ms audio
        # chunk; at speed 20 that is ~1000 error events a second, each a Pipecat event task whose
        # clean-up scans all the others — the run's loop stalls for minutes.
        ws = self._websocket
        if ws is not None and ws.state is not State.OPEN:
            return
        await super()._ws_send(realtime_message)

    async def _handle_evt_response_done(self, evt):
        if self.on_response_status is not None:
            details = evt.response.status_details or {}
            reason = details.get("reason") or (details.get("error") or {}).get("message") or ""
            self.on_response_status(evt.response.status or "", str(reason))
        await super()._handle_evt_response_done(evt)

    def connection_alive(self) -> bool:
        """Pipecat does not report a closed socket: the receive loop ending is the sign (a
        session whose first connect is still under way is alive)."""
        if self.connecting:
            return True
        task = self._receive_task
        return self._websocket is not None and task is not None and not task.done()

    @property
    def conversation_ready(self) -> bool:
        """Configured (session.updated) and the conversation set up (replay and context sent)."""
        return bool(self._api_session_ready) and not self._llm_needs_conversation_setup

    async def _create_response(self):
        setting_up = self._api_session_ready and not self._response_active and self._llm_needs_conversation_setup
        if self._replay and setting_up:
            items, self._replay = self._replay, []
            for item in items:
                # A fresh id per send (a reset re-sends them); marked as ours, so the echo of an
                # assistant item is not taken for the start of a new response.
                item = item.model_copy(update={"id": uuid.uuid4().hex})
                self._messages_added_manually[item.id] = True
                await self.send_client_event(self.item_event(item=item))
            self.replayed_items = len(items)
        if setting_up and not self._respond_on_setup:
            await self._set_up_conversation()
            return
        await super()._create_response()

    async def _set_up_conversation(self) -> None:
        """Pipecat's conversation setup (the context as items, the session settings) without
        the `response.create` that follows it there: the server answers the user's turn."""
        assert self._context is not None
        self._log_llm_conversation_setup(self._context)
        params = await self.get_llm_adapter().get_llm_invocation_params(self._context)
        for item in params["messages"]:
            evt = self.item_event(item=item)
            self._messages_added_manually[evt.item.id] = True
            await self.send_client_event(evt)
        await self._send_session_update()
        self._llm_needs_conversation_setup = False


class ReplayingRealtimeService(ReplayBeforeFirstResponse, OpenAIRealtimeLLMService):
    pass


class SimulatedRealtimeService(ReplayingRealtimeService):
    """The service as `sim` runs it: the simulator takes `reasoning` (`--effort`) as
    gpt-realtime-2 does, so Pipecat sends it for the simulator's model id too (it drops it for a
    model it does not know to reason)."""

    _REASONING_CAPABLE_MODEL_SUBSTRINGS = (  # type: ignore[assignment]  # Pipecat's unannotated pair, typed as exactly two
        *OpenAIRealtimeLLMService._REASONING_CAPABLE_MODEL_SUBSTRINGS, "gpt-realtime")


class RealtimeRunner(ProviderRunner):
    """A runner whose sessions are an OpenAI-Realtime dialect's service with our history replay
    (`ReplayBeforeFirstResponse`: OpenAI's, xAI's): where one connects, whether it lives, when the
    seeded conversation is in."""

    def service_args(self, spec: SessionSpec, service_cls: Any, props: Any) -> dict[str, Any]:
        """What each session's service is given: the key, the endpoint, whether its seeded
        conversation asks for a reply (only the greeting's does), the engine's response-status
        hook, and the model, prompt and session properties as its `Settings`."""
        return {
            "api_key": self.api_key(spec.config),
            "base_url": self.endpoint(spec.config),
            "respond": spec.kickoff is not None,
            "on_response_status": spec.on_response_status,
            "settings": service_cls.Settings(model=spec.model, system_instruction=spec.system_prompt, session_properties=props),
        }

    def service_endpoint(self, service: Any) -> str:
        return service.base_url

    def is_alive(self, service: Any) -> bool:
        return service.connection_alive()

    def session_ready(self, service: Any) -> bool:
        return service.conversation_ready  # (xAI drops audio sent before session.updated)


class OpenAIRealtimeRunner(RealtimeRunner):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = SIMULATOR_KEY
    service_class: type[ReplayingRealtimeService] = ReplayingRealtimeService

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake:
        """The simulator: it speaks the OpenAI Realtime protocol and answers from the golden answers
        (`fake_class`: the simulator, or a subclass with another service's handshake)."""
        from ...fakes.timing import ENVELOPE  # deferred: the simulator loads only for `sim` runs

        # fake_timing "real" (a --fake run of a real alias, or asked for with sim) times replies as
        # a real service does; "instant" and sim's default keep its own fixed delay and one burst
        timing = self.timing or (ENVELOPE if config.fake_timing == "real" else None)
        # it expects each turn's audio as the run's condition makes it (the same seeded transform)
        return self.fake_type()(benchmark, policy=config.sim_policy, faults=config.faults, voice=config.sim_voice, timing=timing,
                                condition=config.condition, seed=config.seed)

    def build_service(self, spec: SessionSpec) -> OpenAIRealtimeLLMService:
        vad = spec.config.vad
        # --disable-vad: `turn_detection: null`; Pipecat then commits the input buffer and asks
        # for a response at each UserStoppedSpeakingFrame, which the engine pushes at the end of
        # the speech in the user WAV (`client_turns`), as the reference's manual mode does
        turn_detection: rt.TurnDetection | bool = False if spec.config.disable_vad else rt.TurnDetection(
            threshold=vad.threshold,
            prefix_padding_ms=vad.prefix_padding_ms,
            silence_duration_ms=vad.silence_duration_ms,
        )
        level, _ = effort_parts(spec.config)
        props = rt.SessionProperties(
            audio=rt.AudioConfiguration(
                input=rt.AudioInput(transcription=rt.InputAudioTranscription(), turn_detection=turn_detection)
            ),
            reasoning=rt.Reasoning(effort=level) if level else None,  # `--effort`: session.reasoning.effort
        )
        return self.service_class(replay=history_items(spec.history),
                                  **self.service_args(spec, OpenAIRealtimeLLMService, props))


class SimulatorRunner(OpenAIRealtimeRunner):
    """The OpenAI runner against an in-process `SimulatorServer` (no key, any speed)."""

    service_class = SimulatedRealtimeService

    def provider_ttfb_label(self) -> str:
        return "simulator TTFB (Pipecat metrics)"
