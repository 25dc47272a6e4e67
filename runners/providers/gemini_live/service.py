"""`ArenaGeminiLiveService`: Pipecat's `GeminiLiveLLMService` with what a benchmark needs of it (the runner is
`gemini_live.py`, which imports this module only when a session is built: without google-genai the
runner still preflights, naming the missing package):
- 16 kHz input: the engine feeds 24 kHz; Gemini's documented input format is 16 kHz PCM,
  so audio is resampled here rather than trusting the server to do it.
- Client-side turns: server VAD is switched off and the engine brackets each user clip
  (`turn_frames`), so Gemini's turn is exactly our timeline's turn (no splits at pauses,
  no missed turns on synthetic voices); Pipecat sends activityStart/activityEnd.
- Tool calls are BLOCKING (the engine's handler is synchronous and answers at once from the
  turn spec); NON_BLOCKING would make the result wait for "idle" on 2.5 (a known stall in
  voice mode) and is reported as an error on 3.x < 3.8. Asserted at the fake.
- Stall after a tool result: the toolCall opens the reply (Pipecat marks nothing until audio,
  so the wait for the post-tool answer looked like silence and could end the turn early); if
  the model says nothing within `tool_nudge_s`, one `realtime_input.text=" "` nudge (what
  Pipecat itself sends Gemini 3.x to start inference); after `tool_give_up_s` more, the reply
  is closed so the turn can end.
- Engine rotation: the replayed history is put in the session's LLMContext (ahead of the
  kickoff, if any), so Pipecat seeds it as `client_content.turns`; tool calls and results
  become text there (Pipecat's adapter does this: Gemini Live closes with 1007 on seeded
  functionCall/functionResponse parts). A session without a kickoff is seeded with
  `turnComplete: false` (Pipecat's `inference_on_context_initialization=False`): no reply.
  Gemini 2.5 answers user audio after such a seed as if there were no history (Pipecat's
  note), so for 2.5 `history_needs_reply` and the engine asks it to continue (a handshake).
- Pipecat's own reconnect (goAway/close → resume with the handle, or re-seed the context)
  is reported as `SessionRotated` + `Reconnected` through the session's `publish` (`SessionSpec`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypedDict, Unpack

from loguru import logger
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    InputAudioRawFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from google.genai.types import HttpOptions
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.processors.aggregators.llm_context import LLMContextMessage
from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService, GeminiLiveLLMSettings

from arena_tui.spine.events import ErrorEvent, Reconnected, ReplaySummary, SessionRotated

from ...base import Publish
from ..fair_receive import Share

INPUT_RATE = 16000  # Gemini Live's input format: 16-bit PCM, 16 kHz, mono


class GeminiAccess(TypedDict, total=False):
    """How a session authenticates: the Gemini API's key, or Vertex AI's service account (its JSON or
    its path), project and location (`ArenaGeminiVertexService`: the same service on Vertex's)."""

    api_key: str
    credentials: str
    credentials_path: str | None
    project_id: str
    location: str


class ArenaGeminiLiveService(GeminiLiveLLMService):
    """GeminiLiveLLMService with the benchmark's needs (see the module docstring); `tool_nudge_s` and
    `tool_give_up_s` are the runner's (`GeminiLiveRunner`)."""

    def __init__(
        self,
        *,
        settings: GeminiLiveLLMSettings,
        system_instruction: str,
        tools: ToolsSchema | None,
        http_options: HttpOptions | None,
        inference_on_context_initialization: bool,
        replay: list[LLMContextMessage] | None = None,
        tool_nudge_s: float,
        tool_give_up_s: float,
        publish: Publish | None = None,
        **access: Unpack[GeminiAccess],
    ):
        super().__init__(settings=settings, system_instruction=system_instruction, tools=tools, http_options=http_options,
                         inference_on_context_initialization=inference_on_context_initialization, **access)
        self._replay = list(replay or [])
        self._resampler = create_stream_resampler()
        self.tool_nudge_s = tool_nudge_s
        self.tool_give_up_s = tool_give_up_s
        self._nudge_task: asyncio.Task | None = None
        self._share = Share()
        self.nudges = 0
        self.reconnects = 0  # Pipecat's own reconnects in this service
        self._reconnecting = False
        self._go_away: str | None = None  # timeLeft of a goAway not yet followed by a reconnect
        self._pending: tuple[str, str, str | None] | None = None  # (reason, error, handle) of a reconnect
        self.publish = publish  # the engine's, from the session's spec
        self.session_number = 0
        self._connecting = True  # until the first connect attempt ends

    # -- liveness: Pipecat's reconnect briefly has no connection task, and the pipeline plays
    # input before the first connect is done; neither is death
    async def _connect(self, session_resumption_handle: str | None = None):
        try:
            await super()._connect(session_resumption_handle=session_resumption_handle)
        finally:
            self._connecting = False

    def connection_alive(self) -> bool:
        task = self._connection_task
        return self._connecting or self._reconnecting or (task is not None and not task.done())

    @property
    def ready_for_input(self) -> bool:
        """The seed has gone out (Pipecat holds user audio until then)."""
        return bool(self._ready_for_realtime_input)

    # -- input audio at 16 kHz
    async def _send_user_audio(self, frame):
        if frame.sample_rate != INPUT_RATE:
            pcm = await self._resampler.resample(frame.audio, frame.sample_rate, INPUT_RATE)
            frame = InputAudioRawFrame(audio=pcm, sample_rate=INPUT_RATE, num_channels=frame.num_channels)
        await super()._send_user_audio(frame)

    async def _tool_result(self, tool_call_id, tool_name, tool_result_message, *, is_final=True, spoken=True):
        await super()._tool_result(tool_call_id, tool_name, tool_result_message, is_final=is_final, spoken=spoken)
        if is_final and spoken and self.tool_nudge_s > 0:
            self._cancel_nudge()
            self._nudge_task = self.create_task(self._nudge_later(tool_name), "tool_result_nudge")

    async def _handle_msg_tool_call(self, message):
        # The call opens the model turn that its spoken answer will close (turnComplete):
        # mark the reply as under way so nobody takes the wait for the answer as silence.
        if message.tool_call and message.tool_call.function_calls and not self._bot_is_responding:
            await self._set_bot_is_responding(True)
            await self.push_frame(TTSStartedFrame())
            await self.push_frame(LLMFullResponseStartFrame())
        await super()._handle_msg_tool_call(message)

    async def _nudge_later(self, tool_name: str) -> None:
        """After a quiet `tool_nudge_s`: one realtime-text nudge; after `tool_give_up_s`
        more: close the reply, so the turn ends (and the engine's rules decide)."""
        await asyncio.sleep(self.tool_nudge_s)
        if self._disconnecting or not self._session:
            return
        self.nudges += 1
        try:
            await self._session.send_realtime_input(text=" ")
        except Exception as e:  # noqa: BLE001 - a send on a closing socket; Pipecat reports it
            await self._handle_send_error(e)
            return
        self._report(
            ErrorEvent,
            where="provider",
            message=f"Gemini sent nothing {self.tool_nudge_s:g} s after the {tool_name} result; nudged with realtime text",
            fatal=False,
        )
        await asyncio.sleep(self.tool_give_up_s)
        self._nudge_task = None
        if self._bot_is_responding:
            await self._set_bot_is_responding(False)
            await self.push_frame(TTSStoppedFrame())
            await self.push_frame(LLMFullResponseEndFrame())
            self._report(
                ErrorEvent,
                where="provider",
                message=f"Gemini did not answer the {tool_name} result even after a nudge; reply closed after "
                f"{self.tool_nudge_s + self.tool_give_up_s:g} s",
                fatal=False,
            )

    def _cancel_nudge(self) -> None:
        task, self._nudge_task = self._nudge_task, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()

    async def _handle_server_message(self, message):
        self._share.begin()
        sc = message.server_content
        if message.tool_call or (sc and (sc.model_turn or sc.output_transcription or sc.turn_complete)):
            self._cancel_nudge()
        if message.go_away is not None:
            self._go_away = str(message.go_away.time_left or "")
        await super()._handle_server_message(message)
        await self._share.done()  # its share of a loop step across the process's sessions (`fair_receive`)

    # -- replay on an engine rotation: history goes into the context ahead of the kickoff
    async def _handle_context(self, context, direction=FrameDirection.DOWNSTREAM):
        if self._context is None and self._replay:
            context.set_messages(self._replay + list(context.get_messages()))
            self._replay = []
        await super()._handle_context(context, direction)

    # -- a connection that fails to open says why (Pipecat only logs it; the engine would
    #    see a dead session and no reason)
    async def _connection_task_handler(self, config):
        try:
            await super()._connection_task_handler(config)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever stopped the connection is the message
            # the exception goes with it: the engine tells an infrastructure failure (refused
            # setup, bad key, unreachable) from anything else by it (`runners/run/infra.py`)
            await self.push_error(error_msg=f"Gemini Live connection failed: {type(e).__name__}: {e}"[:500], exception=e)

    # -- Pipecat's own reconnect, made visible
    async def _handle_connection_error(self, error: Exception) -> bool:
        again = await super()._handle_connection_error(error)
        if again:
            reason = "provider_go_away" if self._go_away is not None else "provider_reconnect"
            self._pending = (reason, f"{type(error).__name__}: {error}", self._session_resumption_handle)
        self._go_away = None
        return again

    async def _reconnect(self):
        self._reconnecting = True
        try:
            await super()._reconnect()
        finally:
            self._reconnecting = False

    async def _handle_session_ready(self, session):
        await super()._handle_session_ready(session)
        if self._pending is None:
            return
        reason, error, handle = self._pending
        self._pending = None
        self.reconnects += 1
        if handle:
            replayed = ReplaySummary(
                strategy="provider_resumption",
                note=f"resumed with the session handle; the server restores the history ({error})"[:300],
            )
        else:
            msgs = list(self._context.get_messages()) if self._context else []
            plain: list[Mapping[str, Any]] = [m for m in msgs if isinstance(m, dict)]
            replayed = ReplaySummary(
                strategy="full_history",
                messages=sum(1 for m in plain if m.get("role") in ("user", "assistant") and not m.get("tool_calls")),
                tool_calls=sum(len(m.get("tool_calls") or []) for m in plain),
                chars=sum(len(str(m.get("content") or "")) for m in plain),
                note=f"no resumption handle: Pipecat re-seeded the context as client_content ({error})"[:300],
            )
        n = self.session_number
        self._report(SessionRotated, reason=reason, from_session=n, to_session=n, replayed=replayed)
        self._report(Reconnected, session=n, reason=reason, attempt=self.reconnects)

    def _report(self, cls: type, **fields: object) -> None:
        if self.publish is None:
            return
        # The engine's publish takes the session it belongs to as its own first argument, so
        # an event field named `session` is bound into the class instead of passed along.
        make: Callable[..., Any] = cls
        if "session" in fields:
            make = functools.partial(cls, session=fields.pop("session"))
        try:
            self.publish(make, **fields)
        except Exception as e:  # noqa: BLE001 - reporting must never take the connection down
            logger.error(f"{self}: could not publish {getattr(cls, '__name__', cls)}: {e}")

    async def _disconnect(self):
        self._cancel_nudge()
        await super()._disconnect()
