"""A local Gemini Live on Vertex AI: the Gemini Live fake (`gemini_live/fake.py`: the protocol, its
timing and quirks) at Vertex's path, behind Vertex's access, with the OAuth token endpoint its
service account names.

What the real service requires, refused as it refuses it:
- the token endpoint (`POST /token`, a thread of its own: Pipecat refreshes the token
  synchronously while it builds the service, inside the run's event loop): the JWT-bearer grant,
  an assertion signed by the service account's key (RS256, its `kid`), issued by its
  `client_email` for Google's token audience with the cloud-platform scope; a bad one gets OAuth's
  `invalid_grant` (400);
- the WebSocket (`/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent`):
  `Authorization: Bearer <a token this endpoint issued>` (401 before the upgrade otherwise: no
  API key on this path, recorded in `rejected`);
- `setup` (closed with 1007 as an invalid argument, 1008 for another project, the reason
  recorded): the model as `projects/<project>/locations/<location>/publishers/google/models/<id>`
  with the service account's project and the endpoint's location; no `historyConfig` and no
  function declaration `behavior` (Vertex's Live endpoint takes neither; Pipecat leaves both out
  for Vertex).
Its usage (`usageMetadata` on a reply's last turnComplete, counted as Gemini Live's fake counts it)
names the response's tokens as Vertex's `UsageMetadata` does: `candidatesTokenCount` and
`candidatesTokensDetails` (the Developer API's `responseTokenCount` is not Vertex's field).
The service account is made for the fake (a throwaway RSA key): `credentials_json`, `project`,
`location` are what a `--fake` run gives the service.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Unpack
from urllib.parse import parse_qs

from aiohttp import web

from runners.fakes.script import Script
from runners.fakes.timing import Pace
from runners.fakes.tls import TlsPair
from runners.providers.gemini_live.fake import GeminiLiveFake, Session

WS_PATH = "/ws/google.cloud.aiplatform.{version}.LlmBidiService/BidiGenerateContent"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
AUDIENCE = "https://oauth2.googleapis.com/token"  # what an assertion is for, whichever endpoint takes it
PROJECT, LOCATION = "arena-fake-project", "us-central1"
MODEL_PATH = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/models/(?P<model>[^/]+)$")


def _b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


class ServiceAccount:
    """A throwaway service account: its key pair (RSA 2048) and the JSON a client loads it from."""

    def __init__(self, project: str, token_uri: str) -> None:
        from cryptography.hazmat.primitives import serialization  # deferred: cryptography (a test extra) is needed only for the TLS and OAuth fakes
        from cryptography.hazmat.primitives.asymmetric import rsa  # deferred: cryptography (a test extra) is needed only for the TLS and OAuth fakes

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_id = uuid.uuid4().hex
        self.email = f"arena-fake@{project}.iam.gserviceaccount.com"
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        self.info = {"type": "service_account", "project_id": project, "private_key_id": self.key_id,
                     "private_key": pem.decode(), "client_email": self.email, "client_id": "0", "token_uri": token_uri}

    def verify(self, assertion: str) -> dict[str, Any]:
        """The assertion's claims when its header and RS256 signature are this account's; ValueError otherwise."""
        from cryptography.exceptions import InvalidSignature  # deferred: cryptography (a test extra) is needed only for the TLS and OAuth fakes
        from cryptography.hazmat.primitives import hashes  # deferred: cryptography (a test extra) is needed only for the TLS and OAuth fakes
        from cryptography.hazmat.primitives.asymmetric import padding  # deferred: cryptography (a test extra) is needed only for the TLS and OAuth fakes

        try:
            head, body, sig = assertion.split(".")
            header = json.loads(_b64url(head))
            claims = json.loads(_b64url(body))
        except ValueError as e:
            raise ValueError(f"malformed assertion: {e}") from None
        if header.get("alg") != "RS256" or header.get("kid") != self.key_id:
            raise ValueError(f"assertion header {header} is not this account's RS256 key")
        try:
            self.key.public_key().verify(_b64url(sig), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            raise ValueError("assertion signature does not verify") from None
        return claims


class TokenEndpoint:
    """Google's OAuth token endpoint for one service account, on 127.0.0.1 in a thread of its own."""

    def __init__(self) -> None:
        self.account: ServiceAccount | None = None
        self.issued: set[str] = set()
        self.requests: list[dict[str, Any]] = []  # {grant_type, iss, aud, scope, error}: what it was asked
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                size = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(size).decode()).items()}
                status, body = endpoint.grant(self.path, form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:  # (http.server's names)
                pass  # the fake's requests are recorded in `requests`, not logged

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-oauth-token", daemon=True)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def grant(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        seen: dict[str, Any] = {"grant_type": form.get("grant_type")}
        self.requests.append(seen)
        problem = None
        if path != "/token":
            problem = f"unknown path {path}"
        elif form.get("grant_type") != GRANT:
            problem = f"grant_type {form.get('grant_type')!r} is not {GRANT}"
        else:
            try:
                assert self.account is not None
                claims = self.account.verify(form.get("assertion", ""))
            except ValueError as e:
                problem = str(e)
            else:
                seen.update(iss=claims.get("iss"), aud=claims.get("aud"), scope=claims.get("scope"))
                now = time.time()
                if claims.get("iss") != self.account.email:
                    problem = f"iss {claims.get('iss')!r} is not the service account"
                elif claims.get("aud") != AUDIENCE:
                    problem = f"aud {claims.get('aud')!r} is not {AUDIENCE}"
                elif SCOPE not in str(claims.get("scope", "")).split():
                    problem = f"scope {claims.get('scope')!r} lacks {SCOPE}"
                elif not (claims.get("iat", 0) - 300 <= now <= claims.get("exp", 0)):
                    problem = "assertion expired or not yet valid"
        if problem is not None:
            seen["error"] = problem
            return 400, {"error": "invalid_grant", "error_description": problem}
        token = f"ya29.arena-fake-{uuid.uuid4().hex}"
        self.issued.add(token)
        return 200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class _VertexSession(Session):
    fake: GeminiVertexFake
    # Vertex's `UsageMetadata` names the response's tokens as generateContent does (google-genai's
    # `_UsageMetadata_from_vertex` reads these into `response_token_count`): the Developer API's
    # names would reach Pipecat as no output at all
    RESPONSE_COUNT, RESPONSE_DETAILS = "candidatesTokenCount", "candidatesTokensDetails"

    async def on_setup(self, setup: dict[str, Any]) -> None:
        if (problem := self.fake.setup_problem(setup)) is not None:
            code, reason = problem
            self.rec.setup = setup
            self.rec.errors.append(reason)
            self.rec.closed = f"server:{code}"
            await self.ws.close(code=code, message=reason[:120].encode())
            return
        await super().on_setup(setup)


class GeminiVertexFake(GeminiLiveFake):
    """Scripted Gemini Live on Vertex AI (TLS, as google-genai dials `wss://`), with its token endpoint."""

    def __init__(self, script: Script | None = None, *, tls: TlsPair | None = None, project: str = PROJECT,
                 location: str = LOCATION, **pace: Unpack[Pace]) -> None:
        super().__init__(script, tls=tls, **pace)
        self.project, self.location = project, location
        self.tokens = TokenEndpoint()
        self.account = ServiceAccount(project, self.tokens.uri)
        self.tokens.account = self.account
        self.rejected: list[dict[str, str]] = []  # handshakes refused: {path, reason}

    @property
    def credentials_json(self) -> str:
        """The service account's JSON, as `GOOGLE_APPLICATION_CREDENTIALS` would hold it (its token endpoint: ours)."""
        return json.dumps(self.account.info)

    async def start(self) -> GeminiVertexFake:
        self.tokens.start()
        await super().start()
        return self

    async def stop(self) -> None:
        try:
            await super().stop()
        finally:
            self.tokens.stop()

    def routes(self) -> list[web.RouteDef]:
        return [web.get(WS_PATH.format(version=v), self.handle) for v in ("v1beta1", "v1")]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if token not in self.tokens.issued:
            reason = "no bearer token this project's token endpoint issued" if token else "missing Authorization: Bearer <token>"
            self.rejected.append({"path": request.path, "reason": reason})
            return web.json_response({"error": {"code": 401, "message": reason, "status": "UNAUTHENTICATED"}}, status=401)
        rec = self.new_connection(request)
        return await self.run_session(request, rec, lambda ws: _VertexSession(self, rec, ws))

    def setup_problem(self, setup: dict[str, Any]) -> tuple[int, str] | None:
        """Why Vertex refuses this `setup`: (close code, reason); None: it takes it."""
        model = str(setup.get("model") or "")
        match = MODEL_PATH.match(model)
        if match is None:
            return 1007, f"model {model!r} is not projects/<project>/locations/<location>/publishers/google/models/<id>"
        if match["project"] != self.project:
            return 1008, f"Permission denied on project {match['project']} (the service account's is {self.project})"
        if match["location"] != self.location:
            return 1007, f"location {match['location']} is not this endpoint's ({self.location})"
        if "historyConfig" in setup or "history_config" in setup:
            return 1007, "Invalid JSON payload: unknown field historyConfig"
        for tool in setup.get("tools") or []:
            for fd in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
                if "behavior" in fd:
                    return 1007, f"function {fd.get('name')}: unknown field behavior"
        return None
