"""The reply producer: what one session says (speech, function calls, empty, cancelled) on the wire.

The session (`connection.py`) hears the client and decides WHEN a turn gets its answer; this
decides WHAT the answer is and streams it: the turn's calls first when it expects any, its
speech after their outputs, and each fault's wire behaviour. It sees its session only through
what it is handed: an `Outbox` (send an event, drop the socket), the session's `AudioClock`,
`Conversation` and `SessionRecord`, and the simulator's shared `TurnBook`.

Everything that costs wall-clock time (synthesis) happens before a reply is `armed`; after that
it only waits on AUDIO time, so its ground truth does not depend on --speed. A turn's speech is
made as soon as the turn is recognised (`prepare`), so it is usually ready when due.

With a timing profile (`ReplySettings.timing`, a `--fake` run's `fake_timing="real"`), a turn's
plan (`runners/fakes/timing.py`, keyed by turn index; -1 the greeting) replaces the fixed reply
delay: calls and first audio that long after the trigger, audio deltas in bursts slower than
real time, and `response.done` the plan's lag after `response.output_audio.done`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any

from websockets.exceptions import ConnectionClosed

from arena_tui.spine.benchmark import ExpectedCall

from . import voice as voice_mod
from .clock import AudioClock
from .conversation import Conversation
from arena_tui.spine.faults import TurnFault
from .protocol import RATE, new_id
from .records import ResponseRecord, SessionRecord, SimCall, TurnTruth
from .reply_state import Active, Outbox, Playing, ReplySettings, ToolWait
from .reply_wire import Messages
from .turns import TurnBook

TOOL_OUTPUT_GRACE_MS = 2000.0  # audio time a post-call reply waits for outputs still missing


class Replies(Messages):
    """One session's reply producer: at most one response in progress, and a turn waiting on its tools."""

    def __init__(self, out: Outbox, *, session: int, clock: AudioClock, conversation: Conversation,
                 rec: SessionRecord, turns: TurnBook, settings: ReplySettings) -> None:
        self.out, self.n, self.clock, self.conv = out, session, clock, conversation
        self.rec, self.turns, self.settings = rec, turns, settings
        self.active: Active | None = None
        self.playing: Playing | None = None  # the last spoken reply, as the client plays it
        self.tool_wait: ToolWait | None = None
        self._item_truth: dict[str, TurnTruth] = {}  # reply item -> its turn (for truncations)
        self._outputs_changed = asyncio.Event()
        self._input_tokens_seen = 0
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- what the session asks

    @property
    def active_id(self) -> str | None:
        """The response in progress, if any."""
        return self.active.record.response_id if self.active is not None else None

    async def hold_input(self) -> None:
        """Let a reply being prepared finish its wall-clock work before more input (audio time) arrives."""
        active = self.active
        if active is None:
            return
        if not active.armed.is_set():
            await active.armed.wait()
        else:  # a flood of input must not starve a reply being sent
            await asyncio.sleep(0)

    def prepare(self, turn_index: int) -> None:
        """Make the turn's spoken reply now, while its user still speaks, as a real model composes
        while it listens: made only once it is due, the reply holds the session's input for the
        synthesis time, and the client hears it that much later than the turn's truth says."""
        task = asyncio.ensure_future(self._speech(voice_mod.reply_text(self.turns.benchmark, turn_index)))
        self._tasks.add(task)
        task.add_done_callback(self._prepared)

    def _speech(self, text: str) -> Awaitable[tuple[bytes, str]]:
        """`text` in this server's voice, made in a thread (once per process: `voice` memoises it)."""
        return asyncio.to_thread(voice_mod.synthesize, text, self.settings.voice)

    def _prepared(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a failure is met again, and reported, when the reply is made

    def start(self, truth: TurnTruth | None, fault: TurnFault | None, *, due_ms: float | None,
              stopped_ms: float | None, after_tools: list[str] | None = None) -> None:
        """Begin a response: for `truth`'s turn (-1: the greeting), or an empty one for None."""
        if truth is None:
            kind = "none"
        elif truth.turn_index < 0:
            kind = "greeting"
        else:
            kind = "speech"
        rid = new_id("resp")
        record = ResponseRecord(session=self.n, response_id=rid, turn_index=truth.turn_index if truth else None,
                                kind=kind, audio_ms_created=self.clock.ms)
        self.turns.responses.append(record)
        if truth is not None:
            truth.response_ids.append(rid)
            if due_ms is not None:
                truth.response_due_ms = due_ms
        active = Active(record=record, truth=truth)
        self.active = active
        task: asyncio.Task[None] = asyncio.ensure_future(self._respond(active, fault, due_ms, stopped_ms, after_tools))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        active.task = task

    def answer(self, truth: TurnTruth, fault: TurnFault | None, *, trigger_ms: float,
               stopped_ms: float | None) -> None:
        """Answer a turn the usual delay (or a slow_first_audio fault's) after `trigger_ms`."""
        delay = self.settings.first_delay_ms(truth.turn_index)
        if fault is not None and fault.kind == "slow_first_audio":
            delay = float(fault.value or 0.0)
        truth.injected_delay_ms = delay
        self.start(truth, fault, due_ms=trigger_ms + delay, stopped_ms=stopped_ms)

    def barge_in(self, truth: TurnTruth, fault: TurnFault, speech_start_ms: float) -> None:
        """The barge_in fault: start replying while the user still speaks."""
        delay = float(fault.value or 500.0)
        truth.injected_delay_ms = delay
        self.start(truth, fault, due_ms=speech_start_ms + delay, stopped_ms=None)

    def resume_after_calls(self) -> bool:
        """A response.create after a turn's calls: its speech goes out now (False: no turn waits)."""
        tw, self.tool_wait = self.tool_wait, None
        if tw is None:
            return False
        self.start(tw.truth, tw.fault, due_ms=None, stopped_ms=tw.stopped_ms, after_tools=tw.call_ids)
        return True

    def audible_at(self, t_ms: float) -> bool:
        """A spoken reply was playing at the client at `t_ms` (audio time)."""
        return self.playing is not None and self.playing.audible(t_ms)

    def stop_playing(self, t_ms: float) -> float | None:
        """The client is told to stop (it flushes what it holds): how long before `t_ms` the
        reply's speech had gone quiet, or None when none was playing."""
        playing, self.playing = self.playing, None
        if playing is None or not playing.audible(t_ms):
            return None
        return playing.quiet_before(t_ms)

    def reanswer(self, truth: TurnTruth, trigger_ms: float) -> None:
        """Speak `truth`'s turn again (its golden answer, no calls), the usual delay after
        `trigger_ms`: the turn's user spoke over the reply and was heard (a duplex cue)."""
        self.start(truth, None, due_ms=trigger_ms + self.settings.first_delay_ms(truth.turn_index),
                   stopped_ms=trigger_ms, after_tools=[])

    def abandon_calls(self, turn_index: int) -> None:
        """Another turn began: a turn still waiting on its tool outputs gets no speech."""
        if self.tool_wait is not None and self.tool_wait.truth.turn_index != turn_index:
            self.tool_wait.truth.notes.append("tool outputs never came before the next turn")
            self.tool_wait = None

    def outputs_arrived(self) -> None:
        """A function_call_output came in (`rec.tool_outputs`): a reply waiting on it looks again."""
        self._outputs_changed.set()

    def note_truncated(self, item_id: str, audio_end_ms: object) -> None:
        truth = self._item_truth.get(item_id)
        if truth is not None:
            truth.notes.append(f"client truncated reply at {audio_end_ms} ms")

    async def interrupt(self, reason: str) -> None:
        """New user speech cancels a spoken (or empty) reply; calls already sent stand."""
        if self.active is not None and self.active.record.kind in ("speech", "greeting", "empty"):
            await self.cancel(reason)

    async def cancel(self, reason: str) -> None:
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
        await self.out.send("response.done", response=self._response_obj(
            active, "cancelled", {"type": "cancelled", "reason": reason}))

    def stop(self) -> None:
        """The session ends: stop every reply task (nothing more goes out)."""
        for t in list(self._tasks):
            t.cancel()

    def session_closed(self) -> None:
        """The socket closed under a reply still pending: its turn was disconnected."""
        if self.active is not None and self.active.truth is not None and self.active.truth.status == "pending":
            self.active.truth.status = "disconnected"

    # -- one response on the wire

    def _response_obj(self, active: Active, status: str, details: dict[str, Any] | None = None,
                      usage: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "object": "realtime.response",
            "id": active.record.response_id,
            "status": status,
            "status_details": details,
            "output": active.outputs,
            "conversation_id": self.conv.id,
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
        in_audio = int(self.clock.ms / 100)
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
        active.record.audio_ms_done = self.clock.ms
        await self.out.send("response.done", response=self._response_obj(
            active, status, details, self._usage(text, active.sent_audio_bytes)))

    async def _respond(self, active: Active, fault: TurnFault | None, due_ms: float | None,
                       stopped_ms: float | None, after_tools: list[str] | None) -> None:
        try:
            await self._respond_inner(active, fault, due_ms, stopped_ms, after_tools)
        except (ConnectionClosed, asyncio.CancelledError) as e:
            if active.truth is not None and active.truth.status == "pending" and self.rec.closed:
                active.truth.status = "disconnected"
            if isinstance(e, asyncio.CancelledError):
                raise
            # the client went away mid-reply: recorded above; nobody awaits this task, so raising
            # would only print "Task exception was never retrieved" on the user's terminal
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
        await self.out.send("response.created", response=self._response_obj(active, "in_progress"))
        if truth is None:  # nothing to answer: an empty, completed response
            await self._finish(active, "completed", None, "")
            return
        calls = self.turns.plan_calls(truth.turn_index, fault) if after_tools is None and truth.turn_index >= 0 else []
        if calls:
            active.armed.set()
            if due_ms is not None:
                await self.clock.until(due_ms)
            await self._send_calls(active, calls, fault, stopped_ms)
            return
        if fault is not None and fault.kind == "empty_response":
            active.armed.set()
            if due_ms is not None:
                await self.clock.until(due_ms)
            await self._send_empty(active, fault)
            return
        text = voice_mod.reply_text(self.turns.benchmark, truth.turn_index)
        clip, used = await self._speech(text)
        active.armed.set()
        if after_tools:
            await self._await_outputs(truth, after_tools)
            now = self.clock.ms
            truth.tool_roundtrip_ms = now - (truth.calls_sent_ms if truth.calls_sent_ms is not None else now)
            due_ms = now + self.settings.first_delay_ms(truth.turn_index)
            if fault is not None and fault.kind == "slow_first_audio" and stopped_ms is not None:
                due_ms = max(due_ms, stopped_ms + float(fault.value or 0.0))
            if stopped_ms is not None:  # what we waited on purpose: all but the client's round trip
                truth.injected_delay_ms = due_ms - stopped_ms - truth.tool_roundtrip_ms
            truth.response_due_ms = due_ms
        await self._send_speech(active, fault, stopped_ms, due_ms, text, clip, used)

    async def _await_outputs(self, truth: TurnTruth, call_ids: list[str]) -> None:
        """Wait for every output the calls are owed (a client may ask before all are in), but
        not forever: after TOOL_OUTPUT_GRACE_MS of audio the reply goes out with what it has."""
        limit = self.clock.ms + TOOL_OUTPUT_GRACE_MS
        while True:
            missing = [cid for cid in call_ids if cid not in self.rec.tool_outputs]
            if not missing:
                return
            if self.clock.ms >= limit:
                truth.notes.append(f"spoke without the outputs for {', '.join(missing)}")
                return
            self._outputs_changed.clear()
            waits = {asyncio.ensure_future(self._outputs_changed.wait()),
                     asyncio.ensure_future(self.clock.until(limit))}
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
            self.conv.items[item_id] = item
            await self.out.send("response.output_item.added", response_id=rid, output_index=i, item=dict(item))
            await self.out.send("conversation.item.added", previous_item_id=self.conv.last_item_id, item=dict(item))
            await self.out.send("response.function_call_arguments.delta", response_id=rid, item_id=item_id,
                            output_index=i, call_id=call_id, delta=args)
            await self.out.send("response.function_call_arguments.done", response_id=rid, item_id=item_id,
                            output_index=i, call_id=call_id, name=call.name, arguments=args)
            item.update(status="completed", arguments=args)
            active.outputs.append(dict(item))
            await self.out.send("response.output_item.done", response_id=rid, output_index=i, item=dict(item))
            await self.out.send("conversation.item.done", previous_item_id=self.conv.last_item_id, item=dict(item))
            self.conv.last_item_id = item_id
        truth.calls_sent_ms = self.clock.ms
        self.tool_wait = ToolWait(truth=truth, fault=fault, call_ids=ids, stopped_ms=stopped_ms)
        self.turns.mark_answered(truth.turn_index)
        truth.notes.append(f"called {', '.join(c.name for _, c, _ in calls)}; speech follows the outputs")
        # the calls are the response's output, text tokens as the API counts them
        await self._finish(active, "completed", None, "".join(f"{o['name']}{o['arguments']}" for o in active.outputs))
