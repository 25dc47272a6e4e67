"""A Pipecat LLM service for Zhipu's GLM-Realtime speech-to-speech API (Pipecat ships none).

GLM-Realtime speaks an OpenAI-Realtime-like dialect with differences that matter here:
- client VAD: the client appends audio, then sends `input_audio_buffer.commit` and
  `response.create` itself at the end of each user turn (server VAD exists but is not used);
- `input_audio_buffer.append.audio` is a base64 *WAV file* (16 kHz by default), and the API
  allows 50 requests/s, so 20 ms frames are batched and flushed at most every 250 ms;
- beta event names (`response.audio.delta`, `response.audio_transcript.delta`);
- session config carries `beta_fields` (`chat_mode`, `tts_source`, `auto_search`);
- the system instruction is capped at 12,000 characters (enforced here, never silently cut);
- the lightweight model sometimes answers with a transcript but no audio: such a response
  is surfaced as a non-fatal ErrorFrame and counted in `text_without_audio`.

On an unexpected close the service reconnects by itself and replays text history within
the reference harness's budget (12,000 − instruction − 200 chars, entries cut to 500
chars); every replay is recorded in `replays` and announced via `on_history_replayed`.
A session opened to continue an earlier one (the engine's rotation) is seeded with that
conversation (`history`) the same way, before its kickoff (none: nothing is asked). Tool calls and their results
are replayed as short assistant notes (GLM documents no function-call item to seed), so
the model knows what was already done.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import uuid
import wave
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from loguru import logger
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    FunctionCallResultFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMServiceMetadataFrame,
    LLMTextFrame,
    StartFrame,
    TextType,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import LLMTokenUsage
from pipecat.processors.aggregators.llm_context import LLMContext, LLMSpecificMessage
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import FunctionCallFromLLM, LLMService
from pipecat.services.settings import LLMSettings
from pipecat.utils.time import time_now_iso8601
from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from .fair_receive import fair
from .glm_events import (
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

GLM_REALTIME_URL = "wss://open.bigmodel.cn/api/paas/v4/realtime"
MAX_INSTRUCTION_CHARS = 12_000
REPLAY_MARGIN_CHARS = 200
REPLAY_ENTRY_CHARS = 500
COMMIT_GRACE_S = 0.5  # commit this long after a user stop if no later audio frame arrives
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class GLMConfigError(ValueError):
    """A session configuration GLM-Realtime would refuse (or silently mangle)."""


class ReplayReport(BaseModel):
    """What a new connection was given of the conversation so far (a reconnect's replay, or
    the `history` seeded into a session that continues an earlier one)."""

    session: int
    kind: str = "reconnect"  # "reconnect" (our own) | "seed" (history given at construction)
    reason: str = ""  # why the reconnect happened (close code / reason)
    messages: int = 0
    chars: int = 0
    dropped_messages: int = 0
    budget_chars: int = 0
    truncated_entries: int = 0


def check_instructions(text: str | None) -> str | None:
    """Refuse instructions over GLM's cap, naming the size, instead of letting the API cut them."""
    if text and len(text) > MAX_INSTRUCTION_CHARS:
        raise GLMConfigError(
            f"GLM-Realtime system instruction is {len(text):,} characters; the limit is "
            f"{MAX_INSTRUCTION_CHARS:,}. Shorten the prompt (or knowledge base) for this model."
        )
    return text


def glm_tools(tools: ToolsSchema | None) -> list[dict[str, Any]]:
    """Tools in GLM's flat function format, checked against the constraints we know of.

    GLM wants `{type: "function", name, description, parameters}` with an object-typed JSON
    Schema; names must be identifier-like (≤ 64 chars) and unique; a description is needed
    for the model to choose. Violations are reported all at once, by tool name.
    """
    if not tools:
        return []
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for fn in tools.standard_tools:
        if not TOOL_NAME.match(fn.name):
            problems.append(f"tool {fn.name!r}: name must match {TOOL_NAME.pattern}")
        if fn.name in seen:
            problems.append(f"tool {fn.name!r}: duplicate name")
        seen.add(fn.name)
        if not (fn.description or "").strip():
            problems.append(f"tool {fn.name!r}: description is empty")
        params = {"type": "object", "properties": dict(fn.properties or {}), "required": list(fn.required or [])}
        missing = [r for r in params["required"] if r not in params["properties"]]
        if missing:
            problems.append(f"tool {fn.name!r}: required {missing} not among its properties")
        out.append({"type": "function", "name": fn.name, "description": fn.description, "parameters": params})
    if problems:
        raise GLMConfigError("GLM-Realtime tool schema problems: " + "; ".join(problems))
    return out


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    """A complete mono PCM16 WAV file: GLM's append event carries one per request."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm)
    return buf.getvalue()


def tool_note(name: str, args: Any, result: Any) -> str:
    """A tool call and its result as one line of text, for replay into a new session."""

    def compact(v: Any) -> str:
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except json.JSONDecodeError:
                return v
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)

    return f"[tool {name}({compact(args)}) returned {compact(result)}]"


def budget_for(instructions: str | None) -> int:
    """Replay room left next to the instructions (the reference harness's rule)."""
    return max(0, MAX_INSTRUCTION_CHARS - len(instructions or "") - REPLAY_MARGIN_CHARS)


def fit_history(entries: list[tuple[str, str]], report: ReplayReport) -> list[tuple[str, str]]:
    """The newest entries that fit `report.budget_chars`, in order; entries cut to 500 chars.
    Fills in the report's counts (kept, chars, dropped, truncated).

    GLM's own rule, not the engine's `runners.rotation.select_replay`, because it trims a
    different thing for a different reason: the service replays by itself after its own
    reconnect, from the (role, text) transcript it saw on the wire, where tool calls are
    already flattened into text notes (GLM documents no function-call item to seed), so there
    is no tool item to keep first; and every entry is cut to 500 chars before the 12,000-char
    instruction cap is counted, oldest dropped first (the reference harness's GLM budget). The
    engine's rule still decides what a rotated session is handed (`history_budget_chars` is set
    to `budget_for` the prompt), so this one only cuts further what no longer fits."""
    kept: list[tuple[str, str]] = []
    used = 0
    for role, text in reversed(entries):
        if len(text) > REPLAY_ENTRY_CHARS:
            text = text[:REPLAY_ENTRY_CHARS]
            report.truncated_entries += 1
        if used + len(text) > report.budget_chars:
            break
        used += len(text)
        kept.append((role, text))
    kept.reverse()
    report.dropped_messages = len(entries) - len(kept)
    report.messages, report.chars = len(kept), used
    return kept


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class GLMRealtimeLLMSettings(LLMSettings):
    """Settings for GLMRealtimeLLMService (model and system instruction, as LLMSettings)."""


class GLMRealtimeLLMService(LLMService):
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
        **kwargs: Any,
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
        super().__init__(settings=settings, **kwargs)
        self._api_key = api_key
        self._base_url = base_url
        self._tools = tools
        self._glm_tools = glm_tools(tools)
        self._in_rate = input_sample_rate
        self._out_rate = output_sample_rate
        self._flush_bytes = input_sample_rate * 2 * flush_ms // 1000
        self._auto_search = auto_search
        self._max_reconnects = max_reconnects
        self._history = list(history or [])
        self._respond_on_seed = respond
        self._text_without_audio_error = text_without_audio_error
        self._resampler = create_stream_resampler()

        self._ws: ClientConnection | None = None
        self._receive_task: asyncio.Task[None] | None = None
        self._disconnecting = False
        self._session_ready = asyncio.Event()
        self._context: LLMContext | None = None
        self._conversation_seeded = False
        self._replay_pending = False
        self._turn_open = False  # between UserStartedSpeakingFrame and UserStoppedSpeakingFrame
        self._commit_after_id: int | None = None  # a turn ended; commit once its audio is in
        self._commit_fallback: asyncio.Task[None] | None = None
        self._pending: bytearray = bytearray()  # user audio not yet appended
        self._response_active = False
        self._response_audio_bytes = 0
        self._response_text = ""
        self._open_calls: dict[str, tuple[str, Any]] = {}  # call_id -> (name, args), awaiting our result
        # The conversation as this service saw it on the wire, for a reconnect's replay: the
        # context reaches us too late for that (the assistant aggregator adds a reply only
        # once its audio has been played, and a server close right after a reply would lose it).
        self.transcript: list[tuple[str, str]] = []
        self._results_since_response = 0
        self.session_number = 0
        self.reconnects = 0
        self.text_without_audio = 0  # responses with a transcript but no audio
        self.replays: list[ReplayReport] = []
        self.appends = 0
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
            if self._commit_after_id is not None and frame.id > self._commit_after_id:
                await self._end_user_turn()  # all audio created before the stop has arrived
            await self._append_audio(frame)
        elif isinstance(frame, UserStartedSpeakingFrame):
            self._turn_open = True
        elif isinstance(frame, UserStoppedSpeakingFrame):
            # A stop without a start (or a repeated one) would commit nothing. The stop is a
            # SystemFrame and overtakes audio still queued upstream, so the commit waits for
            # the first audio frame created after it (or COMMIT_GRACE_S without audio).
            if self._turn_open:
                self._turn_open = False
                self._commit_after_id = frame.id
                self._commit_fallback = self.create_task(self._commit_later())
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
                self._settings.system_instruction = check_instructions(_message_text(system[0]))
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
            if text := _message_text(m):
                await self._send_message(m["role"], text)
                self.transcript.append((m["role"], text))

    async def _send_message(self, role: str, text: str) -> None:
        kind = "input_text" if role == "user" else "text"
        await self._send(
            {"type": "conversation.item.create", "item": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}
        )

    async def _append_audio(self, frame: InputAudioRawFrame) -> None:
        audio = frame.audio
        if frame.sample_rate != self._in_rate:
            audio = await self._resampler.resample(audio, frame.sample_rate, self._in_rate)
        self._pending.extend(audio)
        if not self._session_ready.is_set():
            del self._pending[: max(0, len(self._pending) - 4 * self._flush_bytes)]  # keep ~1 s
            return
        if len(self._pending) >= self._flush_bytes:
            await self._flush_audio()

    async def _flush_audio(self) -> None:
        if not self._pending or not self._session_ready.is_set():
            return
        pcm, self._pending = bytes(self._pending), bytearray()
        self.appends += 1
        await self._send({"type": "input_audio_buffer.append", "audio": base64.b64encode(wav_bytes(pcm, self._in_rate)).decode()})

    async def _commit_later(self) -> None:
        await asyncio.sleep(COMMIT_GRACE_S)
        self._commit_fallback = None
        await self._end_user_turn()

    async def _end_user_turn(self) -> None:
        if self._commit_after_id is None:
            return
        self._commit_after_id = None
        if self._commit_fallback and self._commit_fallback is not asyncio.current_task():
            await self.cancel_task(self._commit_fallback)
        self._commit_fallback = None
        await self._flush_audio()
        await self._send({"type": "input_audio_buffer.commit"})
        await self._create_response()

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

    async def _on_response_created(self, evt: ResponseCreated) -> None:
        self._response_active = True
        self._response_audio_bytes = 0
        self._response_text = ""
        await self.start_ttfb_metrics()
        await self.push_frame(LLMFullResponseStartFrame())

    async def _on_response_audio_delta(self, evt: ResponseAudioDelta) -> None:
        audio = base64.b64decode(evt.delta)
        if not audio:
            return
        if not self._response_audio_bytes:
            await self.stop_ttfb_metrics()
            await self.push_frame(TTSStartedFrame())
        self._response_audio_bytes += len(audio)
        await self.push_frame(TTSAudioRawFrame(audio=audio, sample_rate=self._out_rate, num_channels=1))

    async def _on_text_delta(self, evt: ResponseAudioTranscriptDelta | ResponseTextDelta) -> None:
        await self._push_text(evt.delta)

    async def _push_text(self, text: str) -> None:
        if not text:
            return
        self._response_text += text
        llm = LLMTextFrame(text)
        llm.append_to_context = False
        await self.push_frame(llm)
        tts = TTSTextFrame(text, text_type=TextType.SENTENCE)
        tts.includes_inter_frame_spaces = True
        await self.push_frame(tts)

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

    async def _on_response_done(self, evt: ResponseDone) -> None:
        if usage := evt.token_usage():
            await self.start_llm_usage_metrics(
                LLMTokenUsage(
                    prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens, total_tokens=usage.total_tokens
                )
            )
        await self._finish_response()

    async def _finish_response(self, interrupted: bool = False) -> None:
        if self._response_text.strip():
            self.transcript.append(("assistant", self._response_text.strip()))
        if self._response_audio_bytes:
            await self.push_frame(TTSStoppedFrame())
        elif self._response_text.strip() and not interrupted:
            self.text_without_audio += 1
            if self._text_without_audio_error:
                await self.push_error(f"GLM-Realtime response had text but no audio: {self._response_text[:80]!r}")
            await self._call_event_handler("on_text_without_audio", self._response_text)
        await self.push_frame(LLMFullResponseEndFrame())
        self._response_active = False

    async def _on_error(self, evt: ServerError) -> None:
        err = evt.error or ErrorDetail()
        await self.push_error(f"GLM-Realtime error {err.code or err.type}: {err.message}")
