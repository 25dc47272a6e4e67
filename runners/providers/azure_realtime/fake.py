"""Azure OpenAI Realtime's local fake: the simulator (`runners/simulator/`: OpenAI's Realtime
protocol, benchmark-driven) behind Azure's handshake, which is what differs on the wire:
- the v1 surface's path, `/openai/v1/realtime` (404 elsewhere);
- the key in an `api-key` header; a bearer that is no Microsoft Entra token (a JWT: three
  dot-separated parts), e.g. an API key sent as OpenAI sends it, is refused with 401;
- the deployment as `?model=<deployment>` (400 without one);
- a dated `api-version` selects Azure's preview protocol (other event names, a session shape
  Pipecat's service does not send): refused with 400 naming it, where the real service would
  accept the connection and fail later in the session.
Each refusal is recorded in `rejected` (path and reason), as the simulator records its own.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.http11 import Request

from runners.fakes.handshake import azure_key_problem
from runners.simulator import SimulatorServer

V1_PATH = "/openai/v1/realtime"
DATED_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}")


class AzureRealtimeFake(SimulatorServer):
    path = V1_PATH

    def handshake_problem(self, request: Request) -> tuple[HTTPStatus, str] | None:
        query = parse_qs(urlsplit(request.path).query)
        version = (query.get("api-version") or [""])[0]
        if DATED_VERSION.match(version):
            return HTTPStatus.BAD_REQUEST, f"api-version={version} selects the preview protocol (the v1 surface takes none)"
        if not (query.get("model") or [""])[0]:
            return HTTPStatus.BAD_REQUEST, "missing deployment (?model=<deployment>)"
        problem = azure_key_problem(request.headers)
        return None if problem is None else (HTTPStatus.UNAUTHORIZED, problem)
