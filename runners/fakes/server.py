"""The fakes' server shell: an aiohttp server on 127.0.0.1 (optionally TLS) that records every
connection, paces replies on the fake's clock, and closes websockets the way a real server does.

The fakes stand in for a provider's network service so that the real Pipecat service class can be
exercised offline; each fake (`runners/fakes/<provider>.py`) subclasses `FakeServer` with its
provider's routes and session.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, Unpack

from aiohttp import WSMsgType, web

from runners.fakes.record import ConnectionRecord
from runners.fakes.script import Script, ScriptedReplies
from runners.fakes.timing import INSTANT, FakeClock, Pace, TimingProfile
from runners.fakes.timing import pick as pick_timing
from runners.fakes.tls import TlsPair


class ServerOptions(Pace, total=False):
    """A fake server's options besides its script: its pace, and its TLS pair (a `wss://`/`https://` fake)."""

    tls: TlsPair | None


def resolve_timing(timing: str | TimingProfile, real: TimingProfile) -> TimingProfile:
    """The profile `timing` is, or names ("real": the provider's `real`)."""
    return timing if isinstance(timing, TimingProfile) else pick_timing(timing, real)


class FakeServer(ScriptedReplies):
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
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # aiohttp's private server: started above
        return self

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=1001)
        if self._runner:
            await self._runner.cleanup()
            self._runner = None
        if self.tls is not None:
            self.tls.close()  # a certificate file written for a client leaves with the fake

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


class SpeechFake(FakeServer):
    """A text-to-speech service's fake: it hears nothing, and is reached by websocket at its host
    (its `routes` say the paths)."""

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}"


class WebSocketFake(FakeServer):
    """A fake whose provider is one websocket endpoint (`PATH`), each connection a `session`
    (built as `session(fake, record, ws)` and `run()`)."""

    PATH = "/"
    session: Callable[..., Any]

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}{self.PATH}"

    def routes(self) -> list[web.RouteDef]:
        return [web.get(self.PATH, self.ws_handler(self.session))]


def spawn(tasks: set[asyncio.Task[Any]], coro: Coroutine[object, object, object]) -> None:
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

    async def _send[D: (str, bytes)](self, send: Callable[[D], Awaitable[None]], data: D) -> None:
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
