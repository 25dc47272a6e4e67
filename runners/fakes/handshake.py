"""Handshakes a real service refuses before the websocket upgrade, as its fake refuses them: an
HTTP error naming why, each refusal recorded in `rejected` (its path and reason); a handshake it
takes runs one session (`HandshakeFake`). And Azure's key rule, which both Azure fakes (OpenAI
Realtime at an Azure resource, Voice Live) hold a client to (`azure_key_problem`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, Unpack

from aiohttp import web

from runners.fakes.record import ConnectionRecord
from runners.fakes.script import Script
from runners.fakes.server import FakeServer, ServerOptions


def azure_key_problem(headers: Mapping[str, str]) -> str | None:
    """Why Azure refuses a handshake's credentials: the key goes in an `api-key` header, or a
    Microsoft Entra token (a JWT: three dot-separated parts) as a bearer; an API key sent as a
    bearer (as OpenAI takes it) is refused. None: it takes them."""
    if headers.get("api-key", "").strip():
        return None
    bearer = headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if bearer and bearer.count(".") == 2:
        return None  # a Microsoft Entra token is Azure's other way in
    if bearer:
        return "a bearer that is no Entra token: an API key goes in the api-key header"
    return "missing api-key header"


class Session(Protocol):
    async def run(self) -> None: ...


class HandshakeFake(FakeServer):
    """A fake whose endpoint (`PATH`) checks each handshake first (`handshake_problem`): refused with
    its status and the service's error body (`refusal`), or taken and run as a `session`."""

    PATH = "/"

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.rejected: list[dict[str, str]] = []  # handshakes refused: {path, reason}

    def handshake_problem(self, request: web.Request) -> tuple[int, str] | None:
        """(HTTP status, why) when the real service refuses this handshake; None: it takes it."""
        raise NotImplementedError

    def refusal(self, status: int, reason: str) -> dict[str, object]:
        """A refused handshake's JSON body, in the service's shape."""
        return {"error": {"code": status, "message": reason}}

    def session(self, rec: ConnectionRecord, ws: web.WebSocketResponse) -> Session:
        """The session a taken handshake runs."""
        raise NotImplementedError

    def routes(self) -> list[web.RouteDef]:
        return [web.get(self.PATH, self.handle)]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if (problem := self.handshake_problem(request)) is not None:
            status, reason = problem
            self.rejected.append({"path": request.path, "reason": reason})
            return web.json_response(self.refusal(status, reason), status=status)
        rec = self.new_connection(request)
        return await self.run_session(request, rec, lambda ws: self.session(rec, ws))
