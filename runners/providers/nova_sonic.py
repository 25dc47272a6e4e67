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

Nothing here imports Pipecat's Nova service at module import time: without the AWS SDK
the preflight must still be able to say which package is missing.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from arena_tui.spine.settings import Rotation, RunSettings

from ..base import HistoryItem, ProviderRunner, Publish, SessionSpec
from .aws import DEFAULT_REGION, aws_region, bedrock_runtime
from arena_tui.spine.events import ErrorEvent

ROTATE_AFTER_S = 180.0  # the reference's value for conversation_bench (49K-char prompt)
AWS_SESSION_LIMIT_S = 480.0  # AWS ends a Nova Sonic stream after ~8 minutes
MAX_MESSAGE_CHARS = 50_000  # Nova history: ~50 KB per message (Pipecat's continuation uses the same cap)


def tool_note(name: str, args: Any = None, result: Any = None, *, called: bool = True, answered: bool = True) -> str:
    """A tool call and/or its result as assistant text (Nova history has no tool blocks)."""
    a = json.dumps(args or {}, ensure_ascii=False, sort_keys=True)
    r = json.dumps(result, ensure_ascii=False, default=str) if result is not None else "COMPLETED"
    if called and answered:
        return f"(I called the tool {name} with {a}; it returned {r}.)"
    if called:
        return f"(I called the tool {name} with {a}.)"
    return f"(The tool {name} returned {r}.)"


def history_messages(history: list[HistoryItem]) -> list[tuple[str, str]]:
    """(role, text) Nova history blocks in conversation order: tool call + result merged into
    one assistant note, consecutive blocks of the same role joined."""
    out: list[tuple[str, str]] = []
    results = {h.call_id: h for h in history if h.kind == "tool_result" and h.call_id}
    called: set[str] = set()

    def add(role: str, text: str) -> None:
        if not text:
            return
        if out and out[-1][0] == role:
            out[-1] = (role, out[-1][1] + "\n" + text)
        else:
            out.append((role, text))

    for h in history:
        if h.kind == "user":
            add("USER", h.text)
        elif h.kind == "assistant":
            add("ASSISTANT", h.text)
        elif h.kind == "tool_call":
            res = results.get(h.call_id)
            called.add(h.call_id)
            add("ASSISTANT", tool_note(h.name, h.args, res.response if res else None, answered=res is not None))
        elif h.call_id not in called:  # a result whose call was not kept
            add("ASSISTANT", tool_note(h.name, result=h.response, called=False))
    return [(role, text[:MAX_MESSAGE_CHARS]) for role, text in out]


@functools.cache
def service_class() -> type:
    """`ArenaNovaSonicService` (built on first use so a missing AWS SDK is a preflight message)."""
    from pipecat.adapters.llm.services.aws_nova_sonic_adapter import (  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)
        AWSNovaSonicConversationHistoryMessage,
        AWSNovaSonicLLMAdapter,
        Role,
    )
    from pipecat.audio.utils import create_stream_resampler  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)
    from pipecat.frames.frames import InputAudioRawFrame  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)
    from pipecat.services.aws.nova_sonic.session_continuation import (  # deferred: Pipecat's Nova Sonic service and the AWS SDK load when a session is built, so without them the runner still preflights (naming the missing package)
        SessionContinuationParams,
    )

    class ToolTextAdapter(AWSNovaSonicLLMAdapter):
        """Prepends the replayed history and keeps tool messages of the context as text
        (the stock adapter drops them)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.replay: list[AWSNovaSonicConversationHistoryMessage] = []
            self._call_names: dict[str, str] = {}
            self.last_user: AWSNovaSonicConversationHistoryMessage | None = None  # of the last params read

        async def get_llm_invocation_params(self, context: Any, **kwargs: Any) -> Any:
            params = await super().get_llm_invocation_params(context, **kwargs)
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
            replay: list[tuple[str, str]] | None = None,
            respond: bool = True,
            client_factory: Any = None,
            endpoint: str | None = None,
            on_stream_ended: Any = None,
            **kwargs: Any,
        ) -> None:
            kwargs.setdefault("session_continuation", SessionContinuationParams(enabled=False))
            super().__init__(**kwargs)
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

        async def _handle_input_audio_frame(self, frame: Any) -> None:
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

        async def _send_text_event(self, text: str, role: Any, interactive: bool = False) -> None:
            if interactive and not self._respond_on_setup and self._connected_time is None:
                return  # the held user message, already sent as history above
            await super()._send_text_event(text, role, interactive)

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

    return ArenaNovaSonicService


class NovaSonicRunner(ProviderRunner):

    def endpoint(self, config: RunSettings) -> str:
        """`--base-url`, the in-process fake, or the region's Bedrock runtime."""
        return super().endpoint(config) or bedrock_runtime()

    def preflight(self, config: RunSettings) -> list[str]:
        problems = super().preflight(config)
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

    def build_service(self, spec: SessionSpec) -> Any:
        cls = service_class()
        settings = cls.Settings(model=spec.model, system_instruction=spec.system_prompt)
        common: dict[str, Any] = {
            "settings": settings,
            "tools": self.tools(spec.tools),
            "replay": history_messages(spec.history),
            "respond": spec.kickoff is not None,
            "on_stream_ended": self._stream_ended_reporter(spec.publish),
        }
        if self.fake is not None:
            from ..fakes.nova_sonic import NovaSonicFake  # deferred: the local fake (a wire-protocol server) loads only for --fake runs

            assert isinstance(self.fake, NovaSonicFake)
            return cls(
                access_key_id="fake-id", secret_access_key="fake-secret", region=DEFAULT_REGION,
                client_factory=self.fake.client, endpoint=self.fake.base_url, **common,
            )
        env = os.environ
        return cls(
            access_key_id=env.get("AWS_ACCESS_KEY_ID", ""),
            secret_access_key=env.get("AWS_SECRET_ACCESS_KEY", ""),
            session_token=env.get("AWS_SESSION_TOKEN") or None,
            region=aws_region(),
            endpoint=spec.config.base_url,
            **common,
        )

    def is_alive(self, service: Any) -> bool:
        return service.alive()

    def session_ready(self, service: Any) -> bool:
        return service.set_up

    def _stream_ended_reporter(self, publish: Publish | None) -> Any:
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


