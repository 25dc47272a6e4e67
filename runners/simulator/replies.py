"""What a session says: responses (speech, function calls, empty, cancelled) on the wire.

Kept apart from the receive side (`connection.py`) so the protocol of one reply reads in one
place. Everything that costs wall-clock time (synthesis) happens before a reply is `armed`;
after that it only waits on AUDIO time, so its ground truth does not depend on --speed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.exceptions import ConnectionClosed

from arena_tui.spine.benchmark import ExpectedCall

from . import voice as voice_mod
from .faults import TurnFault
from .host import SimulatorHost
from .protocol import RATE, new_id
from .records import ResponseRecord, SessionRecord, SimCall, TurnTruth

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection


TOOL_OUTPUT_GRACE_MS = 2000.0  # audio time a post-call reply waits for outputs still missing


@dataclass
class ToolWait:
    """A turn whose calls went out: its speech waits for their outputs and a response.create."""

    truth: TurnTruth
    fault: TurnFault | None
    call_ids: list[str]
    stopped_ms: float | None


@dataclass
class Active:
    """The one response in progress on a session (the API allows one at a time)."""

    record: ResponseRecord
    task: asyncio.Task[None] | None = None
    truth: TurnTruth | None = None
    armed: asyncio.Event = field(default_factory=asyncio.Event)  # set once it only waits on input
    item: dict[str, Any] | None = None
    sent_audio_bytes: int = 0
    said: str = ""  # transcript sent so far
    outputs: list[dict[str, Any]] = field(default_factory=list)


class Replies:
    """Mixin for `Connection`: every server event of a response goes out from here."""

    s: SimulatorHost
    ws: ServerConnection
    rec: SessionRecord
    n: int
    active: Active | None
    tool_wait: ToolWait | None
    last_item_id: str | None
    items: dict[str, dict[str, Any]]
    config: dict[str, Any]
    _item_truth: dict[str, TurnTruth]
    _outputs_changed: asyncio.Event
    _input_tokens_seen: int

    if TYPE_CHECKING:  # provided by Connection
        audio_ms: float
        _waiters: list[tuple[int, asyncio.Future[None]]]

        async def send(self, type_: str, **fields: Any) -> None: ...
        def spawn(self, coro: Any) -> asyncio.Task[None]: ...
        async def until_audio_ms(self, ms: float) -> None: ...

    def start_response(self, truth: TurnTruth | None, fault: TurnFault | None, *, due_ms: float | None,
                       stopped_ms: float | None, after_tools: list[str] | None = None) -> None:
        if truth is None:
            kind = "none"
        elif truth.turn_index < 0:
            kind = "greeting"
        else:
            kind = "speech"
        rid = new_id("resp")
        record = ResponseRecord(session=self.n, response_id=rid, turn_index=truth.turn_index if truth else None,
                                kind=kind, audio_ms_created=self.audio_ms)
        self.s.responses.append(record)
        if truth is not None:
            truth.response_ids.append(rid)
            if due_ms is not None:
                truth.response_due_ms = due_ms
        active = Active(record=record, truth=truth)
        self.active = active
        active.task = self.spawn(self._respond(active, fault, due_ms, stopped_ms, after_tools))

    async def cancel_active(self, reason: str) -> None:
        active = self.active
        if active is None:
            return
        self.active = None
        if active.task is not None:
            active.task.cancel()
        active.record.status = "cancelled"
        if active.truth is not None and active.truth.status == "pending":
            active.truth.status = "cancelled"
            active.truth.notes.append(f"response cancelled: {reason}")
        if active.item is not None and not active.outputs:  # close the half-sent message, as the API does
            await self._close_message(active, active.item["id"], active.said, "incomplete",
                                      audio=active.sent_audio_bytes > 0)
        await self.send("response.done", response=self._response_obj(
            active, "cancelled", {"type": "cancelled", "reason": reason}))

    def _response_obj(self, active: Active, status: str, details: dict[str, Any] | None = None,
                      usage: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "object": "realtime.response",
            "id": active.record.response_id,
            "status": status,
            "status_details": details,
            "output": active.outputs,
            "conversation_id": "conv_" + self.config["id"][5:],
            "output_modalities": ["audio"],
            "max_output_tokens": "inf",
            "audio": {"output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy"}},
            "usage": usage,
            "metadata": None,
        }

    def _usage(self, text: str, audio_bytes: int) -> dict[str, Any]:
        """Token counts of the same order as the real API's (text ~4 chars/token, audio ~10/s in, 20/s out)."""
        ctx_chars = len(self.rec.instructions or "") + sum(len(t) for t in self.rec.item_texts())
        in_text = ctx_chars // 4 + 1
        in_audio = int(self.audio_ms / 100)
        inp = in_text + in_audio
        cached = (min(self._input_tokens_seen, inp) // 64) * 64
        self._input_tokens_seen = max(self._input_tokens_seen, inp)
        out_text = len(text) // 4
        out_audio = int(audio_bytes / 2 / RATE * 20)
        return {
            "total_tokens": inp + out_text + out_audio,
            "input_tokens": inp,
            "output_tokens": out_text + out_audio,
            "input_token_details": {
                "text_tokens": in_text, "audio_tokens": in_audio, "image_tokens": 0,
                "cached_tokens": cached,
                "cached_tokens_details": {"text_tokens": min(cached, in_text),
                                          "audio_tokens": max(0, cached - in_text), "image_tokens": 0},
            },
            "output_token_details": {"text_tokens": out_text, "audio_tokens": out_audio},
        }

    async def _finish(self, active: Active, status: str, details: dict[str, Any] | None, text: str) -> None:
        if self.active is active:
            self.active = None
        active.record.status = status
        await self.send("response.done", response=self._response_obj(
            active, status, details, self._usage(text, active.sent_audio_bytes)))

    async def _respond(self, active: Active, fault: TurnFault | None, due_ms: float | None,
                       stopped_ms: float | None, after_tools: list[str] | None) -> None:
        try:
            await self._respond_inner(active, fault, due_ms, stopped_ms, after_tools)
        except (ConnectionClosed, asyncio.CancelledError):
            if active.truth is not None and active.truth.status == "pending" and self.rec.closed:
                active.truth.status = "disconnected"
            raise
        except Exception as e:  # a simulator bug: fail this response visibly, keep the session
            message = f"{type(e).__name__}: {e}"
            if active.truth is not None:
                active.truth.status = "failed"
                active.truth.notes.append(f"simulator error: {message}")
            self.rec.errors_sent.append({"type": "server_error", "code": "simulator_error", "message": message})
            await self._finish(active, "failed", {"type": "failed", "error": {
                "type": "server_error", "code": "simulator_error", "message": message}}, "")
        finally:
            active.armed.set()

    async def _respond_inner(self, active: Active, fault: TurnFault | None, due_ms: float | None,
                             stopped_ms: float | None, after_tools: list[str] | None) -> None:
        """Everything that takes wall-clock time happens before `armed`: the receive loop holds
        further input until then, so audio time does not run on while the server 'thinks'."""
        truth = active.truth
        await self.send("response.created", response=self._response_obj(active, "in_progress"))
        if truth is None:  # nothing to answer: an empty, completed response
            await self._finish(active, "completed", None, "")
            return
        kind = fault.kind if fault else None
        calls = self.s.plan_calls(truth.turn_index, fault) if after_tools is None and truth.turn_index >= 0 else []
        if calls:
            active.armed.set()
            if due_ms is not None:
                await self.until_audio_ms(due_ms)
            await self._send_calls(active, calls, fault, stopped_ms)
            return
        if kind == "empty_response":
            active.armed.set()
            if due_ms is not None:
                await self.until_audio_ms(due_ms)
            await self._send_empty(active, fault)  # type: ignore[arg-type]
            return
        text = self.s.reply_text(truth.turn_index)
        clip, used = await asyncio.to_thread(voice_mod.synthesize, text, self.s.voice)  # type: ignore[arg-type]
        active.armed.set()
        if after_tools is not None:
            await self._await_outputs(truth, after_tools)
            now = self.audio_ms
            truth.tool_roundtrip_ms = now - (truth.calls_sent_ms if truth.calls_sent_ms is not None else now)
            due_ms = now + self.s.response_delay_ms
            if kind == "slow_first_audio" and stopped_ms is not None:
                due_ms = max(due_ms, stopped_ms + float(fault.value or 0.0))  # type: ignore[union-attr]
            if stopped_ms is not None:  # what we waited on purpose: all but the client's round trip
                truth.injected_delay_ms = due_ms - stopped_ms - truth.tool_roundtrip_ms
            truth.response_due_ms = due_ms
        await self._send_speech(active, fault, stopped_ms, due_ms, text, clip, used)

    async def _await_outputs(self, truth: TurnTruth, call_ids: list[str]) -> None:
        """Wait for every output the calls are owed (a client may ask before all are in), but
        not forever: after TOOL_OUTPUT_GRACE_MS of audio the reply goes out with what it has."""
        limit = self.audio_ms + TOOL_OUTPUT_GRACE_MS
        while True:
            missing = [cid for cid in call_ids if cid not in self.rec.tool_outputs]
            if not missing:
                return
            if self.audio_ms >= limit:
                truth.notes.append(f"spoke without the outputs for {', '.join(missing)}")
                return
            self._outputs_changed.clear()
            waits = {asyncio.ensure_future(self._outputs_changed.wait()),
                     asyncio.ensure_future(self.until_audio_ms(limit))}
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    async def _send_calls(self, active: Active, calls: list[tuple[int, ExpectedCall, bool]],
                          fault: TurnFault | None, stopped_ms: float | None) -> None:
        truth = active.truth
        assert truth is not None
        rid = active.record.response_id
        active.record.kind = "calls"
        ids: list[str] = []
        for i, (for_turn, call, wrong) in enumerate(calls):
            call_id, item_id = new_id("call"), new_id("item")
            args = json.dumps(call.args, ensure_ascii=False)
            sim = SimCall(call_id=call_id, name=call.name, args=call.args, turn_index=truth.turn_index,
                          for_turn=for_turn, wrong=wrong)
            self.rec.calls.append(sim)
            truth.calls.append(sim)
            ids.append(call_id)
            item = {"id": item_id, "object": "realtime.item", "type": "function_call", "status": "in_progress",
                    "name": call.name, "call_id": call_id, "arguments": ""}
            self.items[item_id] = item
            await self.send("response.output_item.added", response_id=rid, output_index=i, item=dict(item))
            await self.send("conversation.item.added", previous_item_id=self.last_item_id, item=dict(item))
            await self.send("response.function_call_arguments.delta", response_id=rid, item_id=item_id,
                            output_index=i, call_id=call_id, delta=args)
            await self.send("response.function_call_arguments.done", response_id=rid, item_id=item_id,
                            output_index=i, call_id=call_id, name=call.name, arguments=args)
            item.update(status="completed", arguments=args)
            active.outputs.append(dict(item))
            await self.send("response.output_item.done", response_id=rid, output_index=i, item=dict(item))
            await self.send("conversation.item.done", previous_item_id=self.last_item_id, item=dict(item))
            self.last_item_id = item_id
        truth.calls_sent_ms = self.audio_ms
        self.tool_wait = ToolWait(truth=truth, fault=fault, call_ids=ids, stopped_ms=stopped_ms)
        self.s.mark_answered(truth.turn_index)
        truth.notes.append(f"called {', '.join(c.name for _, c, _ in calls)}; speech follows the outputs")
        await self._finish(active, "completed", None, "")

    def _message_item(self, item_id: str, status: str, transcript: str | None) -> dict[str, Any]:
        content = [] if transcript is None else [{"type": "output_audio", "transcript": transcript}]
        return {"id": item_id, "object": "realtime.item", "type": "message", "status": status,
                "role": "assistant", "content": content}

    async def _open_message(self, active: Active) -> str:
        rid, item_id = active.record.response_id, new_id("item")
        item = self._message_item(item_id, "in_progress", None)
        self.items[item_id] = item
        active.item = item
        if active.truth is not None:
            self._item_truth[item_id] = active.truth
        await self.send("response.output_item.added", response_id=rid, output_index=0, item=item)
        await self.send("conversation.item.added", previous_item_id=self.last_item_id, item=item)
        await self.send("response.content_part.added", response_id=rid, item_id=item_id, output_index=0,
                        content_index=0, part={"type": "audio", "transcript": ""})
        return item_id

    async def _close_message(self, active: Active, item_id: str, transcript: str, status: str,
                             audio: bool) -> None:
        rid = active.record.response_id
        if audio:
            await self.send("response.output_audio.done", response_id=rid, item_id=item_id, output_index=0,
                            content_index=0)
        await self.send("response.output_audio_transcript.done", response_id=rid, item_id=item_id,
                        output_index=0, content_index=0, transcript=transcript)
        await self.send("response.content_part.done", response_id=rid, item_id=item_id, output_index=0,
                        content_index=0, part={"type": "audio", "transcript": transcript})
        item = self._message_item(item_id, status, transcript)
        self.items[item_id] = item
        active.outputs.append(item)
        await self.send("response.output_item.done", response_id=rid, output_index=0, item=item)
        await self.send("conversation.item.done", previous_item_id=self.last_item_id, item=item)
        self.last_item_id = item_id

    async def _send_empty(self, active: Active, fault: TurnFault) -> None:
        truth = active.truth
        assert truth is not None
        active.record.kind = "empty"
        item_id = await self._open_message(active)
        token = str(fault.value) if fault.value else ""
        if token and not token.startswith("<"):
            token = f"<{token}>"
        if token:
            await self.send("response.output_audio_transcript.delta", response_id=active.record.response_id,
                            item_id=item_id, output_index=0, content_index=0, delta=token)
            active.said = token
        await self._close_message(active, item_id, token, "completed", audio=False)
        truth.status, truth.text = "empty", token
        await self._finish(active, "completed", None, token)

    async def _send_speech(self, active: Active, fault: TurnFault | None, stopped_ms: float | None,
                           due_ms: float | None, text: str, clip: bytes, used: str) -> None:
        truth = active.truth
        assert truth is not None
        kind = fault.kind if fault else None
        lead = int(RATE * self.s.leading_silence_ms / 1000.0)
        pcm = b"\x00\x00" * lead + clip
        truth.voice, truth.leading_silence_ms = used, lead * 1000.0 / RATE
        truth.reply_full_ms = len(pcm) / 2 * 1000.0 / RATE
        step = max(2, int(RATE * self.s.chunk_ms / 1000.0) * 2)
        chunks = [pcm[i : i + step] for i in range(0, len(pcm), step)]
        send_n = len(chunks)
        if kind in ("truncated", "disconnect"):
            send_n = int(math.floor(len(chunks) * float(fault.value if fault.value is not None else 0.5)))  # type: ignore[union-attr]
            if kind == "truncated":
                send_n = max(1, min(send_n, len(chunks) - 1))
        words = text.split(" ")
        rid = active.record.response_id
        if due_ms is not None:
            await self.until_audio_ms(due_ms)
        # No await between the wake-up above and this: the first delta's audio time is exact.
        truth.first_audio_ms = self.audio_ms
        if stopped_ms is not None:
            truth.first_audio_after_stop_ms = self.audio_ms - stopped_ms
        if truth.speech_start_ms is not None:
            truth.first_audio_after_start_ms = self.audio_ms - truth.speech_start_ms
        if truth.turn_index >= 0 and send_n > 0:
            self.s.mark_answered(truth.turn_index)
        item_id = await self._open_message(active)
        said = 0
        for k in range(send_n):
            upto = round(len(words) * (k + 1) / len(chunks))
            if upto > said:
                delta = (" " if said else "") + " ".join(words[said:upto])
                said = upto
                active.said = " ".join(words[:said])
                await self.send("response.output_audio_transcript.delta", response_id=rid, item_id=item_id,
                                output_index=0, content_index=0, delta=delta)
            await self.send("response.output_audio.delta", response_id=rid, item_id=item_id, output_index=0,
                            content_index=0, delta=base64.b64encode(chunks[k]).decode("ascii"))
            active.sent_audio_bytes += len(chunks[k])
            truth.reply_audio_ms = active.sent_audio_bytes / 2 * 1000.0 / RATE
            await asyncio.sleep(0)
        spoken = " ".join(words[:said])
        truth.text = spoken
        if kind == "disconnect":
            truth.status = "disconnected"
            self.s._answered.discard(truth.turn_index)
            self.rec.close_code, self.rec.close_reason = 1006, "fault: disconnect mid-reply"
            self.cancel_waiters_only()
            self.ws.transport.abort()
            return
        if kind == "truncated":
            await self._close_message(active, item_id, spoken, "incomplete", audio=True)
            truth.status = "truncated"
            await self._finish(active, "incomplete", {"type": "incomplete", "reason": "max_output_tokens"}, spoken)
            return
        await self._close_message(active, item_id, text, "completed", audio=True)
        truth.text, truth.status = text, "answered"
        await self._finish(active, "completed", None, text)

    def cancel_waiters_only(self) -> None:
        for _, fut in self._waiters:
            if not fut.done():
                fut.cancel()
        self._waiters.clear()
