"""The simulator session's client events other than its audio and its input buffer, as the
OpenAI Realtime API answers them: the session's configuration (`session.update`: instructions,
tools, the turn detection its VAD then uses), conversation items (created, truncated, deleted,
retrieved; a function_call_output recorded and handed to the reply waiting on it), and response
requests (`response.create`: the turn a manual commit recognised, the greeting, or a reply to
nothing; `response.cancel`). Refusals are the API's error events, by code and parameter."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from arena_tui.spine.faults import TurnFault

from .clock import AudioClock
from .conversation import Conversation
from .protocol import DEFAULT_SILENCE_MS, DEFAULT_THRESHOLD, new_id
from .records import SessionRecord, ToolOutputRecord, TurnTruth
from .reply_state import ReplySettings
from .turns import TurnBook
from .vad import AudioTimeVad

if TYPE_CHECKING:  # the reply producer, only as the type the connection holds
    from .replies import Replies


class ClientEvents:
    """A part of `connection.Connection`: it reads the session's `rec`, `config`, `vad`,
    `conversation`, `clock`, `turns`, `replies`, `pending`, `greeted`, `settings`, `n` and its `send` / `error`."""

    # what it reads of the connection (set by `Connection.__init__`)
    rec: SessionRecord
    config: dict[str, Any]
    vad: AudioTimeVad
    conversation: Conversation
    clock: AudioClock
    turns: TurnBook
    replies: Replies
    pending: tuple[TurnTruth, TurnFault | None, float | None] | None
    greeted: bool
    settings: ReplySettings
    n: int

    if TYPE_CHECKING:  # the connection's own (declared here, defined there)
        async def send(self, type_: str, **fields: object) -> None: ...

        async def error(self, code: str, message: str, *, etype: str = "invalid_request_error",
                        param: str | None = None, event_id: str | None = None) -> None: ...

    async def on_session_update(self, evt: dict[str, Any]) -> None:
        sess = evt.get("session")
        if not isinstance(sess, dict):
            await self.error("missing_required_parameter", "Missing required parameter: 'session'.",
                             param="session", event_id=evt.get("event_id"))
            return
        if sess.get("type") not in ("realtime", "transcription"):
            # the GA API refuses an update without it (the beta shape had none)
            await self.error("missing_required_parameter", "Missing required parameter: 'session.type'.",
                             param="session.type", event_id=evt.get("event_id"))
            return
        self.rec.session_updates.append(sess)
        if "instructions" in sess:
            self.rec.instructions = sess["instructions"]
        if "tools" in sess and sess["tools"] is not None:
            self.rec.tools = list(sess["tools"])
        inp = ((sess.get("audio") or {}).get("input") or {})
        if "turn_detection" in inp or "turn_detection" in sess:
            td = inp["turn_detection"] if "turn_detection" in inp else sess["turn_detection"]
            if not td:
                self.server_vad = False
                self.rec.turn_detection = None
            elif isinstance(td, dict):
                if td.get("type", "server_vad") not in ("server_vad", "semantic_vad"):
                    await self.error("invalid_value", f"Invalid value: '{td.get('type')}'.",
                                     param="session.audio.input.turn_detection.type",
                                     event_id=evt.get("event_id"))
                    return
                self.server_vad = True
                self.rec.turn_detection = td
                thr = td.get("threshold")
                sil = td.get("silence_duration_ms")
                self.vad.configure(DEFAULT_THRESHOLD if thr is None else float(thr),
                                   DEFAULT_SILENCE_MS if sil is None else float(sil))
        _merge(self.config, sess)
        await self.send("session.updated", session=self.config)

    async def on_item_create(self, evt: dict[str, Any]) -> None:
        item = evt.get("item")
        if not isinstance(item, dict) or item.get("type") not in ("message", "function_call",
                                                                  "function_call_output"):
            await self.error("invalid_value", "Invalid conversation item.", param="item",
                             event_id=evt.get("event_id"))
            return
        item = dict(item)
        item.setdefault("id", new_id("item"))
        item.setdefault("object", "realtime.item")
        item.setdefault("status", "completed")
        self.rec.items.append(item)
        self.conversation.items[item["id"]] = item
        prev = evt.get("previous_item_id", self.conversation.last_item_id)
        await self.send("conversation.item.added", previous_item_id=prev, item=item)
        await self.send("conversation.item.done", previous_item_id=prev, item=item)
        self.conversation.last_item_id = item["id"]
        if item["type"] == "message" and item.get("role") == "user":
            for part in item.get("content") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self.turns.replayed(part["text"])
        if item["type"] == "function_call_output":
            call_id = str(item.get("call_id"))
            made = next((c for c in self.rec.calls if c.call_id == call_id), None)
            out = item.get("output")
            try:
                parsed = json.loads(out) if isinstance(out, str) else out
            except ValueError:
                parsed = None
            self.rec.tool_outputs[call_id] = ToolOutputRecord(
                call_id=call_id, name=made.name if made else None,
                turn_index=made.turn_index if made else None, output=out, parsed=parsed,
                audio_ms=self.clock.ms,
            )
            self.replies.outputs_arrived()
            await asyncio.sleep(0)  # a response waiting on it stamps its audio time first

    async def on_truncate(self, evt: dict[str, Any]) -> None:
        item_id = evt.get("item_id")
        if item_id not in self.conversation.items:
            await self.error("item_truncate_invalid_item_id", f"Item with item_id not found: {item_id}",
                             param="item_id", event_id=evt.get("event_id"))
            return
        rec = {"item_id": item_id, "audio_end_ms": evt.get("audio_end_ms"), "at_audio_ms": self.clock.ms}
        self.rec.truncations.append(rec)
        self.replies.note_truncated(str(item_id), evt.get("audio_end_ms"))
        await self.send("conversation.item.truncated", item_id=item_id,
                        content_index=int(evt.get("content_index") or 0),
                        audio_end_ms=int(evt.get("audio_end_ms") or 0))

    async def on_item_delete(self, evt: dict[str, Any]) -> None:
        item_id = evt.get("item_id")
        if self.conversation.items.pop(str(item_id), None) is None:
            await self.error("item_delete_invalid_item_id", f"Item with item_id not found: {item_id}",
                             param="item_id", event_id=evt.get("event_id"))
            return
        await self.send("conversation.item.deleted", item_id=item_id)

    async def on_item_retrieve(self, evt: dict[str, Any]) -> None:
        item = self.conversation.items.get(str(evt.get("item_id")))
        if item is None:
            await self.error("item_retrieve_invalid_item_id", "Item not found.", param="item_id",
                             event_id=evt.get("event_id"))
            return
        await self.send("conversation.item.retrieved", item=item)

    # -- responses ------------------------------------------------------------------------

    async def on_response_create(self, evt: dict[str, Any]) -> None:
        if self.replies.active_id is not None:
            await self.error("conversation_already_has_active_response",
                             f"Conversation already has an active response in progress: "
                             f"{self.replies.active_id}. Wait until the response is finished "
                             f"before creating a new one.", event_id=evt.get("event_id"))
            return
        if self.replies.resume_after_calls():
            return
        if self.pending is not None:
            truth, fault, stopped = self.pending
            self.pending = None
            if truth.status == "no_response":
                truth.status = "pending"
                truth.notes.append("answered on an explicit response.create")
            self.replies.answer(truth, fault, trigger_ms=self.clock.ms, stopped_ms=stopped)
        elif not self.greeted and not self.turns.conversation_started():
            self.greeted = True
            truth = TurnTruth(turn_index=-1, session=self.n, identified_by="greeting", voice=self.settings.voice)
            self.turns.record_truth(truth)
            # with a timing profile the greeting takes its time too; without, it goes out at once
            due = self.clock.ms + self.settings.first_delay_ms(-1) if self.settings.timing is not None else None
            self.replies.start(truth, None, due_ms=due, stopped_ms=None)
        else:
            self.replies.start(None, None, due_ms=None, stopped_ms=None)

    async def on_response_cancel(self, evt: dict[str, Any]) -> None:
        if self.replies.active_id is None:
            await self.error("response_cancel_not_active", "Cancellation failed: no active response found.",
                             event_id=evt.get("event_id"))
            return
        await self.replies.cancel("client_cancelled")


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v
