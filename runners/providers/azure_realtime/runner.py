"""Azure OpenAI Realtime through Pipecat's `AzureRealtimeLLMService`: OpenAI's Realtime protocol
(the OpenAI runner's sessions, history replay and manual commits) at an Azure resource.

What differs is the address and the handshake, both Pipecat's: the v1 surface
(`wss://<resource>.openai.azure.com/openai/v1/realtime`), the deployment as `?model=`, the key
in an `api-key` header (not `Authorization: Bearer`). A dated `api-version` selects Azure's
preview protocol, which Pipecat does not speak: the endpoint is built without one. The
resource is `AZURE_REALTIME_ENDPOINT` (its catalog entry's `setting_env`), the deployment the
alias's model id (`AZURE_REALTIME_DEPLOYMENT` names another).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from pipecat.services.azure.realtime.llm import AzureRealtimeLLMService

from arena_tui.spine.settings import RunSettings

from ..openai_realtime.runner import OpenAIRealtimeRunner, ReplayingRealtimeService

ENDPOINT_ENV = "AZURE_REALTIME_ENDPOINT"
V1_PATH = "/openai/v1/realtime"
FAKE_KEY = "azure-fake-not-a-secret"


def v1_url(endpoint: str) -> str:
    """The v1 realtime URL of an Azure resource (`https://<resource>.openai.azure.com`, or a full
    URL kept as given): `wss://<resource>.openai.azure.com/openai/v1/realtime`."""
    parts = urlsplit(endpoint.strip().rstrip("/"))
    scheme = {"https": "wss", "http": "ws"}.get(parts.scheme, parts.scheme or "wss")
    path = parts.path if parts.path.endswith("/realtime") else parts.path + V1_PATH
    return f"{scheme}://{parts.netloc}{path}"


class AzureReplayingService(ReplayingRealtimeService, AzureRealtimeLLMService):
    """Azure's service with the OpenAI runner's replay and response-status hooks; Pipecat's own
    `_REASONING_CAPABLE_MODEL_SUBSTRINGS` decide whether `reasoning` is sent (the deployment's
    name must say gpt-realtime-2: Azure names deployments, the model behind is not asked)."""


class AzureRealtimeRunner(OpenAIRealtimeRunner):
    """The OpenAI runner with Azure's service and address; its fake (`fake.py`) is the simulator
    behind Azure's handshake, built by the OpenAI runner's `make_fake` from `fake_class`."""

    default_endpoint = ""  # the user's resource: `AZURE_REALTIME_ENDPOINT`
    fake_key = FAKE_KEY
    service_class = AzureReplayingService

    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, else the started fake, else the resource in `AZURE_REALTIME_ENDPOINT`: its v1 URL."""
        given = config.base_url or self.base_url or os.environ.get(ENDPOINT_ENV, "")
        return v1_url(given) if given else ""
