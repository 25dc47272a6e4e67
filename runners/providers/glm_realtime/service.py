"""A Pipecat LLM service for Zhipu's GLM-Realtime speech-to-speech API (Pipecat ships none).

GLM-Realtime speaks an OpenAI-Realtime-like dialect with differences that matter here:
- client VAD: the client appends audio (one base64 *WAV file* per append, batched: the API allows
  50 requests/s), then commits and asks for a response itself at each turn's end (`turns.py`);
- beta event names (`response.audio.delta`, …, `events.py`); session config carries
  `beta_fields` (`chat_mode`, `tts_source`, `auto_search`);
- the system instruction is capped at 12,000 characters (refused, never cut: `wire.py`);
- the lightweight model sometimes answers with a transcript but no audio: such a response
  is surfaced as a non-fatal ErrorFrame and counted in `text_without_audio` (`replies.py`).

On an unexpected close the service reconnects by itself and replays text history within the
reference harness's budget (`wire.fit_history`); every replay is recorded in `replays` and
announced via `on_history_replayed`. A session that continues an earlier one (the engine's
rotation) is seeded with that conversation (`history`) the same way, before its kickoff (none:
nothing is asked). Tool calls and results are replayed as short assistant notes (GLM documents no
function-call item to seed), so the model knows what was already done.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from loguru import logger
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    FunctionCallResultFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMContextFrame,
    LLMServiceMetadataFrame,
    StartFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext, LLMSpecificMessage
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import FunctionCallFromLLM, LLMService
from pipecat.services.settings import LLMSettings
from pipecat.utils.time import time_now_iso8601
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from ..fair_receive import fair
from .events import (
    ErrorDetail,
    FunctionCallArgumentsDone,
    GLMEventError,
    GLMServerEvent,
    InputTranscriptionCompleted,
    ResponseAudioDelta,
    ResponseAudioTranscriptDelta,
    ResponseCreated,
    ResponseDone,
    ResponseTextDelta,
    ServerError,
    SessionUpdated,
    parse_server_event,
)
from .replies import ModelReplies
from .turns import UserTurns
from .wire import (
    GLM_REALTIME_URL,
    GLMConfigError,
    ReplayReport,
    budget_for,
    check_instructions,
    fit_history,
    glm_tools,
    message_text,
    tool_note,
)

@dataclass
class GLMRealtimeLLMSettings(LLMSettings):
    """Settings for GLMRealtimeLLMService (model and system instruction, as LLMSettings)."""


class GLMRealtimeLLMService(UserTurns, ModelReplies, LLMService):
    """GLM-Realtime over its websocket, driven by client-side turn boundaries.

    Turns come from `UserStartedSpeakingFrame` / `UserStoppedSpeakingFrame` (local VAD or the
    engine, which knows where each user WAV starts and ends); at the stop, pending audio is
    flushed, then commit + response.create. Audio streams continuously, as the reference did.
    """

    Settings = GLMRealtimeLLMSettings

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = GLM_REALTIME_URL,
        model: str = "glm-realtime",
        system_instruction: str | None = None,
        tools: ToolsSchema | None = None,
        input_sample_rate: int = 16000,
        output_sample_rate: int = 24000,
        flush_ms: int = 250,
        auto_search: bool = False,
        max_reconnects: int = 3,
        history: list[tuple[str, str]] | None = None,
        respond: bool = True,
        text_without_audio_error: bool = True,
    ):
        """`history`: (role, text) of an earlier session's conversation, seeded (within the
        replay budget) before this session's own context. `respond`: ask for a reply once the
        conversation is seeded (False: a session with no kickoff waits for the user's turn,
        so no reply to nothing lands in it). `text_without_audio_error`: also
        push a non-fatal ErrorFrame for a text-only response (a caller that treats every
        ErrorFrame as a dead session sets False and listens to `on_text_without_audio`)."""
        settings = self.Settings(
            model=model,
            system_instruction=check_instructions(system_instruction),
            temperature=None,
            max_tokens=None,
            top_p=None,
            top_k=None,
            frequency_penalty=None,
            presence_penalty=None,
            seed=None,
            filter_incomplete_user_turns=False,
            user_turn_completion_config=None,
        )
        super().__init__(settings=settings)
        self._api_key = api_key
        self._base_url = base_url
        self._tools = tools
        self._glm_tools = glm_tools(tools)
        self._open_user_turns(input_sample_rate, flush_ms)
        self._open_replies(output_sample_rate, text_without_audio_error)
        self._auto_search = auto_search
        self._max_reconnects = max_reconnects
        self._history = list(history or [])
        self._respond_on_seed = respond

        self._ws: ClientConnection | None = None
        self._receive_task: asyncio.Task[None] | None = None
        self._disconnecting = False
        self._session_ready = asyncio.Event()
        self._context: LLMContext | None = None
        self._conversation_seeded = False
        self._replay_pending = False
        self._open_calls: dict[str, tuple[str, Any]] = {}  # call_id -> (name, args), awaiting our result
        # The conversation as this service saw it on the wire, for a reconnect's replay: the
        # context reaches us too late for that (the assistant aggregator adds a reply only
        # once its audio has been played, and a server close right after a reply would lose it).
        self.transcript: list[tuple[str, str]] = []
        self._results_since_response = 0
        self.session_number = 0
        self.reconnects = 0
        self.replays: list[ReplayReport] = []
        self._reconnect_reason = ""
        self.failed: str | None = None  # why the connection is gone for good
        # The server events this service acts on (session.created and heartbeat need nothing).
        self._handlers: dict[type[GLMServerEvent], Callable[[Any], Awaitable[None]]] = {
            SessionUpdated: self._on_session_updated,
            ResponseCreated: self._on_response_created,
            ResponseAudioDelta: self._on_response_audio_delta,
            ResponseAudioTranscriptDelta: self._on_text_delta,
            ResponseTextDelta: self._on_text_delta,
            FunctionCallArgumentsDone: self._on_function_call,
            InputTranscriptionCompleted: self._on_input_transcription,
            ResponseDone: self._on_response_done,
            ServerError: self._on_error,
        }
        self._register_event_handler("on_history_replayed")
        self._register_event_handler("on_text_without_audio")

    def can_generate_metrics(self) -> bool:
        return True

    def service_metadata_frame(self) -> LLMServiceMetadataFrame:
        """Announce a realtime service, so the context aggregators switch to realtime mode.

        Without it the user aggregator turns our input transcripts into user turns of its own
        and broadcasts turn frames that would commit empty audio buffers.
        """
        return LLMServiceMetadataFrame(service_name=self.name, is_realtime_service=True)

    # ------------------------------------------------------------------ lifecycle

    @property
    def alive(self) -> bool:
        """Connected, or still connecting / reconnecting by itself; False once closed or given up."""
        task = self._receive_task
        return not self._disconnecting and self.failed is None and (task is None or not task.done())

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        try:
            await self._connect()
        except Exception as e:  # refused, DNS, TLS, HTTP 401 on the upgrade …
            self.failed = f"GLM-Realtime: cannot connect to {self._base_url}: {type(e).__name__}: {e}"
            await self.push_error(self.failed, fatal=True)

    async def stop(self, frame: EndFrame) -> None:
        await super().stop(frame)
        await self._disconnect()

    async def cancel(self, frame: CancelFrame) -> None:
        await super().cancel(frame)
        await self._disconnect()

    async def _connect(self) -> None:
        self._session_ready.clear()
        ws = await connect(
            self._base_url,
            additional_headers={"Authorization": f"Bearer {self._api_key}"},
            max_size=None,
        )
        if self._disconnecting:  # closed while the handshake was under way
            await ws.close()
            return
        self._ws = ws
        self.session_number += 1
        self._receive_task = self.create_task(self._receive_loop(self._ws))
        await self._send_session_update()

    async def _disconnect(self) -> None:
        self._disconnecting = True
        if self._ws:
            await self._ws.close()
            self._ws = None
        if self._receive_task:
            await self.cancel_task(self._receive_task, timeout=1.0)
            self._receive_task = None

    async def _send(self, event: dict[str, Any]) -> None:
        if not self._ws or self._disconnecting:
            return
        event.setdefault("event_id", f"evt_{uuid.uuid4().hex[:16]}")
        event.setdefault("client_timestamp", int(asyncio.get_running_loop().time() * 1000))
        try:
            await self._ws.send(json.dumps(event))
        except ConnectionClosed:
            pass  # the receive loop notices and reconnects

    async def _send_session_update(self) -> None:
        session: dict[str, Any] = {
            "model": self._settings.model,
            "input_audio_format": "wav",
            "output_audio_format": "pcm",
            "turn_detection": {"type": "client_vad"},
            "beta_fields": {"chat_mode": "audio", "tts_source": "e2e", "auto_search": self._auto_search},
        }
        if self._settings.system_instruction:
            try:  # composed by Pipecat from the base prompt and add-ons: check what is sent
                session["instructions"] = check_instructions(self._settings.system_instruction)
            except GLMConfigError as e:
                self.failed = str(e)
                await self.push_error(str(e), fatal=True)
                return
        if self._glm_tools:
            session["tools"] = self._glm_tools
        await self._send({"type": "session.update", "session": session})

    # ------------------------------------------------------------------ frames

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            await self._handle_context(frame.context)
        elif isinstance(frame, InputAudioRawFrame):
            await self._user_audio(frame)
        elif isinstance(frame, UserStartedSpeakingFrame):
            self._user_started()
        elif isinstance(frame, UserStoppedSpeakingFrame):
            self._user_stopped(frame)  # (a SystemFrame: the commit waits for the turn's audio, `turns`)
        elif isinstance(frame, InterruptionFrame):
            if self._response_active:
                await self._send({"type": "response.cancel"})
        await self.push_frame(frame, direction)

    async def push_frame(self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM) -> None:
        if direction == FrameDirection.DOWNSTREAM and isinstance(frame, FunctionCallResultFrame):
            await self._send_tool_result(frame)
        await super().push_frame(frame, direction)

    async def _handle_context(self, context: LLMContext) -> None:
        first = self._context is None
        self._context = context
        if not first:
            return
        system = [m for m in context.get_messages() if not isinstance(m, LLMSpecificMessage) and m.get("role") == "system"]
        if system and not self._settings.system_instruction:
            try:
                self._settings.system_instruction = check_instructions(message_text(system[0]))
            except GLMConfigError as e:
                await self.push_error(str(e), fatal=True)
                return
            await self._send_session_update()
        if self._session_ready.is_set():
            await self._seed_conversation(context)
            await self._respond_to_seed()

    async def _seed_conversation(self, context: LLMContext) -> None:
        """Put the context's text messages into the session as conversation items."""
        if self._conversation_seeded:
            return
        self._conversation_seeded = True
        if self._history:
            report = ReplayReport(session=self.session_number, kind="seed", budget_chars=budget_for(self._settings.system_instruction))
            for role, text in fit_history(self._history, report):
                await self._send_message(role, text)
            self.transcript.extend(self._history)
            self.replays.append(report)
            await self._call_event_handler("on_history_replayed", report)
        for m in context.get_messages():
            if isinstance(m, LLMSpecificMessage) or m.get("role") not in ("user", "assistant"):
                continue
            if text := message_text(m):
                await self._send_message(m["role"], text)
                self.transcript.append((m["role"], text))

    async def _send_message(self, role: str, text: str) -> None:
        kind = "input_text" if role == "user" else "text"
        await self._send(
            {"type": "conversation.item.create", "item": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}
        )

    async def _create_response(self) -> None:
        await self._send({"type": "response.create"})

    async def _send_tool_result(self, frame: FunctionCallResultFrame) -> None:
        if frame.properties and not frame.properties.is_final:
            return  # GLM takes one output per call
        result = json.dumps(frame.result, ensure_ascii=False) if frame.result is not None else "COMPLETED"
        name, args = self._open_calls.pop(frame.tool_call_id, (frame.function_name, frame.arguments))
        self.transcript.append(("assistant", tool_note(name, args, frame.result if frame.result is not None else "COMPLETED")))
        await self._send(
            {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": frame.tool_call_id, "output": result}}
        )
        run_llm = frame.properties.run_llm if frame.properties and frame.properties.run_llm is not None else frame.run_llm
        if not self._open_calls and run_llm is not False:
            await self._create_response()

    # ------------------------------------------------------------------ server events

    async def _receive_loop(self, ws: ClientConnection) -> None:
        try:
            async for raw in fair(ws):  # a burst: a share of each loop step across sessions (`fair_receive`)
                try:
                    evt = parse_server_event(raw)
                except GLMEventError as e:
                    await self.push_error(str(e))
                    continue
                handler = self._handlers.get(type(evt)) if evt is not None else None
                if handler:
                    await handler(evt)
        except ConnectionClosed:
            pass
        if not self._disconnecting and ws is self._ws:
            await self._reconnect(f"closed: {ws.close_code} {ws.close_reason or ''}".strip())

    async def _reconnect(self, reason: str) -> None:
        if self._response_active:
            await self._finish_response(interrupted=True)
        if self.reconnects >= self._max_reconnects:
            self.failed = f"GLM-Realtime connection lost ({reason}); gave up after {self.reconnects} reconnects"
            await self.push_error(self.failed, fatal=True)
            return
        self.reconnects += 1
        logger.warning(f"{self}: GLM-Realtime connection lost ({reason}); reconnecting")
        self._pending = bytearray()
        self._open_calls.clear()
        self._replay_pending = True
        self._reconnect_reason = reason
        try:
            await self._connect()
        except Exception as e:
            self.failed = f"GLM-Realtime connection lost ({reason}); reconnect failed: {type(e).__name__}: {e}"
            await self.push_error(self.failed, fatal=True)

    async def _replay_history(self) -> None:
        """Replay the conversation so far (seeded history, then the text and finished tool calls
        of this service's sessions) within GLM's context budget, newest first."""
        report = ReplayReport(
            session=self.session_number, reason=self._reconnect_reason, budget_chars=budget_for(self._settings.system_instruction)
        )
        for role, text in fit_history(self.transcript, report):
            await self._send_message(role, text)
        self.replays.append(report)
        await self._call_event_handler("on_history_replayed", report)

    async def _on_session_updated(self, evt: SessionUpdated) -> None:
        if self._session_ready.is_set():
            return
        self._session_ready.set()
        if self._replay_pending:
            self._replay_pending = False
            await self._replay_history()
        elif self._context is not None and not self._conversation_seeded:
            await self._seed_conversation(self._context)
            await self._respond_to_seed()

    async def _respond_to_seed(self) -> None:
        if self._respond_on_seed:
            await self._create_response()

    @property
    def seeded(self) -> bool:
        """Configured and the conversation seeded: user audio from now on is heard in context."""
        return self._session_ready.is_set() and self._conversation_seeded

    async def _on_function_call(self, evt: FunctionCallArgumentsDone) -> None:
        call_id = evt.call_id or f"glm_{uuid.uuid4().hex[:12]}"
        name = evt.name or ""
        try:
            args = json.loads(evt.arguments or "{}")
        except json.JSONDecodeError:
            await self.push_error(f"GLM-Realtime sent unparseable arguments for {name!r}: {evt.arguments!r}")
            return
        self._open_calls[call_id] = (name, args)
        await self.run_function_calls(
            [FunctionCallFromLLM(context=self._context, tool_call_id=call_id, function_name=name, arguments=args)]
        )

    async def _on_input_transcription(self, evt: InputTranscriptionCompleted) -> None:
        if text := evt.transcript:
            self.transcript.append(("user", text))
            await self.push_frame(
                TranscriptionFrame(text=text, user_id="", timestamp=time_now_iso8601(), result=evt.model_dump()),
                FrameDirection.UPSTREAM,
            )

    async def _on_error(self, evt: ServerError) -> None:
        err = evt.error or ErrorDetail()
        await self.push_error(f"GLM-Realtime error {err.code or err.type}: {err.message}")
