"""Gemini Live on Vertex AI: Gemini Live's runner (`gemini_live/runner.py`: client-side turns, tools
in `setup`, the history as context, 2.5's continue prompt) with Vertex's service and access.

A real run reads the service account from `GOOGLE_APPLICATION_CREDENTIALS` (its path), the
project from `GOOGLE_CLOUD_PROJECT` and the location from `GOOGLE_CLOUD_LOCATION` (us-central1
by default); google-genai dials `wss://<location>-aiplatform.googleapis.com`. A `--fake` run
takes all three from its fake (`fake.py`): a throwaway service account whose token endpoint is
the fake's own, on 127.0.0.1 — the real one never leaves the environment.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from arena_tui.spine.settings import RunSettings

from ...base import RunError, SessionSpec
from ..gemini_live.runner import GeminiRunner

if TYPE_CHECKING:  # Pipecat's Gemini service and google-genai load when a session is built
    from ..gemini_live.service import GeminiAccess
    from .service import ArenaGeminiVertexService

LOCATION_ENV, PROJECT_ENV, CREDENTIALS_ENV = "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS"
DEFAULT_LOCATION = "us-central1"


def service_class() -> type[ArenaGeminiVertexService]:
    from .service import ArenaGeminiVertexService  # deferred: Pipecat's Gemini service and google-genai load when a session is built, so without them the runner still preflights (naming the missing package)

    return ArenaGeminiVertexService


class GeminiVertexRunner(GeminiRunner["ArenaGeminiVertexService"]):
    def location(self) -> str:
        return os.environ.get(LOCATION_ENV) or DEFAULT_LOCATION

    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, else the started fake, else the location's Vertex AI host."""
        return config.base_url or self.base_url or f"https://{self.location()}-aiplatform.googleapis.com"

    def service_type(self) -> type[ArenaGeminiVertexService]:
        return service_class()

    def access(self, spec: SessionSpec) -> GeminiAccess:
        """The fake's service account, project and location for a `--fake` run; else the environment's."""
        fake = self.fake
        if fake is not None:
            from .fake import GeminiVertexFake  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

            assert isinstance(fake, GeminiVertexFake)
            return {"credentials": fake.credentials_json, "project_id": fake.project, "location": fake.location}
        if spec.config.fake:
            raise RunError(f"{self.name}: a --fake run against another's fake (--base-url) has no service account to use")
        return {"credentials_path": os.environ.get(CREDENTIALS_ENV), "project_id": os.environ.get(PROJECT_ENV, ""),
                "location": self.location()}

    def build_service(self, spec: SessionSpec) -> ArenaGeminiVertexService:
        """Gemini Live's session on Vertex's service; Pipecat fetches the OAuth token as it builds it,
        so a service account that is refused stops the run by name, not with a traceback."""
        from google.auth.exceptions import GoogleAuthError  # deferred: google-auth loads when a session is built

        try:
            return super().build_service(spec)
        except (GoogleAuthError, ValueError, OSError) as e:
            detail = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)  # (google-auth's: message, response)
            raise RunError(f"{self.name}: the service account gets no token: {detail}") from None

    def service_endpoint(self, service: ArenaGeminiVertexService) -> str:
        options = service._http_options  # (Pipecat's: google-genai's client is opened with them)
        base = options.base_url if options is not None else None
        return base or f"https://{service._location}-aiplatform.googleapis.com"
