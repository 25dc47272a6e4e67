"""Text models on Amazon Bedrock through Pipecat's `AWSBedrockLLMService` (the Converse API),
as the reference runs `--service bedrock`.

A text model: the turn's text in, the streamed reply and tool calls out (`runners.run.text`).
Credentials come from the AWS chain as the SDK reads it (`AWS_ACCESS_KEY_ID` /
`AWS_SECRET_ACCESS_KEY` [/ `AWS_SESSION_TOKEN`], region `AWS_REGION` / `AWS_DEFAULT_REGION` /
us-east-1). `ArenaBedrockService` gives botocore's client the run's endpoint (`endpoint_url`:
the local fake with `--fake`, `--base-url` otherwise) and one attempt per request, so every
failed request is the engine's to see and retry in a rebuilt session.
"""

from __future__ import annotations

from typing import TypedDict

from botocore.config import Config
from pipecat.services.aws.llm import AWSBedrockLLMService, AWSBedrockLLMSettings
from arena_tui.spine.settings import RunSettings

from ...base import SessionSpec
from ..aws import aws_region, bedrock_runtime
from ..text_base import TextProviderRunner

class Credentials(TypedDict, total=False):
    aws_access_key: str
    aws_secret_key: str


FAKE_CREDENTIALS: Credentials = {"aws_access_key": "AKIAFAKEFAKEFAKEFAKE", "aws_secret_key": "fake-secret-not-a-secret"}


class ArenaBedrockService(AWSBedrockLLMService):
    """Pipecat's Bedrock service on an endpoint of ours: Pipecat opens each request's client from
    its client arguments, which take no endpoint of their own."""

    def __init__(self, *, endpoint_url: str, aws_region: str, client_config: Config, settings: AWSBedrockLLMSettings,
                 aws_access_key: str | None = None, aws_secret_key: str | None = None) -> None:
        """`aws_access_key`, `aws_secret_key`: a fake's (None: the AWS chain's credentials)."""
        super().__init__(aws_region=aws_region, client_config=client_config, settings=settings, aws_access_key=aws_access_key,
                         aws_secret_key=aws_secret_key)
        self._aws_params = {**self._aws_params, "endpoint_url": endpoint_url}
        self.endpoint_url = endpoint_url


class BedrockTextRunner(TextProviderRunner[ArenaBedrockService]):
    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, the local fake, or the region's Bedrock runtime."""
        return super().endpoint(config) or bedrock_runtime()

    def service_endpoint(self, service: ArenaBedrockService) -> str:
        return service._aws_params["endpoint_url"]  # where botocore's client is opened

    def build_service(self, spec: SessionSpec) -> ArenaBedrockService:
        cfg = spec.config
        timeout = self.reply_timeout_ms(cfg) / 1000.0
        creds = FAKE_CREDENTIALS if self.uses_fake(cfg) else {}  # else: the AWS chain
        return ArenaBedrockService(
            endpoint_url=self.endpoint(cfg),
            aws_region=aws_region(),
            client_config=Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}),
            settings=AWSBedrockLLMService.Settings(model=spec.model, system_instruction=spec.system_prompt),
            **creds,
        )
