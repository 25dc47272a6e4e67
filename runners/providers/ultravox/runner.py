"""Ultravox Realtime through Pipecat's `UltravoxRealtimeLLMService`.

Ultravox is call-based: a REST request creates a call (system prompt, tools, audio format,
history) and returns a `joinUrl`; the websocket then carries only audio and data messages.
Pipecat posts that request to a hard-coded https://api.ultravox.ai, so this runner creates
calls itself (real API, `--base-url`, or the local fake) and hands Pipecat
`JoinUrlInputParams`. Creating a call is async while `build_service` is not: the first call
is created in `start()` (so a bad key or endpoint fails the run before it starts, naming the
HTTP status and Ultravox's message), later ones in the service's own `start()`.

Pipecat's Ultravox service never rejoins: a rotation is a NEW call and a new service. The
API forbids `initialMessages` together with `?priorCallId=`, so a new call gets one of:
- `replay="history"` (default): our own history as `initialMessages` (user/agent text and
  tool calls/results as TOOL_CALL/TOOL_RESULT messages), cut to the engine's budget like
  every other provider's replay, so the `session_rotated` summary is exactly what was sent;
- `replay="prior_call"`: `?priorCallId=<previous call>`; Ultravox carries the prior call's
  messages over server-side and we send none (summarised as `provider_resumption`).
The agent speaks first on a call by default, a call that starts with history too; a session
opened without a kickoff (every rotation, a resumption, a run without greeting) is a call whose
first speaker is the user (`firstSpeakerSettings.user`), so no unasked-for reply lands in a turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pipecat.frames.frames import StartFrame
from pipecat.services.llm_service import LLMService
from pipecat.services.ultravox.llm import JoinUrlInputParams, UltravoxRealtimeLLMService
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from arena_tui.spine.benchmark import Benchmark, Tool
from arena_tui.spine.settings import Rotation, RunSettings

from ...base import HistoryItem, ProviderRunner, Publish, RunError, SessionSpec
from ..fair_receive import fair
from arena_tui.spine.events import ErrorEvent

DEFAULT_API = "https://api.ultravox.ai"
#: Ultravox ends a call at its maxDuration (at most one hour); rotate at a turn boundary first.
MAX_CALL_AGE_S = 3000.0
FAKE_KEY = "ultravox-fake-not-a-secret"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ROLES = {"user": "MESSAGE_ROLE_USER", "assistant": "MESSAGE_ROLE_AGENT",
          "tool_call": "MESSAGE_ROLE_TOOL_CALL", "tool_result": "MESSAGE_ROLE_TOOL_RESULT"}


class UltravoxCallError(Exception):
    """Creating an Ultravox call failed; the message names the endpoint, status and reason."""


@dataclass
class CallInfo:
    """One created call, as the runner remembers it (never the key)."""

    call_id: str
    join_url: str
    prior_call_id: str | None = None
    initial_messages: int = 0
    agent_first: bool = True  # the agent speaks when the call is joined (Ultravox's default)


def api_root(base_url: str | None) -> str:
    """`https://api.ultravox.ai`, or an override given with or without its `/api` suffix."""
    root = (base_url or DEFAULT_API).rstrip("/")
    return root.removesuffix("/api")


def selected_tools(tools: list[Tool]) -> list[dict[str, Any]]:
    """The benchmark's tools as client-implemented temporary tools (answered over the socket)."""
    bad = [t.name for t in tools if not _TOOL_NAME.match(t.name)]
    if bad:
        raise UltravoxCallError(
            f"tool name(s) {', '.join(map(repr, bad))} not accepted by Ultravox (letters, digits, _ and -, at most 64)"
        )
    out = []
    for t in tools:
        required = set(t.parameters.get("required", []))
        params = [
            {"name": name, "location": "PARAMETER_LOCATION_BODY", "schema": schema, "required": name in required}
            for name, schema in (t.parameters.get("properties") or {}).items()
        ]
        out.append({"temporaryTool": {"modelToolName": t.name, "description": t.description,
                                      "dynamicParameters": params, "client": {}}})
    return out


def initial_messages(history: list[HistoryItem]) -> list[dict[str, Any]]:
    """Our replay items as Ultravox call messages, tool structure kept."""
    out: list[dict[str, Any]] = []
    for h in history:
        msg: dict[str, Any] = {"role": _ROLES[h.kind]}
        if h.kind in ("user", "assistant"):
            msg["text"] = h.text
        else:
            payload = h.args if h.kind == "tool_call" else h.response
            msg["text"] = json.dumps(payload, ensure_ascii=False) if payload is not None else "COMPLETED"
            msg["toolName"] = h.name
            msg["invocationId"] = h.call_id
        out.append(msg)
    return out


def call_body(model: str, system_prompt: str, tools: list[Tool], sample_rate: int,
              history: list[HistoryItem] | None = None, *, agent_first: bool = True) -> dict[str, Any]:
    """The Create Call request body; audio both ways at the run's rate (no resampling anywhere).
    `agent_first=False`: the agent waits for the user (a call asked for nothing)."""
    body: dict[str, Any] = {
        "systemPrompt": system_prompt,
        "model": model,
        "selectedTools": selected_tools(tools),
        "medium": {"serverWebSocket": {"inputSampleRate": sample_rate, "outputSampleRate": sample_rate}},
    }
    if history:
        body["initialMessages"] = initial_messages(history)
    if not agent_first:
        body["firstSpeakerSettings"] = {"user": {}}
    return body


async def create_call(api: str, api_key: str, body: dict[str, Any], prior_call_id: str | None = None,
                      timeout_s: float = 20.0) -> CallInfo:
    """POST /api/calls; every failure is an UltravoxCallError naming status and message, never the key."""
    import aiohttp  # deferred: aiohttp loads only when an Ultravox call is created

    url = f"{api}/api/calls"
    params = {"priorCallId": prior_call_id} if prior_call_id else None
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as http,
            http.post(url, json=body, params=params, headers={"X-Api-Key": api_key}) as resp,
        ):
            status, text = resp.status, await resp.text()
    except (aiohttp.ClientError, TimeoutError, OSError) as e:
        raise UltravoxCallError(_scrub(f"cannot reach {url}: {type(e).__name__}: {e}", api_key)) from None
    if status not in (200, 201):
        raise UltravoxCallError(_scrub(f"{url} answered HTTP {status}: {_error_message(text)}", api_key))
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise UltravoxCallError(_scrub(f"{url} answered HTTP {status} with a body that is not JSON: {text[:200]!r}", api_key)) from None
    if not isinstance(data, dict) or not data.get("joinUrl") or not data.get("callId"):
        raise UltravoxCallError(_scrub(f"{url} answered HTTP {status} without callId/joinUrl: {text[:200]!r}", api_key))
    return CallInfo(call_id=str(data["callId"]), join_url=str(data["joinUrl"]), prior_call_id=prior_call_id,
                    initial_messages=len(body.get("initialMessages", [])), agent_first="firstSpeakerSettings" not in body)


def _error_message(text: str) -> str:
    """Ultravox's error body says why in `detail` (or per-field lists); fall back to the text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text.strip()[:300] or "(empty body)"
    if isinstance(data, dict):
        for key in ("detail", "message", "error"):
            if data.get(key):
                return str(data[key])[:300]
        return "; ".join(f"{k}: {v}" for k, v in data.items())[:300] or "(empty JSON)"
    return str(data)[:300]


def _scrub(message: str, api_key: str) -> str:
    return message.replace(api_key, "***") if api_key else message


class UltravoxCallService(UltravoxRealtimeLLMService):
    """Pipecat's Ultravox service that may create its call itself when the pipeline starts,
    answers client tools synchronously, and says when its socket is alive or why it closed."""

    _params: JoinUrlInputParams  # always a call's join URL (Pipecat's also takes an agent or a one-shot call)

    def __init__(self, *, sample_rate: int, call: CallInfo | None = None,
                 make_call: Callable[[], Awaitable[CallInfo]] | None = None,
                 publish: Publish | None = None) -> None:
        super().__init__(params=JoinUrlInputParams(join_url=call.join_url if call else "ws://pending"))
        # Pipecat hard-codes 48 kHz for both directions (input resampled to it, output frames
        # labelled with it). Our calls ask Ultravox for the run's rate both ways instead, so
        # input goes out unresampled and bot audio arrives at the rate the output plays.
        self._sample_rate = sample_rate
        self.call = call
        self._make_call = make_call  # async () -> CallInfo, when `call` is None
        self.phase: Literal["new", "creating", "joining", "joined", "failed", "closed"] = "new"
        self.failure: str | None = None
        self.publish = publish  # the engine's, from the session's spec

    @property
    def ready(self) -> bool:
        """The call is joined (or failed: then not alive); audio sent before would be lost."""
        return self.phase not in ("new", "creating", "joining")

    def connection_alive(self) -> bool:
        """Alive while the call is created and joined; then while its receive loop runs."""
        if not self.ready:
            return True
        task = self._receive_task
        return self.phase == "joined" and self._socket is not None and task is not None and not task.done()

    async def start(self, frame: StartFrame) -> None:
        if self.call is None and self._make_call is not None:
            self.phase = "creating"
            try:
                self.call = await self._make_call()
            except UltravoxCallError as e:
                self.phase, self.failure = "failed", f"Ultravox call creation failed: {e}"
                # The base service's start (metrics, settings) without joining anything.
                await LLMService.start(self, frame)
                await self.push_error(self.failure, force_treat_as_permanent=True)
                return
            self._params = JoinUrlInputParams(join_url=self.call.join_url)
        self.phase = "joining"
        await super().start(frame)
        self.phase = "joined" if self._socket is not None else "failed"

    def _function_is_async(self, function_name: str) -> bool:
        # A handler registered with cancel_on_interruption=False is an "async tool" to Pipecat's
        # Ultravox service: it sends a placeholder client_tool_result at once and the real
        # answer later as user text. The engine's handler answers at once from the turn spec,
        # however it is registered, so the answer itself must be the client_tool_result.
        return False

    async def _receive_messages(self) -> None:
        self._socket = fair(self._socket)  # a burst: a share of each loop step across sessions (`fair_receive`)
        try:
            await super()._receive_messages()
        except ConnectionClosed:
            pass  # reported just below; the engine sees a dead session and opens a new call
        finally:
            if not self._disconnecting and self._socket is not None and self.phase == "joined":
                self.phase = "closed"
                code, reason = self._socket.close_code, self._socket.close_reason
                call_id = self.call.call_id if self.call else "?"
                if self.publish is not None:
                    self.publish(ErrorEvent, where="provider", fatal=False,
                                 message=f"Ultravox closed call {call_id} (websocket code {code}: {reason or 'no reason'})")

    async def _send(self, content: bytes | dict[str, Any]) -> None:
        # After Ultravox ended the call, every 20 ms audio frame would fail with a "permanent"
        # send error, and the engine would rotate for an "error" instead of a "disconnect".
        sock = self._socket
        if self.phase == "closed" or (sock is not None and sock.state is not State.OPEN):
            return
        await super()._send(content)


class UltravoxRunner(ProviderRunner[UltravoxCallService]):
    default_endpoint = DEFAULT_API
    fake_key = FAKE_KEY

    def __init__(self, replay: Literal["history", "prior_call"] = "history") -> None:
        if replay not in ("history", "prior_call"):
            raise ValueError(f"ultravox: replay must be 'history' or 'prior_call' (got {replay!r})")
        self.replay = replay
        self.api: str = DEFAULT_API
        self.calls: list[CallInfo] = []
        self._first: CallInfo | None = None
        self._key = ""

    def rotation_policy(self, config: RunSettings, system_prompt: str) -> Rotation:
        if "max_age_s" in config.rotation.model_fields_set:
            return config.rotation
        return config.rotation.model_copy(update={"max_age_s": MAX_CALL_AGE_S})

    def replay_strategy(self) -> str:
        return "full_history" if self.replay == "history" else "provider_resumption"

    def provider_ttfb_label(self) -> str:
        return "Ultravox TTFB (Pipecat metrics; only with a local VAD stop)"

    async def on_start(self, config: RunSettings, benchmark: Benchmark) -> None:
        self.calls = []
        self.api = api_root(self.endpoint(config))
        self._key = self.api_key(config)
        # The first call now: a refused key or a bad endpoint stops the run before it starts.
        try:
            body = call_body(self.resolve_model(config.model), benchmark.system_prompt, benchmark.tools, config.sample_rate,
                             agent_first=config.greeting.enabled)
            self._first = await create_call(self.api, self._key, body)
        except UltravoxCallError as e:
            raise RunError(f"{self.name}: creating the call failed: {e}") from None
        self.calls.append(self._first)

    async def on_stop(self) -> None:
        self._first = None
        self._key = ""

    def build_service(self, spec: SessionSpec) -> UltravoxCallService:
        first, self._first = self._first, None
        agent_first = spec.kickoff is not None  # the kickoff is the agent's first turn: Ultravox takes no prompt for it
        if first is not None and not spec.history and first.agent_first == agent_first:
            return UltravoxCallService(call=first, sample_rate=spec.sample_rate, publish=spec.publish)
        prior = self.calls[-1].call_id if (self.replay == "prior_call" and self.calls) else None
        body = call_body(spec.model, spec.system_prompt, spec.tools, spec.sample_rate, None if prior else spec.history,
                         agent_first=agent_first)
        api, key = self.api, self._key

        async def make_call() -> CallInfo:
            call = await create_call(api, key, body, prior_call_id=prior)
            self.calls.append(call)
            return call

        return UltravoxCallService(make_call=make_call, sample_rate=spec.sample_rate, publish=spec.publish)

    def session_ready(self, service: UltravoxCallService) -> bool:
        return service.ready

    def service_endpoint(self, service: UltravoxCallService) -> str:
        return service._params.join_url  # (Pipecat's: the call's websocket)

    def is_alive(self, service: UltravoxCallService) -> bool:
        return service.connection_alive()
