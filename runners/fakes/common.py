"""Shared pieces of the local provider fakes: scripts, recording, speech, TLS, the server shell.

The fakes stand in for a provider's network service so that the real Pipecat service class
can be exercised offline. Everything a client sent is recorded per connection so tests can
assert on what actually crossed the wire (including replayed history after a reconnect).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import json
import math
import shutil
import ssl
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from aiohttp import WSMsgType, web
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from arena_tui.spine.benchmark import Benchmark, ExpectedCall

from runners.fakes.timing import INSTANT, FakeClock, ReplyPlan, TimingProfile
from runners.fakes.timing import pick as pick_timing

# What a reply does once it has been spoken.
Then = Literal["disconnect", "go_away", "expire"]


class ToolCallSpec(BaseModel):
    """A function call the fake makes before speaking its reply."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None  # generated when None


class ScriptedReply(BaseModel):
    """One model response, in reply order (the greeting is reply 0 when the client asks for one)."""

    text: str = ""  # spoken (audio + output transcript); after the tool results when tool_calls are set
    #: made in order before speaking (each answered before the next, in the protocol's own way)
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    user_transcript: str | None = None  # what the fake says it heard for this turn
    audio: bool = True  # False: transcript/text only, no audio (GLM air's failure mode)
    then: Then | None = None  # force a session event after this reply has been spoken
    close_code: int = 1011  # for then="disconnect"


class Script(BaseModel):
    """Replies keyed by reply number (`key="reply"`), or by user turn (`key="user_turn"`:
    reply k answers the k-th user utterance heard across connections, and a reply with no new
    user utterance — a greeting, a post-rotation kickoff — is `kickoff`); past the end, `default`.

    A reply whose timing (the fake's profile) says `no_output` stalls the first time: nothing
    is sent, and the next utterance heard (the client asking again) gets that same reply."""

    replies: list[ScriptedReply] = Field(default_factory=list)
    default: ScriptedReply = Field(default_factory=lambda: ScriptedReply(text="Okay."))
    key: Literal["reply", "user_turn"] = "reply"
    kickoff: ScriptedReply = Field(default_factory=lambda: ScriptedReply(text="Hello! How can I help you today?"))
    voice: Literal["auto", "tone", "espeak"] = "tone"
    silence_ms: int = 500  # server-VAD end of speech after this much silence
    speech_threshold_dbfs: float = -45.0
    chunk_ms: int = 100  # size of the audio chunks the fake sends back

    _answered: int = PrivateAttr(default=0)
    _repeat: int = PrivateAttr(default=0)  # stalled replies: later utterances map that many back
    _stalled: set[int] = PrivateAttr(default_factory=set)

    def reply(self, n: int) -> ScriptedReply:
        return self.replies[n] if 0 <= n < len(self.replies) else self.default

    def next(self, reply_count: int, heard: int) -> tuple[int, ScriptedReply]:
        """(reply number, reply) for the next response; -1 numbers a kickoff reply."""
        if self.key == "reply":
            return reply_count, self.reply(reply_count)
        if heard > self._answered:
            self._answered = heard
            n = heard - 1 - self._repeat
            return n, self.reply(n)
        return -1, self.kickoff

    def upcoming(self, reply_count: int, heard: int) -> int:
        """The reply number the next user utterance would get (for behaviour that starts while it
        is still being spoken)."""
        return reply_count if self.key == "reply" else heard - self._repeat

    def stalls(self, n: int, plan: ReplyPlan) -> bool:
        """Whether reply `n` gets no output this time (its plan says so and it has not stalled
        before); the next utterance heard is then answered with reply `n`."""
        if not plan.no_output or n in self._stalled or self.key != "user_turn":
            return False
        self._stalled.add(n)
        self._repeat += 1
        return True


def expected_call_spec(expected: ExpectedCall) -> ToolCallSpec:
    """The call a golden answer makes for one expected call (flexible arguments filled in)."""
    args = dict(expected.args)
    for name in expected.flexible_args:
        if not args.get(name):
            args[name] = "as discussed"
    return ToolCallSpec(name=expected.name, args=args)


def script_for_benchmark(benchmark: Benchmark, turns: list[int] | None = None, **kwargs: Any) -> Script:
    """A user-turn-keyed script that answers each selected turn as the golden answer would:
    it "hears" the turn's text, makes EVERY expected call of the turn in order (list-shaped
    expectations too), then speaks the golden text. `kwargs` go to `Script` (e.g. voice)."""
    replies = [
        ScriptedReply(
            user_transcript=turn.input,
            tool_calls=[expected_call_spec(e) for e in turn.expected_calls],
            text=turn.golden_text,
        )
        for turn in benchmark.turns
        if turns is None or turn.turn_index in turns
    ]
    return Script(replies=replies, key="user_turn", **kwargs)


class Mark(BaseModel):
    """Something the fake did or heard, at AUDIO time on its clock (for timing assertions)."""

    t_ms: float
    what: str  # reply_start, audio, terminal, user_end, tool_result, and each fake's own names
    reply: int | None = None
    audio_ms: float = 0.0


class ConnectionRecord(BaseModel):
    """Everything one client connection sent, with the audio reduced to counts."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int  # 1-based across the fake's life
    path: str = ""
    query: dict[str, str] = Field(default_factory=dict)
    auth_present: bool = False  # whether credentials were sent; the value is never kept
    setup: dict[str, Any] = Field(default_factory=dict)
    system_instruction: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    history: list[dict[str, Any]] = Field(default_factory=list)  # {role, text} replayed by the client
    resumed_from: str | None = None  # session-resumption handle presented on connect
    audio_in_bytes: int = 0
    audio_in_rate: int = 0
    audio_in_chunks: int = 0
    audio_chunk_ms: list[float] = Field(default_factory=list)  # per request, where the protocol batches
    tool_results: list[dict[str, Any]] = Field(default_factory=list)  # {call_id, name, result}
    user_turns: int = 0  # ends of user speech (VAD, commit, activityEnd)
    replies: list[int] = Field(default_factory=list)  # reply numbers answered on this connection
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON received, audio elided
    closed: str | None = None  # who closed it and how, e.g. "server:1011", "client"
    errors: list[str] = Field(default_factory=list)  # protocol errors the fake reported back
    timeline: list[Mark] = Field(default_factory=list)  # what was sent and heard when (audio time)

    def mark(self, t_ms: float, what: str, reply: int | None = None, audio_ms: float = 0.0) -> None:
        self.timeline.append(Mark(t_ms=t_ms, what=what, reply=reply, audio_ms=audio_ms))

    def marks(self, what: str, reply: int | None = None) -> list[Mark]:
        return [m for m in self.timeline if m.what == what and (reply is None or m.reply == reply)]

    @property
    def audio_in_ms(self) -> float:
        """Received user audio in audio time (PCM16 mono)."""
        if not self.audio_in_rate:
            return 0.0
        return self.audio_in_bytes / 2 / self.audio_in_rate * 1000.0


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def pick(d: dict[str, Any] | None, name: str, default: Any = None) -> Any:
    """Read a protocol key in camelCase or its snake_case spelling (clients send either)."""
    if not d:
        return default
    if name in d:
        return d[name]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return d.get(snake, default)


def elide_audio(msg: Any, keys: tuple[str, ...] = ("data", "audio", "content", "delta")) -> Any:
    """Copy of a message with long base64 payloads replaced by their length, for the record."""
    if isinstance(msg, dict):
        return {
            k: (f"<{len(v)} b64 chars>" if k in keys and isinstance(v, str) and len(v) > 256 and _looks_b64(v)
                else elide_audio(v, keys))
            for k, v in msg.items()
        }
    if isinstance(msg, list):
        return [elide_audio(v, keys) for v in msg]
    return msg


def _looks_b64(s: str) -> bool:
    return " " not in s[:256]


# ---------------------------------------------------------------- speech


def synthesize(text: str, sample_rate: int, voice: str = "tone") -> bytes:
    """PCM16 mono speech for `text`: espeak-ng when asked for and installed, else a tone.

    The tone lasts 60 ms per character (min 300 ms) so longer replies take longer to play,
    which keeps pacing and overlap behaviour realistic without a TTS engine.
    """
    if voice in ("auto", "espeak") and shutil.which("espeak-ng"):
        pcm = _espeak(text, sample_rate)
        if pcm:
            return pcm
    if voice == "espeak":
        raise RuntimeError("espeak-ng is not installed")
    seconds = max(0.3, 0.06 * len(text))
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    env = np.minimum(1.0, np.minimum(t, seconds - t) / 0.02)  # 20 ms fades, no clicks
    wave = 0.3 * np.sin(2 * math.pi * 220.0 * t) * env
    return (wave * 32767).astype("<i2").tobytes()


def _espeak(text: str, sample_rate: int) -> bytes:
    import io  # deferred: soundfile and soxr load only when audio is decoded or resampled

    import soundfile as sf  # deferred: soundfile and soxr load only when audio is decoded or resampled
    import soxr  # deferred: soundfile and soxr load only when audio is decoded or resampled

    out = subprocess.run(
        ["espeak-ng", "--stdout", "-s", "175", text], capture_output=True, timeout=30, check=False
    )
    if out.returncode or not out.stdout:
        return b""
    data, rate = sf.read(io.BytesIO(out.stdout), dtype="int16")
    if data.ndim > 1:
        data = data[:, 0]
    if rate != sample_rate:
        data = soxr.resample(data, rate, sample_rate)
    return np.asarray(data, dtype="<i2").tobytes()


def chunks(pcm: bytes, sample_rate: int, chunk_ms: int) -> list[bytes]:
    step = max(2, int(sample_rate * chunk_ms / 1000) * 2)
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


class Endpointer:
    """Energy VAD over received PCM16: says when a user utterance has ended.

    Real providers run their own VAD on the stream; this gives the fakes the same shape of
    behaviour (reply only after speech then silence) without a model.
    """

    def __init__(self, sample_rate: int, silence_ms: int = 500, threshold_dbfs: float = -45.0):
        self.sample_rate = sample_rate
        self.silence_ms = silence_ms
        self.threshold = 32768.0 * 10 ** (threshold_dbfs / 20)
        self.in_speech = False
        self._silent_ms = 0.0

    def feed(self, pcm: bytes) -> Literal["started", "stopped"] | None:
        if not pcm:
            return None
        x = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float32)
        rms = float(np.sqrt(np.mean(x * x))) if x.size else 0.0
        ms = x.size / self.sample_rate * 1000.0
        if rms >= self.threshold:
            self._silent_ms = 0.0
            if not self.in_speech:
                self.in_speech = True
                return "started"
            return None
        if self.in_speech:
            self._silent_ms += ms
            if self._silent_ms >= self.silence_ms:
                self.in_speech = False
                self._silent_ms = 0.0
                return "stopped"
        return None


# ---------------------------------------------------------------- TLS


class TlsPair(BaseModel):
    """A throwaway self-signed certificate for 127.0.0.1 and the contexts that use it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    cert_pem: Path
    key_pem: Path
    server: ssl.SSLContext
    client: ssl.SSLContext


def self_signed_tls(directory: Path | None = None) -> TlsPair:
    """Generate a certificate for 127.0.0.1/localhost; the client context trusts only it."""
    from cryptography import x509  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.hazmat.primitives import (  # deferred: cryptography (a test extra) is needed only for the TLS fakes
        hashes,
        serialization,
    )
    from cryptography.hazmat.primitives.asymmetric import ec  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.x509.oid import NameOID  # deferred: cryptography (a test extra) is needed only for the TLS fakes

    directory = Path(directory or tempfile.mkdtemp(prefix="arena-fake-tls-"))
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = directory / "cert.pem"
    key_pem = directory / "key.pem"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_pem, key_pem)
    client = ssl.create_default_context(cafile=str(cert_pem))
    return TlsPair(cert_pem=cert_pem, key_pem=key_pem, server=server, client=client)


# ---------------------------------------------------------------- server shell


def resolve_timing(timing: str | TimingProfile, real: TimingProfile) -> TimingProfile:
    """The profile `timing` is, or names ("real": the provider's `real`)."""
    return timing if isinstance(timing, TimingProfile) else pick_timing(timing, real)


class FakeServer:
    """An aiohttp server on 127.0.0.1 (optionally TLS) that records what each connection sent.

    Subclasses add routes in `routes()` and handle websocket sessions; tests use
    `async with Fake(script) as fake:` and then `await fake.wait_until(...)`. Replies follow
    `self.timing` on `self.clock` (audio time at `speed`); a subclass declares its provider's
    `REAL_TIMING`, which `timing="real"` selects.
    """

    REAL_TIMING: TimingProfile = INSTANT

    def __init__(self, script: Script | None = None, *, tls: TlsPair | None = None, speed: float = 1.0,
                 timing: str | TimingProfile = "instant"):
        self.script = script or Script()
        self.timing = resolve_timing(timing, self.REAL_TIMING)
        self.clock = FakeClock(speed)
        self.tls = tls
        self.connections: list[ConnectionRecord] = []
        self.reply_count = 0  # replies started, across connections
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._sockets: set[web.WebSocketResponse] = set()

    # lifecycle
    def routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    async def start(self) -> FakeServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(self.routes())
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.tls.server if self.tls else None)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=1001)
        if self._runner:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self):
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    # helpers for subclasses
    def new_connection(self, request: web.Request) -> ConnectionRecord:
        auth_headers = ("authorization", "x-goog-api-key", "x-api-key", "api-key")
        rec = ConnectionRecord(
            index=len(self.connections) + 1,
            path=request.path,
            query={k: v for k, v in request.query.items() if k.lower() not in ("key", "api_key")},
            auth_present=any(h in request.headers for h in auth_headers) or "key" in request.query,
        )
        self.connections.append(rec)
        return rec

    async def open_ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=64 * 1024 * 1024, autoping=True)
        await ws.prepare(request)
        self._sockets.add(ws)
        return ws

    def forget_ws(self, ws: web.WebSocketResponse) -> None:
        self._sockets.discard(ws)

    async def run_session(
        self, request: web.Request, rec: ConnectionRecord, make_session: Callable[[web.WebSocketResponse], Any]
    ) -> web.WebSocketResponse:
        """Open the websocket, run one session object over it, and record who closed it."""
        ws = await self.open_ws(request)
        try:
            await make_session(ws).run()
        finally:
            self.forget_ws(ws)
            if rec.closed is None:
                rec.closed = "client"
        return ws

    def ws_handler(self, session_cls: Callable[..., Any]) -> Callable[[web.Request], Any]:
        """A route handler: each websocket connection is recorded and runs one
        `session_cls(fake, record, ws)`."""

        async def handler(request: web.Request) -> web.StreamResponse:
            rec = self.new_connection(request)
            return await self.run_session(request, rec, lambda ws: session_cls(self, rec, ws))

        return handler

    def next_reply(self, rec: ConnectionRecord) -> tuple[int, ScriptedReply]:
        n, reply = self.script.next(self.reply_count, sum(c.user_turns for c in self.connections))
        self.reply_count += 1
        rec.replies.append(n)
        return n, reply

    def upcoming_plan(self) -> ReplyPlan:
        """The timing of the reply the next user utterance will get."""
        return self.timing.plan(self.script.upcoming(self.reply_count, sum(c.user_turns for c in self.connections)))

    # for tests
    @property
    def last(self) -> ConnectionRecord:
        return self.connections[-1]

    async def wait_until(self, cond: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        """Poll `cond` until truthy; raise a TimeoutError that says what was awaited."""
        deadline = time.monotonic() + timeout
        while True:
            value = cond()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"fake {type(self).__name__}: timed out waiting for {what or cond}")
            await asyncio.sleep(0.02)


class TimedSession:
    """A fake session's view of time: the fake's audio clock, and marks on its record."""

    fake: FakeServer
    rec: ConnectionRecord

    @property
    def now(self) -> float:
        return self.fake.clock.ms

    def mark(self, what: str, reply: int | None = None, audio_ms: float = 0.0) -> None:
        self.rec.mark(self.now, what, reply, audio_ms)


def spawn(tasks: set[asyncio.Task[Any]], coro: Any) -> None:
    """Run `coro` in the background, holding a reference in `tasks` until it is done."""
    task = asyncio.get_running_loop().create_task(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)


class ServerSocket:
    """A fake's server socket whose scripted closes are made by the task that reads it.

    aiohttp closes the transport at once when `close()` comes from a task other than the one
    receiving. The client is still streaming audio then, so the kernel answers the unread bytes
    with a reset and the client loses the close frame: it sees code 1006, not the scripted one.
    A real server completes the close handshake, so a reply task only asks (`close_soon`) and
    the reader closes, reading until the client's close arrives."""

    def __init__(self, ws: web.WebSocketResponse):
        self.ws = ws
        self._close: tuple[int, bytes] | None = None
        self._wake = asyncio.Event()

    async def send_json(self, msg: dict[str, Any]) -> None:
        await self._send(self.ws.send_str, json.dumps(msg))

    async def send_bytes(self, data: bytes) -> None:
        await self._send(self.ws.send_bytes, data)

    async def _send(self, send: Any, data: Any) -> None:
        """Send unless the client has gone: a reply still streaming when the client drops (a
        reset transport is "closing" before `closed`) ends quietly, as a real server's would."""
        if self.ws.closed:
            return
        try:
            await send(data)
        except ConnectionResetError:
            pass

    def close_soon(self, code: int, message: bytes) -> None:
        self._close = (code, message)
        self._wake.set()

    async def messages(self) -> AsyncIterator[Any]:
        """The client's messages until either side closes (close/error messages end it)."""
        wake = asyncio.ensure_future(self._wake.wait())
        try:
            while not self.ws.closed:
                recv = asyncio.ensure_future(self.ws.receive())
                await asyncio.wait({recv, wake}, return_when=asyncio.FIRST_COMPLETED)
                if not recv.done():
                    recv.cancel()
                    await asyncio.gather(recv, return_exceptions=True)
                elif recv.result().type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                    return
                else:
                    yield recv.result()
                if self._close is not None and not self.ws.closed:
                    await self.ws.close(code=self._close[0], message=self._close[1])
        finally:
            wake.cancel()


def spread_words(text: str, n: int) -> list[str]:
    """Split `text` into n transcript deltas (word groups, leading space after the first)."""
    words = text.split()
    n = max(1, n)
    out: list[str] = []
    for k in range(n):
        group = words[k * len(words) // n : (k + 1) * len(words) // n]
        out.append(((" " if out and any(out) else "") + " ".join(group)) if group else "")
    return out


def b64decode_any(data: str) -> bytes:
    """Standard or URL-safe base64, padded or not (google-genai sends URL-safe unpadded)."""
    s = data.replace("-", "+").replace("_", "/")
    return base64.b64decode(s + "=" * (-len(s) % 4))
