"""Amazon Nova Sonic through Pipecat's `AWSNovaSonicLLMService`.

What differs from the stock service, and why:
- Input is resampled to 16 kHz in the service: the engine feeds 24 kHz frames and Pipecat
  forwards `frame.audio` untouched while declaring `sampleRateHertz: 16000`, so Nova would
  hear the user 1.5x slowed down.
- ONE rotator: the engine. It rotates at turn boundaries (default after 180 s of session
  age, well before AWS's ~8 min limit; large prompts fill the context sooner) and gives the
  new service `spec.history`, which is replayed here as Nova USER/ASSISTANT text blocks with
  each tool call and its result rendered as assistant text. Pipecat's own continuation
  (360 s, wall clock, mid-turn) is disabled: it would race the engine and it replays no
  tool calls. Pipecat's `reset_conversation()` after AWS ends a stream is suppressed for the
  same reason: the session is reported dead and the engine rotates (a `session_rotated`
  event with what was replayed), instead of a silent in-service reconnect without tools.
- Tool messages in the live LLM context are rendered as text too, so any path that re-reads
  the context (Pipecat's setup, a reset) keeps the tool state.
- A session opened without a kickoff asks for nothing: Pipecat sends the context's last
  message as interactive USER text when it is a user's (a reply to it), which a replay of a
  turn that got no answer ends with; that message goes in as history instead.

The service is `service.py` (`ArenaNovaSonicService`), the history as Nova reads it
`history.py`. Nothing here imports Pipecat's Nova service at module import time: without
the AWS SDK the preflight must still be able to say which package is missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from arena_tui.spine.events import ErrorEvent
from arena_tui.spine.settings import Rotation, RunSettings

from ...base import ProviderRunner, Publish, SessionSpec
from ..aws import DEFAULT_REGION, aws_region, bedrock_runtime
from .history import history_messages

if TYPE_CHECKING:  # Pipecat's Nova Sonic service and the AWS SDK load when a session is built
    from .service import ArenaNovaSonicService

ROTATE_AFTER_S = 180.0  # the reference's value for conversation_bench (49K-char prompt)
AWS_SESSION_LIMIT_S = 480.0  # AWS ends a Nova Sonic stream after ~8 minutes


def service_class() -> type[ArenaNovaSonicService]:
    """`ArenaNovaSonicService` (`service.py`), imported on first use so a missing AWS SDK is a
    preflight message."""
    from .service import ArenaNovaSonicService  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)

    return ArenaNovaSonicService


class NovaSonicRunner(ProviderRunner["ArenaNovaSonicService"]):

    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, the in-process fake, or the region's Bedrock runtime."""
        return super().endpoint(config) or bedrock_runtime()

    checks = (*ProviderRunner.checks, "session")

    def check_session(self, config: RunSettings) -> list[str]:
        """Its sessions rotated before AWS's limit, its endpoint a Bedrock runtime URL."""
        problems = []
        age = config.rotation.max_age_s
        if age is None and "max_age_s" in config.rotation.model_fields_set:
            problems.append(
                f"{self.name}: rotation max_age_s must be set below AWS's ~{AWS_SESSION_LIMIT_S:.0f} s session limit "
                f"(default {ROTATE_AFTER_S:.0f})"
            )
        if age is not None and age >= AWS_SESSION_LIMIT_S:
            problems.append(
                f"{self.name}: rotation max_age_s={age:g} is not below AWS's ~{AWS_SESSION_LIMIT_S:.0f} s session "
                f"limit (use e.g. --rotate-after {ROTATE_AFTER_S:.0f})"
            )
        if config.base_url and not config.base_url.startswith(("https://", "http://")):
            problems.append(f"{self.name}: --base-url must be a Bedrock runtime endpoint URL (got {config.base_url!r})")
        return problems

    def rotation_policy(self, config: RunSettings, system_prompt: str) -> Rotation:
        rot = config.rotation
        if "max_age_s" in rot.model_fields_set:
            return rot
        return rot.model_copy(update={"max_age_s": ROTATE_AFTER_S})

    def replay_strategy(self) -> str:
        return "full_history"

    def build_service(self, spec: SessionSpec) -> ArenaNovaSonicService:
        cls = service_class()
        session = partial(cls, settings=cls.Settings(model=spec.model, system_instruction=spec.system_prompt),
                          tools=self.tools(spec.tools), replay=history_messages(spec.history), respond=spec.kickoff is not None,
                          on_stream_ended=self._stream_ended_reporter(spec.publish))
        if self.fake is not None:
            from .fake import NovaSonicFake  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

            assert isinstance(self.fake, NovaSonicFake)
            return session(access_key_id="fake-id", secret_access_key="fake-secret", region=DEFAULT_REGION,
                           client_factory=self.fake.client, endpoint=self.fake.base_url)
        env = os.environ
        return session(access_key_id=env.get("AWS_ACCESS_KEY_ID", ""), secret_access_key=env.get("AWS_SECRET_ACCESS_KEY", ""),
                       session_token=env.get("AWS_SESSION_TOKEN") or None, region=aws_region(), endpoint=spec.config.base_url)

    def service_endpoint(self, service: ArenaNovaSonicService) -> str:
        client = service.create_client()  # the SDK client the service would open its streams on
        fake = getattr(client, "fake", None)  # the local fake's client (`FakeBedrockClient`): in this process
        return fake.base_url if fake is not None else str(client._config.endpoint_uri)

    def is_alive(self, service: ArenaNovaSonicService) -> bool:
        return service.alive()

    def session_ready(self, service: ArenaNovaSonicService) -> bool:
        return service.set_up

    def _stream_ended_reporter(self, publish: Publish | None) -> Callable[[str], None] | None:
        """Say why no in-service reconnect follows a stream AWS ended (the engine's rotation does)."""
        if publish is None:
            return None
        return lambda why: publish(
            ErrorEvent,
            where="provider",
            message=f"{self.name}: {why}; Pipecat's reset_conversation is not used (it replays no tool calls): "
            "the engine opens a new session with the history",
            fatal=False,
        )


