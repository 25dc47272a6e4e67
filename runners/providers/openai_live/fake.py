"""A local OpenAI Live API server (full duplex, `gpt-live-1`) for `OpenAILiveLLMService`.

Wire (JSON over `wss://…/v1/live/sessions`, `Authorization: Bearer`), as Pipecat 1.14's
service and event models (`pipecat/services/openai/live/`) speak it:
- client: `session.start` (first, once: `model`, `instructions`, `audio`, `delegation`
  {type client | responses, responses {model, instructions, tools, tool_choice …}}, `input` ≤ 128
  text items, `store`), `session.input_audio.append` (PCM16, 24 kHz unless `audio.format` says
  16 kHz; never committed), `session.{instructions,thinking,commentary}.append` (`delegation_id`
  always present, null for the session; ≤ 500 tokens), `session.update` (delegation only, same
  mode), `response.item.create` (`function_call_output`) and `response.create` (Responses
  delegation only, every output of the pending response queued first), `session.close`;
- server: `session.started`, `session.updated`, `session.output_audio.delta` (continuously, a
  frame per 200 ms, silence included: `live_stream.py`), `session.{input,output}_transcript.delta`
  (frame-aligned fragments with `start_ms`/`end_ms`), `session.delegation.created` {offset_ms,
  delegation {id, target, response_id}}, `response.event` (a Responses lifecycle event wrapped
  with its `delegation_id`; snapshots reduced: `output` empty even at `response.completed`),
  `session.*.appended` (start_ms/end_ms), `session.usage.updated` (cumulative seconds),
  `session.closed`, `error`.

What it asserts of the session (each a refusal the client sees as an `error` event, recorded in
`ConnectionRecord.errors`): `session.start` first and once, a live model, a known audio format,
no field the strict schema lacks (`turn_detection`, `tools` at the top, …), no Realtime-API
event (`input_audio_buffer.commit`, `conversation.item.create`, `response.cancel` — there is no
commit and no client-triggered answer), audio only after `session.started`, Responses-only events
only under Responses delegation, context appends with their `delegation_id` and within 500 tokens.

The model itself (what it hears, says and delegates) is `fake_session.py`; what the API refuses
of a client, `fake_wire.py`; its continuous output, `live_stream.py`; the Responses API its
delegations run on, `responses_fake.py`.
"""

from __future__ import annotations

import json
from typing import Any, Unpack

import aiohttp

from arena_tui.spine.faults import DuplexBehaviour
from runners.fakes.hearing import Hearing
from runners.fakes.local import LocalFake
from runners.fakes.script import Script
from runners.fakes.server import ServerOptions
from runners.fakes.timing import ENVELOPE
from runners.providers.openai_live.fake_session import EARLY_START, FILLER, LiveServer, LiveSession
from runners.providers.openai_live.fake_wire import PATH
from runners.providers.openai_live.responses_fake import ResponsesFake

#: a duplex model's own manners: it yields to an interruption about a third of a second in, talks
#: through backchannels and leaves speech not meant for it alone (what gpt-live-1 is said to do;
#: only a real session can show what it does)
LIVE_DUPLEX = DuplexBehaviour(yield_after_ms=350.0, backchannels="ignore", side_speech="ignore")
#: the shared envelope (first audio 0.5-1.4 s after the user, 1 in 10 late), streamed in real time
#: (the protocol's continuous stream), a fifth of replies started early, 3 in 10 delegations with a filler
REAL_TIMING = ENVELOPE.replace(stream_rate=1.0, terminal_lag_ms=(0.0, 0.0), quirks={EARLY_START: 0.2, FILLER: 0.3},
                               duplex=LIVE_DUPLEX)


class OpenAILiveFake(LiveServer):
    """The Live API on 127.0.0.1, with the Responses API its delegations are run on (`backend`)."""

    PATH = PATH
    REAL_TIMING = REAL_TIMING
    session = LiveSession

    def __init__(self, script: Script | None = None, *, hearing: Hearing | None = None, client_backend: LocalFake | None = None,
                 **options: Unpack[ServerOptions]) -> None:
        """`hearing`: the benchmark's WAVs, to know a turn by its audio (quirk `early_start`);
        `client_backend`: a client delegation's text model fake (its runner talks to it), started
        and stopped with this one."""
        super().__init__(script, **options)
        self.hearing = hearing
        self.backend = ResponsesFake(self.script)
        self.client_backend = client_backend
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> OpenAILiveFake:
        await self.backend.start()
        if self.client_backend is not None:
            await self.client_backend.start()
        self._http = aiohttp.ClientSession()
        await super().start()
        return self

    async def stop(self) -> None:
        await super().stop()
        if self._http is not None:
            await self._http.close()
            self._http = None
        await self.backend.stop()
        if self.client_backend is not None:
            await self.client_backend.stop()

    async def ask_backend(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One streamed request to the Responses fake, its events in order (an error as one event)."""
        assert self._http is not None
        headers = {"Authorization": "Bearer live-fake-internal"}  # OpenAI's own call: no client key travels
        async with self._http.post(f"{self.backend.base_url}/responses", json=body, headers=headers) as resp:
            if resp.status != 200:
                return [{"type": "error", "status": resp.status, **(await resp.json())}]
            events = []
            async for line in resp.content:
                if line.startswith(b"data: "):
                    events.append(json.loads(line[6:]))
            return events

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the backend got, once each and in order: the function outputs the client
        sent back (Responses delegation), or those its client backend's model received."""
        if self.client_backend is not None:
            return self.client_backend.tool_results()
        return [r for c in self.connections for r in c.tool_results]
