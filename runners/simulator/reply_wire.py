"""A simulator reply's message on the wire, as the OpenAI Realtime API streams one: its item
opened, its speech streamed (leading silence, audio deltas on the audio clock or the timing
plan's schedule, the transcript spread over them, the `truncated` and `disconnect` faults that
cut it), its item closed; and an empty response (the `empty_response` fault's control token)."""

from __future__ import annotations

import asyncio
import base64
import math
import time
from typing import TYPE_CHECKING, Any

from arena_tui.spine.faults import TurnFault

from .clock import AudioClock
from .conversation import Conversation
from .protocol import RATE, new_id
from .records import SessionRecord, TurnTruth
from .reply_state import Active, Outbox, Playing, ReplySettings
from .turns import TurnBook


class Messages:
    """A part of `replies.Replies`: it reads the reply's `out`, `conv`, `clock`, `settings`, `turns`,
    `rec`, `_item_truth` and `_finish`, and sets `playing`."""

    # what it reads of the reply producer (set by `Replies.__init__`)
    out: Outbox
    conv: Conversation
    clock: AudioClock
    settings: ReplySettings
    turns: TurnBook
    rec: SessionRecord
    _item_truth: dict[str, TurnTruth]
    playing: Playing | None

    if TYPE_CHECKING:  # the producer's own (declared here, defined there)
        async def _finish(self, active: Active, status: str, details: dict[str, Any] | None, text: str) -> None: ...

    def _message_item(self, item_id: str, status: str, transcript: str | None) -> dict[str, Any]:
        content = [] if transcript is None else [{"type": "output_audio", "transcript": transcript}]
        return {"id": item_id, "object": "realtime.item", "type": "message", "status": status,
                "role": "assistant", "content": content}

    async def _open_message(self, active: Active) -> str:
        rid, item_id = active.record.response_id, new_id("item")
        item = self._message_item(item_id, "in_progress", None)
        self.conv.items[item_id] = item
        active.item = item
        if active.truth is not None:
            self._item_truth[item_id] = active.truth
        await self.out.send("response.output_item.added", response_id=rid, output_index=0, item=item)
        await self.out.send("conversation.item.added", previous_item_id=self.conv.last_item_id, item=item)
        await self.out.send("response.content_part.added", response_id=rid, item_id=item_id, output_index=0,
                        content_index=0, part={"type": "audio", "transcript": ""})
        return item_id

    async def _close_message(self, active: Active, item_id: str, transcript: str, status: str,
                             audio: bool) -> None:
        rid = active.record.response_id
        if audio:
            await self.out.send("response.output_audio.done", response_id=rid, item_id=item_id, output_index=0,
                            content_index=0)
        await self.out.send("response.output_audio_transcript.done", response_id=rid, item_id=item_id,
                        output_index=0, content_index=0, transcript=transcript)
        await self.out.send("response.content_part.done", response_id=rid, item_id=item_id, output_index=0,
                        content_index=0, part={"type": "audio", "transcript": transcript})
        item = self._message_item(item_id, status, transcript)
        self.conv.items[item_id] = item
        active.outputs.append(item)
        await self.out.send("response.output_item.done", response_id=rid, output_index=0, item=item)
        await self.out.send("conversation.item.done", previous_item_id=self.conv.last_item_id, item=item)
        self.conv.last_item_id = item_id

    async def _send_empty(self, active: Active, fault: TurnFault) -> None:
        truth = active.truth
        assert truth is not None
        active.record.kind = "empty"
        item_id = await self._open_message(active)
        token = str(fault.value) if fault.value else ""
        if token and not token.startswith("<"):
            token = f"<{token}>"
        if token:
            await self.out.send("response.output_audio_transcript.delta", response_id=active.record.response_id,
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
        lead = int(RATE * self.settings.leading_silence_ms / 1000.0)
        pcm = b"\x00\x00" * lead + clip
        truth.voice, truth.leading_silence_ms = used, lead * 1000.0 / RATE
        truth.reply_full_ms = len(pcm) / 2 * 1000.0 / RATE
        step = max(2, int(RATE * self.settings.chunk_ms / 1000.0) * 2)
        chunks = [pcm[i : i + step] for i in range(0, len(pcm), step)]
        send_n = len(chunks)
        if fault is not None and fault.kind in ("truncated", "disconnect"):
            send_n = int(math.floor(len(chunks) * float(fault.value if fault.value is not None else 0.5)))
            if kind == "truncated":
                send_n = max(1, min(send_n, len(chunks) - 1))
        words = text.split(" ")
        rid = active.record.response_id
        if due_ms is not None:
            await self.clock.until(due_ms)
        # No await between the wake-up above and this: the first delta's audio time is exact.
        truth.first_audio_ms = self.clock.ms
        if stopped_ms is not None:
            truth.first_audio_after_stop_ms = self.clock.ms - stopped_ms
        if truth.speech_start_ms is not None:
            truth.first_audio_after_start_ms = self.clock.ms - truth.speech_start_ms
        if truth.turn_index >= 0 and send_n > 0:
            self.turns.mark_answered(truth.turn_index)
        item_id = await self._open_message(active)
        said = 0
        plan = self.settings.plan(truth.turn_index)
        offsets = plan.schedule([len(c) / 2 * 1000.0 / RATE for c in chunks]) if plan is not None else [0.0] * len(chunks)
        start_ms = self.clock.ms
        playing = self.playing = Playing(pcm=pcm, start_ms=start_ms, lead_ms=truth.leading_silence_ms)
        for k in range(send_n):
            if offsets[k] > 0:
                await self.clock.until(start_ms + offsets[k])
            playing.sent(self.clock.ms, len(chunks[k]) / 2 * 1000.0 / RATE)
            upto = round(len(words) * (k + 1) / len(chunks))
            if upto > said:
                delta = (" " if said else "") + " ".join(words[said:upto])
                said = upto
                active.said = " ".join(words[:said])
                await self.out.send("response.output_audio_transcript.delta", response_id=rid, item_id=item_id,
                                output_index=0, content_index=0, delta=delta)
            if active.record.audio_ms_first_delta is None:
                active.record.audio_ms_first_delta = self.clock.ms
            active.record.audio_ms_last_delta = self.clock.ms
            await self.out.send("response.output_audio.delta", response_id=rid, item_id=item_id, output_index=0,
                            content_index=0, delta=base64.b64encode(chunks[k]).decode("ascii"))
            if truth.first_audio_sent_mono is None:
                truth.first_audio_sent_mono = time.monotonic()
            active.sent_audio_bytes += len(chunks[k])
            truth.reply_audio_ms = active.sent_audio_bytes / 2 * 1000.0 / RATE
            await asyncio.sleep(0)
        spoken = " ".join(words[:said])
        truth.text = spoken
        if kind == "disconnect":
            truth.status = "disconnected"
            self.turns.unmark_answered(truth.turn_index)
            self.rec.close_code, self.rec.close_reason = 1006, "fault: disconnect mid-reply"
            self.clock.cancel()
            self.out.abort()
            return
        if kind == "truncated":
            await self._close_message(active, item_id, spoken, "incomplete", audio=True)
            truth.status = "truncated"
            await self._finish(active, "incomplete", {"type": "incomplete", "reason": "max_output_tokens"}, spoken)
            return
        last_ms = self.clock.ms
        await self._close_message(active, item_id, text, "completed", audio=True)
        truth.text, truth.status = text, "answered"
        if plan is not None:  # the terminal event lags the audio
            await self.clock.until(last_ms + plan.terminal_lag_ms)
        await self._finish(active, "completed", None, text)
