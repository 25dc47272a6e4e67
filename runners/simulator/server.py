"""A local OpenAI Realtime (GA) websocket server driven by a benchmark: the no-key demo and test peer.

It hears the user through its own audio-time VAD, recognises which turn is being spoken
from the audio itself (fingerprints of the benchmark WAVs), answers with the turn's golden
answer as speech and the turn's expected function calls, and misbehaves on cue (faults).
What it did is kept as ground truth in audio time, so the engine's own measurements can be
checked against it. Pipecat's `OpenAIRealtimeLLMService` talks to it unmodified.
This module holds the server and what all its sessions share; `connection.py` is one
session's protocol, `replies.py` what it says.
"""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from arena_tui.spine.benchmark import Benchmark, ExpectedCall

from . import voice as voice_mod
from .connection import Connection
from .faults import FaultPlan, TurnFault, parse_faults
from .fingerprint import FingerprintIndex
from .protocol import PATH
from .records import ClientEventRecord, ResponseRecord, SessionRecord, TurnTruth


class SimulatorServer:
    """The simulator. `async with SimulatorServer(bench) as sim: url = sim.base_url`."""

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
    ) -> None:
        if policy != "oracle":
            raise ValueError(f"unknown simulator policy {policy!r}; available: oracle")
        self.benchmark = benchmark
        self.policy = policy
        self.faults: FaultPlan = parse_faults(faults) if isinstance(faults, str) or faults is None else faults
        self.voice: str = voice_mod.resolve_voice(voice)  # "espeak" | "tone": what the audio really is
        self.host, self.port = host, port
        self.response_delay_ms = float(response_delay_ms)
        self.leading_silence_ms = float(leading_silence_ms)
        self.chunk_ms = float(chunk_ms)
        # The oracle does not answer a recognised turn at a mid-turn pause (the VAD events still
        # go out as the real server_vad would send them); False answers at every speech stop.
        self.wait_for_turn_end = wait_for_turn_end

        self.log: list[ClientEventRecord] = []
        self.sessions: list[SessionRecord] = []
        self.truth: dict[int, TurnTruth] = {}  # latest attempt per turn
        self.truth_log: list[TurnTruth] = []  # every attempt, in order
        self.responses: list[ResponseRecord] = []
        self.fallbacks: list[dict[str, Any]] = []  # turns identified by order, not by audio
        self.rejected: list[dict[str, Any]] = []  # handshakes refused (wrong path, no auth)
        self.index = FingerprintIndex()

        self._order = [t.turn_index for t in benchmark.turns]
        self._attempts: dict[int, int] = {}
        self._answered: set[int] = set()
        self._early_done: set[int] = set()
        self._owed: dict[int, list[tuple[int, ExpectedCall]]] = {}
        self._server: Server | None = None
        self._conns: set[Connection] = set()

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> str:
        """Index the benchmark audio, listen, and return the base_url for the client."""
        if not len(self.index):
            await asyncio.to_thread(self._build_index)
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            process_request=self._check_request,
            max_size=None,
            ping_interval=None,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}:{self.port}{PATH}"

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

    def _build_index(self) -> None:
        for turn in self.benchmark.turns:
            path = self.benchmark.audio_path(turn)
            if path is not None and path.exists():
                self.index.add_file(turn.turn_index, path)

    # -- handshake -----------------------------------------------------------------------

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path.rstrip("/") != PATH:
            self.rejected.append({"path": path, "reason": "not found"})
            return connection.respond(HTTPStatus.NOT_FOUND, f"unknown path {path}; use {PATH}\n")
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            self.rejected.append({"path": path, "reason": "missing bearer token"})
            return connection.respond(HTTPStatus.UNAUTHORIZED, "missing Authorization: Bearer <key>\n")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        conn = Connection(self, ws, len(self.sessions) + 1)
        self.sessions.append(conn.rec)
        self._conns.add(conn)
        try:
            await conn.run()
        finally:
            self._conns.discard(conn)

    # -- turn bookkeeping shared by all sessions -----------------------------------------

    def session(self, number: int) -> SessionRecord:
        return self.sessions[number - 1]

    def next_unanswered(self) -> int | None:
        return next((t for t in self._order if t not in self._answered), None)

    def next_turn(self, turn_index: int) -> int | None:
        try:
            pos = self._order.index(turn_index)
        except ValueError:
            return None
        return self._order[pos + 1] if pos + 1 < len(self._order) else None

    def conversation_started(self) -> bool:
        return bool(self._attempts)

    def begin_attempt(self, turn_index: int) -> int:
        self._attempts[turn_index] = self._attempts.get(turn_index, 0) + 1
        return self._attempts[turn_index]

    def record_truth(self, truth: TurnTruth) -> None:
        self.truth_log.append(truth)
        self.truth[truth.turn_index] = truth

    def mark_answered(self, turn_index: int) -> None:
        if turn_index >= 0:
            self._answered.add(turn_index)

    def plan_calls(self, turn_index: int, fault: TurnFault | None) -> list[tuple[int, ExpectedCall, bool]]:
        """The calls to make on this turn: (for_turn, call, wrong), shaped by early/late/wrong faults."""
        turn = self.benchmark.turn(turn_index)
        own = [] if turn_index in self._early_done else [(turn_index, c) for c in turn.expected_calls]
        owed = self._owed.pop(turn_index, [])
        kind = fault.kind if fault else None
        calls = owed + own
        nxt = self.next_turn(turn_index)
        if kind == "early_call" and nxt is not None:
            calls += [(nxt, c) for c in self.benchmark.turn(nxt).expected_calls]
            self._early_done.add(nxt)
        elif kind == "late_call" and nxt is not None:
            self._owed.setdefault(nxt, []).extend(own)
            calls = owed
        if kind == "wrong_call":
            if not calls:
                tool = self.benchmark.tools[0] if self.benchmark.tools else None
                if tool is None:
                    return []
                return [(turn_index, ExpectedCall(name=tool.name, args={"unexpected_argument": "wrong"}), True)]
            return [(ft, _wrong_call(c), True) for ft, c in calls]
        return [(ft, c, False) for ft, c in calls]

    def reply_text(self, turn_index: int) -> str:
        if turn_index < 0:
            return voice_mod.GREETING_TEXT
        return voice_mod.spoken_text(self.benchmark.turn(turn_index).golden_text)


def _wrong_call(call: ExpectedCall) -> ExpectedCall:
    """Same function, one compared argument changed (or an unexpected one added)."""
    args = dict(call.args)
    # IDs first: they must match exactly, even for a lenient judge
    keys = sorted((k for k in args if k not in call.flexible_args), key=lambda k: (not k.endswith(("id", "ids")), k))
    if not keys:
        args["unexpected_argument"] = "wrong"
        return call.model_copy(update={"args": args})
    k = keys[0]
    v = args[k]
    if isinstance(v, bool):
        args[k] = not v
    elif isinstance(v, (int, float)):
        args[k] = v + 1
    elif isinstance(v, str):
        args[k] = str(int(v) + 1).zfill(len(v)) if v.isdigit() else f"{v}-wrong"
    elif isinstance(v, list):
        args[k] = v[:-1] if v else ["wrong"]
    else:
        args[k] = "wrong"
    return call.model_copy(update={"args": args})
