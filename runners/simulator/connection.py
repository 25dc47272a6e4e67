"""One websocket session of the simulator: the client's events in, the session's state, the turn heard.

It reads client events in order, one at a time (session.update, conversation items, the
input audio buffer, response.create/cancel), runs the audio-time VAD and recognises which
turn is being spoken, and decides when that turn is answered. What the answer is and how it
streams (calls, speech, faults) is its reply producer's (`replies.Replies`), which it drives
through a few calls and which sees only what the session hands it: its `Outbox` side (this
class's `send`/`abort`), its `AudioClock`, `Conversation` and `SessionRecord`.

The audio each append carries advances the session's AUDIO clock (samples / 24), the only
clock replies wait on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from .client_events import ClientEvents
from .clock import AudioClock
from .conversation import Conversation
from arena_tui.spine.faults import TurnFault
from .fingerprint import MATCH_SLACK_MS, Match, StreamScanner
from .protocol import (
    DEFAULT_SILENCE_MS,
    DEFAULT_THRESHOLD,
    RATE,
    SECRET_HEADERS,
    new_id,
)
from .duplex import CueHearing
from .records import ClientEventRecord, DuplexTruth, SessionRecord, TurnTruth
from .replies import Replies
from .reply_state import ReplySettings
from .turns import TurnBook
from .vad import AudioTimeVad, VadEdge


@dataclass
class _Segment:
    """One stretch of user speech found by the VAD."""

    start_ms: float
    confirm_ms: float
    item_id: str
    end_ms: float | None = None
    stopped_ms: float | None = None
    truth: TurnTruth | None = None
    fault: TurnFault | None = None
    continuation: bool = False
    responded: bool = False  # a barge-in reply already went out for it
    duplex: DuplexTruth | None = None  # a benchmark's duplex cue, not a turn (`duplex.py`)
    yielded: bool = False  # ... and the reply was stopped for it


class Connection(ClientEvents):
    """One websocket session: receive loop, VAD, turn recognition, and when to answer."""

    def __init__(self, ws: ServerConnection, number: int, *, turns: TurnBook, settings: ReplySettings,
                 log: list[ClientEventRecord]) -> None:
        self.ws = ws
        self.turns, self.settings, self.log = turns, settings, log
        req = ws.request
        assert req is not None
        query = parse_qs(urlsplit(req.path).query)
        headers = {
            k: ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in req.headers.raw_items()
        }
        self.rec = SessionRecord(
            session=number,
            path=urlsplit(req.path).path,
            model=query["model"][0] if query.get("model") else None,
            headers=headers,
            auth_present=bool({"authorization", "api-key"} & {k.lower() for k in req.headers.keys()}),
        )
        self.n = number
        self.clock = AudioClock()
        self._odd = b""
        self.vad = AudioTimeVad(DEFAULT_THRESHOLD, DEFAULT_SILENCE_MS)
        self.scanner = StreamScanner(turns.index)
        self.matches: list[Match] = []
        self.server_vad = True
        self.segment: _Segment | None = None
        self._held: VadEdge | None = None  # a speech start whose audio is still being told apart (`on_speech_start`)
        self.current: tuple[int, float, float] | None = None  # turn, its WAV start, its speech end (stream ms)
        self.deferred: tuple[TurnTruth, TurnFault | None] | None = None
        self._words_said: dict[int, int] = {}
        self._manual_start: float | None = None
        self._manual_end: float | None = None
        self._last_commit_samples = 0
        self.pending: tuple[TurnTruth, TurnFault | None, float | None] | None = None
        self.greeted = False
        self.expired = False
        self._send_lock = asyncio.Lock()
        self.config: dict[str, Any] = {
            "type": "realtime",
            "object": "realtime.session",
            "id": new_id("sess"),
            "model": self.rec.model or "gpt-realtime",
            "output_modalities": ["audio"],
            "instructions": "",
            "tools": [],
            "tool_choice": "auto",
            "max_output_tokens": "inf",
            "tracing": None,
            "prompt": None,
            # informational, as the API's: wall-clock epoch; the expiry fault itself counts AUDIO time
            "expires_at": int(time.time() + (turns.faults.expire_s or 3600)),
            "include": None,
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": RATE},
                    "transcription": None,
                    "noise_reduction": None,
                    "turn_detection": {
                        "type": "server_vad",
                        "threshold": DEFAULT_THRESHOLD,
                        "prefix_padding_ms": 300,
                        "silence_duration_ms": int(DEFAULT_SILENCE_MS),
                        "idle_timeout_ms": None,
                        "create_response": True,
                        "interrupt_response": True,
                    },
                },
                "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy", "speed": 1.0},
            },
        }
        self.conversation = Conversation(self.config["id"])
        self.replies = Replies(self, session=number, clock=self.clock, conversation=self.conversation,
                               rec=self.rec, turns=turns, settings=settings)
        self.cues = CueHearing(self)  # the benchmark's duplex cues: told apart, stopped for or not

    # -- the socket (the reply producer's `Outbox`) --------------------------------------

    async def send(self, type_: str, **fields: object) -> None:
        msg = json.dumps({"event_id": new_id("event"), "type": type_, **fields})
        async with self._send_lock:
            await self.ws.send(msg)

    def abort(self) -> None:
        self.ws.transport.abort()

    async def error(self, code: str, message: str, *, etype: str = "invalid_request_error",
                    param: str | None = None, event_id: str | None = None) -> None:
        err = {"type": etype, "code": code, "message": message, "param": param, "event_id": event_id}
        self.rec.errors_sent.append(err)
        await self.send("error", error=err)

    def cancel_tasks(self) -> None:
        self.replies.stop()
        self.cues.stop()
        self.clock.cancel()

    async def run(self) -> None:
        try:
            await self.send("session.created", session=self.config)
            async for raw in self.ws:
                await self.on_message(raw)
                await self.replies.hold_input()
        except ConnectionClosed:
            pass
        finally:
            self.cancel_tasks()
            self.replies.session_closed()
            self.rec.closed = True
            self.rec.audio_ms = self.clock.ms
            if self.rec.close_code is None:
                rcvd = self.ws.protocol.close_rcvd
                self.rec.close_code = rcvd.code if rcvd else (self.ws.close_code or 1006)
                who = "client closed" if rcvd else "connection lost"
                self.rec.close_reason = f"{who} ({self.rec.close_code}{': ' + rcvd.reason if rcvd and rcvd.reason else ''})"

    async def on_message(self, raw: str | bytes) -> None:
        try:
            evt = json.loads(raw)
            etype = evt["type"]
            if not isinstance(etype, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self.log.append(ClientEventRecord(session=self.n, audio_ms=self.clock.ms, type="<invalid>",
                                          payload={"raw": str(raw)[:200]}))
            await self.error("invalid_json", "The server could not parse the event as JSON with a 'type'.")
            return
        if etype == "input_audio_buffer.append":
            audio = base64.b64decode(evt.get("audio") or "", validate=False)
            last = self.log[-1] if self.log else None
            if last is not None and last.type == etype and last.session == self.n:  # one record per stretch of
                last.payload["bytes"] += len(audio)  # appends: one each (50 a second) grew a 75-turn run ~1.5 MB a turn
            else:
                self.log.append(ClientEventRecord(session=self.n, audio_ms=self.clock.ms, type=etype,
                                                  payload={"bytes": len(audio)}))
            self.rec.received.add(audio, RATE)  # what the model heard, sample for sample (bounded)
            await self.on_audio(audio)
            return
        self.log.append(ClientEventRecord(session=self.n, audio_ms=self.clock.ms, type=etype, payload=evt))
        name = self._handlers.get(etype)
        if name is None:
            await self.error("invalid_value", f"Invalid value: '{etype}'. Unknown client event type.",
                             param="type", event_id=evt.get("event_id"))
            return
        try:
            await getattr(self, name)(evt)
        except ConnectionClosed:
            raise
        except Exception as e:  # a simulator bug must show on the wire, not kill the session silently
            await self.error("simulator_error", f"{type(e).__name__}: {e}", etype="server_error",
                             event_id=evt.get("event_id"))

    # -- audio in ------------------------------------------------------------------------

    async def on_audio(self, audio: bytes) -> None:
        if self.expired:
            return
        audio = self._odd + audio
        if len(audio) % 2:
            self._odd, audio = audio[-1:], audio[:-1]
        else:
            self._odd = b""
        pcm = np.frombuffer(audio, dtype="<i2")
        if pcm.size == 0:
            return
        found = self.scanner.feed(pcm)
        self.matches.extend(found)
        self.cues.feed(pcm)
        if found and self.segment is not None and self.segment.truth is None and self.segment.duplex is None:
            await self._heard_at_start(self.segment)  # an onset that took more audio to tell apart
        edges = self.vad.feed(pcm)
        self.clock.add(pcm.size)
        self.rec.audio_ms = self.clock.ms
        if self._held is not None and not self.cues.undecided(self._held.at_ms):
            await self.on_speech_start(self._held, decided=True)
        for edge in edges:
            if self.server_vad:
                await (self.on_speech_start(edge) if edge.kind == "start" else self.on_speech_stop(edge))
            elif edge.kind == "start":
                self._manual_start = edge.at_ms if self._manual_start is None else self._manual_start
            elif self._manual_start is not None:
                # a stop edge comes a silence after the speech: a client that committed at the
                # speech end already closed that stretch, and its late stop belongs to no other
                self._manual_end = edge.at_ms
        if self.clock.wake():
            await asyncio.sleep(0)  # let woken responses stamp their audio time before more arrives
        exp = self.turns.faults.expire_s
        if exp is not None and self.clock.ms >= exp * 1000.0:
            await self.expire(exp)

    async def expire(self, seconds: float) -> None:
        self.expired = True
        n: float
        if seconds % 60 == 0:
            n, unit = int(seconds // 60), "minute"
        else:
            n, unit = (int(seconds) if float(seconds).is_integer() else seconds), "second"
        msg = f"Your session hit the maximum duration of {n} {unit}{'' if n == 1 else 's'}."
        self.rec.close_code, self.rec.close_reason = 1001, f"session_expired: {msg}"
        self.cancel_tasks()
        try:
            await self.error("session_expired", msg)
            await self.ws.close(1001, msg)
        except ConnectionClosed:
            pass

    # -- turn recognition ----------------------------------------------------------------

    def _identify(self, seg: _Segment, *, final: bool) -> TurnTruth | None:
        """Which turn this stretch of speech belongs to (None while it cannot be told yet)."""
        if seg.truth is not None:
            return seg.truth
        hi = seg.end_ms if seg.end_ms is not None else self.clock.ms
        cands = [m for m in self.matches if seg.start_ms - MATCH_SLACK_MS <= m.onset_ms <= hi]
        turn: int | None = None
        how, offset, first = "fingerprint", None, True
        if cands:
            onset = min(m.onset_ms for m in cands)
            at = [m for m in cands if m.onset_ms == onset]
            at.sort(key=lambda m: (self.turns.answered(m.turn_index), self.turns.position(m.turn_index)))
            m = at[0]
            turn, offset, first = m.turn_index, m.offset_ms, m.first
            wav_start = m.onset_ms - m.offset_ms
            end = self.turns.index.speech_end_ms(turn, self.vad.level)
            self.current = (turn, wav_start, wav_start + (end if end is not None else m.offset_ms))
        elif self.current is not None and seg.start_ms < self.current[2]:
            # no onset matched, but we are still inside the WAV of the turn being heard
            turn, first = self.current[0], False
            offset = seg.start_ms - self.current[1]
        elif final:
            turn = self.turns.next_unanswered()
            how = "fallback"
            if turn is None:
                return None
            self.current = None
            self.turns.fallbacks.append({"session": self.n, "turn_index": turn, "speech_start_ms": seg.start_ms,
                                     "speech_end_ms": seg.end_ms})
        else:
            return None
        seg.continuation = not first and how != "fallback"
        if seg.continuation and self.deferred is not None and self.deferred[0].turn_index == turn:
            seg.truth, seg.fault = self.deferred  # the same attempt goes on after a pause
            seg.truth.notes.append(f"speech resumed at {seg.start_ms:.0f} ms after a pause")
            return seg.truth
        if not self.turns.attempts(turn) or not seg.continuation:
            if self.deferred is not None:
                self.deferred[0].notes.append("the rest of the turn never came")
                self.deferred = None
            self.replies.abandon_calls(turn)
            attempt = self.turns.begin_attempt(turn)
            fault = self.turns.faults.fault_for(turn, attempt) or self.settings.stall(turn, attempt)
            seg.continuation = False
        else:  # a later stretch of a turn whose reply already went out
            attempt = self.turns.attempts(turn)
            fault = None
        truth = TurnTruth(
            turn_index=turn, session=self.n, attempt=attempt, identified_by=how, match_offset_ms=offset,
            speech_start_ms=seg.start_ms, speech_started_event_ms=seg.confirm_ms,
            fault=str(fault) if fault else None, voice=self.settings.voice,
        )
        if seg.continuation:
            truth.notes.append("continuation of a turn already answered")
        seg.truth, seg.fault = truth, fault
        self.turns.record_truth(truth)
        if not seg.continuation:
            self.replies.prepare(turn)
        return truth

    async def on_speech_start(self, edge: VadEdge, decided: bool = False) -> None:
        """Speech began: a turn's (or a duplex cue's, once its fingerprint says which: until then
        the start is held, at most the 250 ms a shared opening takes to tell apart)."""
        self._held = None
        if not decided and self.cues.undecided(edge.at_ms):
            self._held = edge
            return
        seg = _Segment(start_ms=edge.at_ms, confirm_ms=edge.detected_ms, item_id=new_id("item"))
        self.segment = seg
        seg.duplex = self.cues.heard(edge.at_ms)
        if seg.duplex is not None:  # a cue: its behaviour says when (and whether) the reply stops
            self.cues.started(seg)
            return
        self.pending = None  # a turn left unanswered is superseded by new speech
        await self.send("input_audio_buffer.speech_started", audio_start_ms=int(round(edge.at_ms)),
                        item_id=seg.item_id)
        await self.replies.interrupt("turn_detected")
        await self._heard_at_start(seg)

    async def _heard_at_start(self, seg: _Segment) -> None:
        """The turn of speech under way, as soon as it can be told (at its start, or once its
        onset's audio told it apart): a barge_in fault replies while the user still speaks."""
        truth = self._identify(seg, final=False)
        if truth is not None and seg.fault is not None and seg.fault.kind == "barge_in" and not seg.responded:
            seg.responded = True
            self.replies.barge_in(truth, seg.fault, seg.start_ms)

    async def commit_user_item(self, item_id: str) -> None:
        await self.send("input_audio_buffer.committed", previous_item_id=self.conversation.last_item_id, item_id=item_id)
        item = {"id": item_id, "object": "realtime.item", "type": "message", "status": "completed",
                "role": "user", "content": [{"type": "input_audio", "transcript": None}]}
        self.conversation.items[item_id] = item
        await self.send("conversation.item.added", previous_item_id=self.conversation.last_item_id, item=item)
        await self.send("conversation.item.done", previous_item_id=self.conversation.last_item_id, item=item)
        self.conversation.last_item_id = item_id

    async def _transcribe(self, item_id: str, truth: TurnTruth | None, upto_ms: float | None) -> None:
        """The turn's scripted input; split by time when the user paused mid-turn."""
        text = ""
        if truth is not None and truth.turn_index >= 0:
            words = self.turns.benchmark.turn(truth.turn_index).input.split(" ")
            n = len(words)
            cur = self.current
            if upto_ms is not None and cur is not None and cur[0] == truth.turn_index and upto_ms < cur[2] - 150:
                n = max(1, round(len(words) * (upto_ms - cur[1]) / max(1.0, cur[2] - cur[1])))
            done = min(self._words_said.get(id(truth), 0), n - 1)
            text = " ".join(words[done:n])
            self._words_said[id(truth)] = n
        self.conversation.items[item_id]["content"][0]["transcript"] = text
        await self.send("conversation.item.input_audio_transcription.completed", item_id=item_id,
                        content_index=0, transcript=text,
                        usage={"type": "tokens", "total_tokens": len(text) // 4 + 1,
                               "input_tokens": 1, "output_tokens": len(text) // 4})

    async def on_speech_stop(self, edge: VadEdge) -> None:
        if self._held is not None:  # (a stretch too short to tell apart)
            await self.on_speech_start(self._held, decided=True)
        seg = self.segment
        if seg is None:
            return
        self.segment = None
        seg.end_ms, seg.stopped_ms = edge.at_ms, edge.detected_ms
        if seg.duplex is not None:
            await self.cues.stopped(seg)
            return
        await self.send("input_audio_buffer.speech_stopped", audio_end_ms=int(round(edge.detected_ms)),
                        item_id=seg.item_id)
        await self.commit_user_item(seg.item_id)
        truth = self._identify(seg, final=True)
        if truth is not None:
            truth.speech_end_ms, truth.speech_stopped_ms = seg.end_ms, seg.stopped_ms
        await self._transcribe(seg.item_id, truth, seg.end_ms)
        if truth is None:
            return
        cur = self.current
        if (self.settings.wait_for_turn_end and cur is not None and cur[0] == truth.turn_index
                and seg.end_ms < cur[2] - 150):
            # The oracle knows the WAV goes on after this pause: hold the reply for the rest.
            self.deferred = (truth, seg.fault)
            truth.notes.append(f"paused mid-turn at {seg.end_ms:.0f} ms; reply held")
            return
        self.deferred = None
        if seg.responded or truth.response_ids or truth.status != "pending" and truth.status != "no_response":
            return
        if seg.fault is not None and seg.fault.kind == "no_response" or truth.status == "no_response":
            truth.status = "no_response"
            self.pending = (truth, None, seg.stopped_ms)
            return
        self.replies.answer(truth, seg.fault, trigger_ms=seg.stopped_ms, stopped_ms=seg.stopped_ms)

    # -- the input audio buffer, committed by the client ---------------------------------

    async def on_commit(self, evt: dict[str, Any]) -> None:
        if self.clock.samples <= self._last_commit_samples:
            await self.error("input_audio_buffer_commit_empty",
                             "Error committing input audio buffer: buffer is empty.",
                             event_id=evt.get("event_id"))
            return
        start_ms = self._last_commit_samples * 1000.0 / RATE
        self._last_commit_samples = self.clock.samples
        sp_start = self._manual_start if self._manual_start is not None else start_ms
        seg = _Segment(start_ms=sp_start, confirm_ms=sp_start, item_id=new_id("item"),
                       end_ms=self._manual_end if self._manual_end is not None else self.clock.ms,
                       stopped_ms=self.clock.ms)
        self._manual_start = self._manual_end = None
        await self.commit_user_item(seg.item_id)
        truth = self._identify(seg, final=True)
        if truth is not None:
            truth.identified_by += "+manual_commit"
            truth.speech_end_ms, truth.speech_stopped_ms = seg.end_ms, seg.stopped_ms
            fault = seg.fault
            if fault is not None and fault.kind == "no_response":
                truth.status = "no_response"
                fault = None
            self.pending = (truth, fault, seg.stopped_ms)
        await self._transcribe(seg.item_id, truth, None)

    async def on_clear(self, evt: dict[str, Any]) -> None:
        self._last_commit_samples = self.clock.samples
        self._manual_start = self._manual_end = None
        await self.send("input_audio_buffer.cleared")

    #: client event type → its handler's name (`client_events.ClientEvents` holds most of them)
    _handlers: dict[str, str] = {
        "session.update": "on_session_update",
        "conversation.item.create": "on_item_create",
        "conversation.item.truncate": "on_truncate",
        "conversation.item.delete": "on_item_delete",
        "conversation.item.retrieve": "on_item_retrieve",
        "input_audio_buffer.commit": "on_commit",
        "input_audio_buffer.clear": "on_clear",
        "response.create": "on_response_create",
        "response.cancel": "on_response_cancel",
    }
