"""`ArenaNovaSonicService`: Pipecat's `AWSNovaSonicLLMService` with what a benchmark needs of it
(the runner, `nova_sonic.py`, says why; it imports this module only when a session is built, so
without the AWS SDK its preflight still names the missing package):
- input resampled to the 16 kHz the session declares (Pipecat forwards 24 kHz frames untouched);
- the engine's history replayed ahead of the context, and the context's tool messages kept as
  text (`ToolTextAdapter`; the stock adapter drops them);
- Pipecat's own continuation off and its `reset_conversation()` replaced by a report: the engine
  is the one rotator;
- a session without a kickoff asks for nothing (the context's last user message goes in as
  history, not as interactive text);
- the Bedrock endpoint from `--base-url`, or the local fake's client;
- its `usageEvent` reported with the speech share kept (Pipecat folds speech and text tokens
  together, and speech is billed at many times the text rate).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.adapters.llm.services.aws_nova_sonic_adapter import (
    AWSNovaSonicConversationHistoryMessage,
    AWSNovaSonicLLMAdapter,
    AWSNovaSonicLLMInvocationParams,
    Role,
)
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import InputAudioRawFrame
from pipecat.metrics.metrics import LLMTokenUsage
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService, AWSNovaSonicLLMSettings
from pipecat.services.aws.nova_sonic.session_continuation import SessionContinuationParams

from ..aws import bedrock_runtime
from .history import tool_note


class ToolTextAdapter(AWSNovaSonicLLMAdapter):
    """Prepends the replayed history and keeps tool messages of the context as text
    (the stock adapter drops them)."""

    def __init__(self) -> None:
        super().__init__()
        self.replay: list[AWSNovaSonicConversationHistoryMessage] = []
        self._call_names: dict[str, str] = {}
        self.last_user: AWSNovaSonicConversationHistoryMessage | None = None  # of the last params read

    # (`options: Any`: Pipecat's `BaseLLMAdapter` declares them untyped, so an override takes any keyword)
    async def get_llm_invocation_params(self, context: LLMContext, **options: Any) -> AWSNovaSonicLLMInvocationParams:
        params = await super().get_llm_invocation_params(context, **options)
        params["messages"] = list(self.replay) + list(params["messages"])
        last = params["messages"][-1] if params["messages"] else None
        self.last_user = last if last is not None and last.role == Role.USER else None
        return params

    def _from_universal_context_message(self, message: dict[str, Any]) -> Any:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            notes = []
            for call in message["tool_calls"]:
                fn = call.get("function", {})
                self._call_names[call.get("id", "")] = fn.get("name", "")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = fn.get("arguments")
                notes.append(tool_note(fn.get("name", ""), args, answered=False))
            return AWSNovaSonicConversationHistoryMessage(role=Role.ASSISTANT, text=" ".join(notes))
        if role == "tool":
            content = message.get("content")
            if content in ("IN_PROGRESS", "CANCELLED"):
                return None
            try:
                content = json.loads(content) if isinstance(content, str) else content
            except json.JSONDecodeError:
                pass
            name = self._call_names.get(message.get("tool_call_id", ""), "tool")
            return AWSNovaSonicConversationHistoryMessage(
                role=Role.ASSISTANT, text=tool_note(name, result=content, called=False)
            )
        return super()._from_universal_context_message(message)

class ArenaNovaSonicService(AWSNovaSonicLLMService):
    """The real Nova Sonic service with the three fixes above; `client_factory` (the local
    fake's client) or `endpoint` replace the Bedrock endpoint in `create_client()`."""

    adapter_class = ToolTextAdapter

    def __init__(
        self,
        *,
        settings: AWSNovaSonicLLMSettings,
        tools: ToolsSchema | None,
        access_key_id: str,
        secret_access_key: str,
        session_token: str | None = None,
        region: str,
        replay: list[tuple[str, str]] | None = None,
        respond: bool = True,
        client_factory: Callable[[], object] | None = None,
        endpoint: str | None = None,
        on_stream_ended: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(settings=settings, tools=tools, access_key_id=access_key_id, secret_access_key=secret_access_key,
                         session_token=session_token, region=region,
                         session_continuation=SessionContinuationParams(enabled=False))  # the engine is the one rotator
        self._respond_on_setup = respond  # False: no kickoff, the setup asks for no reply
        self._client_factory = client_factory
        self._endpoint = endpoint
        self._resampler = create_stream_resampler()
        self.stream_ended: str | None = None  # why the stream ended under us, if it did
        self.on_stream_ended = on_stream_ended  # callback(reason): the runner reports it
        self.replayed = list(replay or [])
        self.get_llm_adapter().replay = [
            AWSNovaSonicConversationHistoryMessage(role=Role[role], text=text) for role, text in self.replayed
        ]

    def get_llm_adapter(self) -> ToolTextAdapter:
        adapter = super().get_llm_adapter()
        assert isinstance(adapter, ToolTextAdapter)  # (its `adapter_class`)
        return adapter

    def create_client(self) -> Any:
        if self._client_factory is not None:
            return self._client_factory()
        from aws_sdk_bedrock_runtime.client import AsyncBedrockRuntimeClient  # deferred: the AWS SDK loads only when a Nova Sonic session opens
        from aws_sdk_bedrock_runtime.config import Config  # deferred: the AWS SDK loads only when a Nova Sonic session opens
        from smithy_aws_core.auth.sigv4 import SigV4AuthScheme  # deferred: the AWS SDK loads only when a Nova Sonic session opens
        from smithy_aws_core.identity.static import StaticCredentialsResolver  # deferred: the AWS SDK loads only when a Nova Sonic session opens
        from smithy_core.shapes import ShapeID  # deferred: the AWS SDK loads only when a Nova Sonic session opens

        return AsyncBedrockRuntimeClient(
            config=Config(
                endpoint_uri=self._endpoint or bedrock_runtime(self._region),
                region=self._region,
                aws_access_key_id=self._access_key_id,
                aws_secret_access_key=self._secret_access_key,
                aws_session_token=self._session_token,
                aws_credentials_identity_resolver=StaticCredentialsResolver(),
                auth_schemes={ShapeID("aws.auth#sigv4"): SigV4AuthScheme(service="bedrock")},
            )
        )

    async def _handle_input_audio_frame(self, frame: InputAudioRawFrame) -> None:
        want = self._audio_config.input_sample_rate
        if frame.sample_rate != want:
            audio = await self._resampler.resample(frame.audio, frame.sample_rate, want)
            if not audio:
                return
            frame = InputAudioRawFrame(audio=audio, sample_rate=want, num_channels=frame.num_channels)
        await super()._handle_input_audio_frame(frame)

    async def _send_audio_input_start_event(self) -> None:
        # Asked for nothing: the context's last user message (Pipecat holds it back to send
        # as interactive, i.e. to be answered, after this) goes in as history, before audio.
        held = self.get_llm_adapter().last_user if not self._respond_on_setup and self._connected_time is None else None
        if held is not None:
            await super()._send_text_event(text=held.text, role=held.role)
        await super()._send_audio_input_start_event()

    async def _send_text_event(self, text: str, role: Role, interactive: bool = False) -> None:
        if interactive and not self._respond_on_setup and self._connected_time is None:
            return  # the held user message, already sent as history above
        await super()._send_text_event(text, role, interactive)

    async def _handle_usage_event(self, event_json: dict[str, Any]) -> None:
        # Pipecat's own handler sums speech and text; the same delta, the speech share kept.
        delta = event_json["usageEvent"].get("details", {}).get("delta", {})
        given, made = delta.get("input", {}), delta.get("output", {})
        speech_in, speech_out = int(given.get("speechTokens", 0)), int(made.get("speechTokens", 0))
        prompt = speech_in + int(given.get("textTokens", 0))
        completion = speech_out + int(made.get("textTokens", 0))
        if prompt or completion:
            await self.start_llm_usage_metrics(LLMTokenUsage(
                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion,
                input_audio_tokens=speech_in, output_audio_tokens=speech_out,
            ))

    @property
    def set_up(self) -> bool:
        """The setup (system prompt, history, audio input start) has gone out."""
        return self._connected_time is not None

    async def reset_conversation(self) -> None:
        # Called by the receive loop when the stream ended or failed (the ErrorFrame says
        # which). Reconnecting here would replay no tool calls and hide the break from the
        # engine: report the session dead instead.
        self.stream_ended = "the Nova Sonic response stream ended or failed"
        if self.on_stream_ended is not None:
            self.on_stream_ended(self.stream_ended)

    def alive(self) -> bool:
        task = self._receive_task
        return self.stream_ended is None and not (task is not None and task.done())
