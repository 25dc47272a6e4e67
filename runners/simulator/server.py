"""A local OpenAI Realtime (GA) websocket server driven by a benchmark: the no-key demo and test peer.

It hears the user through its own audio-time VAD, recognises which turn is being spoken
from the audio itself (fingerprints of the benchmark WAVs), answers with the turn's golden
answer as speech and the turn's expected function calls, and misbehaves on cue (faults).
What it did is kept as ground truth in audio time, so the engine's own measurements can be
checked against it. Pipecat's `OpenAIRealtimeLLMService` talks to it unmodified.

This module holds the listener, the handshake and the records tests read. The rest, by
responsibility: `turns.py` the turn state all sessions share; `connection.py` one session
(client events, VAD, which turn, when to answer); `replies.py` what a session says;
`clock.py` a session's audio time; `conversation.py` its items.
"""

from __future__ import annotations

import asyncio
import time
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.conditions import CLEAN, Condition
from runners.fakes.timing import TimingProfile

from . import voice as voice_mod
from .connection import Connection
from arena_tui.spine.faults import FaultPlan, parse_faults
from .fingerprint import FingerprintIndex
from .protocol import PATH
from .records import ClientEventRecord, DuplexTruth, ResponseRecord, SessionRecord, TurnTruth
from .reply_state import ReplySettings
from .turns import TurnBook


class SimulatorServer:
    """The simulator. `async with SimulatorServer(bench) as sim: url = sim.base_url`.

    A service that speaks this protocol at another address with another handshake (Azure's v1
    surface) is a subclass with its own `path` and `handshake_problem`."""

    #: where the protocol is served
    path = PATH

    def __init__(
        self,
        benchmark: Benchmark,
        *,
        policy: str = "oracle",
        faults: FaultPlan | str | None = None,
        voice: str = "auto",
        host: str = "127.0.0.1",
        port: int = 0,
        response_delay_ms: float = 300.0,
        leading_silence_ms: float = 150.0,
        chunk_ms: float = 200.0,
        wait_for_turn_end: bool = True,
        timing: TimingProfile | None = None,
        condition: Condition = CLEAN,
        seed: int = 0,
    ) -> None:
        """`condition`, `seed`: the acoustic condition the run's user audio is under (`RunSettings`):
        the simulator expects to hear each turn's WAV so (`TurnBook.build_index`)."""
        if policy != "oracle":
            raise ValueError(f"unknown simulator policy {policy!r}; available: oracle")
        self.benchmark = benchmark
        self.policy = policy
        self.faults: FaultPlan = parse_faults(faults) if isinstance(faults, str) or faults is None else faults
        self.settings = ReplySettings(
            voice=voice_mod.resolve_voice(voice),
            response_delay_ms=float(response_delay_ms),
            leading_silence_ms=float(leading_silence_ms),
            chunk_ms=float(chunk_ms),
            # The oracle does not answer a recognised turn at a mid-turn pause (the VAD events still
            # go out as the real server_vad would send them); False answers at every speech stop.
            wait_for_turn_end=wait_for_turn_end,
            timing=timing,  # None: the fixed response_delay_ms, all audio at once
        )
        self.host, self.port = host, port
        self.turns = TurnBook(benchmark, self.faults, condition, seed)
        self.log: list[ClientEventRecord] = []
        self.sessions: list[SessionRecord] = []
        self.rejected: list[dict[str, Any]] = []  # handshakes refused (wrong path, no auth, `refuse`)
        #: (HTTP status, body): answer every websocket upgrade with it, as the real service does a
        #: key it does not accept (401) or in an outage (5xx); None: upgrades are checked as above
        self.refuse: tuple[int, str] | None = None
        self._server: Server | None = None
        self._conns: set[Connection] = set()

    # -- what it did (shared by all sessions; see records.py)

    @property
    def voice(self) -> str:
        """"espeak" | "tone": what the reply audio really is."""
        return self.settings.voice

    @property
    def index(self) -> FingerprintIndex:
        return self.turns.index

    @property
    def truth(self) -> dict[int, TurnTruth]:
        """The latest attempt per turn."""
        return self.turns.truth

    @property
    def truth_log(self) -> list[TurnTruth]:
        """Every attempt, in order."""
        return self.turns.truth_log

    @property
    def duplex_truth(self) -> list[DuplexTruth]:
        """Every duplex cue heard, in order, and what was done about it."""
        return self.turns.duplex_log

    @property
    def responses(self) -> list[ResponseRecord]:
        return self.turns.responses

    @property
    def fallbacks(self) -> list[dict[str, Any]]:
        """Turns identified by order, not by audio."""
        return self.turns.fallbacks

    def session(self, number: int) -> SessionRecord:
        return self.sessions[number - 1]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every function_call_output it received, once each and in order: `{call_id, name, result}`."""
        return [{"call_id": o.call_id, "name": o.name, "result": o.parsed if o.parsed is not None else o.output}
                for s in self.sessions for o in s.tool_outputs.values()]

    def kickoff_replies(self, after: int = 1) -> int:
        """Responses tied to no user turn (a greeting, a kickoff) in its sessions after the first `after`."""
        return sum(1 for r in self.responses if r.session > after and (r.turn_index is None or r.kind == "greeting"))

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> str:
        """Index the benchmark audio, listen, and return the base_url for the client."""
        if not len(self.index):
            await asyncio.to_thread(self.turns.build_index)
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            process_request=self._check_request,
            max_size=None,
            ping_interval=None,
            # no permessage-deflate: on loopback it saves nothing, and deflating base64 audio (every
            # 20 ms chunk in, every delta out) cost both ends CPU (scripts/bench_session_cost.py)
            compression=None,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}:{self.port}{self.path}"

    async def stop(self) -> None:
        if self._server is None:
            return
        for conn in list(self._conns):
            conn.cancel_tasks()
            if conn.rec.close_code is None:
                conn.rec.close_code, conn.rec.close_reason = 1001, "simulator stopped"
        self._server.close()
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> SimulatorServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- handshake -----------------------------------------------------------------------

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path.rstrip("/") != self.path:
            self.rejected.append({"path": path, "reason": "not found"})
            return connection.respond(HTTPStatus.NOT_FOUND, f"unknown path {path}; use {self.path}\n")
        if self.refuse is not None:
            status, body = self.refuse
            self.rejected.append({"path": path, "reason": f"refused with HTTP {status}"})
            return connection.respond(HTTPStatus(status), body)
        if (problem := self.handshake_problem(request)) is not None:
            status, reason = problem
            self.rejected.append({"path": path, "reason": reason})
            return connection.respond(status, reason + "\n")
        return None

    def handshake_problem(self, request: Request) -> tuple[HTTPStatus, str] | None:
        """Why the real service would refuse this upgrade (status, reason); None: it takes it.
        OpenAI's: a bearer key."""
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            return HTTPStatus.UNAUTHORIZED, "missing bearer token"
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        conn = Connection(ws, len(self.sessions) + 1, turns=self.turns, settings=self.settings, log=self.log)
        conn.rec.opened_s = time.monotonic()
        self.sessions.append(conn.rec)
        self._conns.add(conn)
        try:
            await conn.run()
        finally:
            self._conns.discard(conn)
            conn.rec.closed_s = time.monotonic()

    def most_open(self) -> int:
        """The most sessions it held open at once (from each one's open and close times): what a
        provider's concurrent-session limit counts."""
        marks = sorted((t, step) for s in self.sessions
                       for t, step in ((s.opened_s, 1), (s.closed_s if s.closed_s is not None else float("inf"), -1)))
        most = held = 0
        for _, step in marks:  # (a close and an open at the same instant: the close first)
            held += step
            most = max(most, held)
        return most
