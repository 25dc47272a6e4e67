"""Judge with Claude through the real `anthropic` client (the Messages API, forced strict tool use).

The reference harness judges with Claude Opus 4.5; so does this judge by default. Structure comes
from one strict tool whose input schema is the request's (in Anthropic's dialect:
`provider_schema.for_anthropic`) and a `tool_choice` that forces it. The prefix (system) and the
history carry cache breakpoints, so a run's requests reuse what the first one wrote.
"""

from __future__ import annotations

from typing import Any

import anthropic
from anthropic import AsyncAnthropic
from anthropic.types import Message, ToolUseBlock

from arena_tui.spine.events import TokenUsage
from .backends import InvalidOutput, JudgeReply, JudgeRequest, KeyedJudge, parse_output
from ..store.scrub import endpoint_label
from .provider_schema import for_anthropic
from .sdk_errors import parsed, sdk_call

_CACHE = {"type": "ephemeral"}
# the reply reached max_tokens, or the model's window (input and output together)
_CUT = ("max_tokens", "model_context_window_exceeded")


class AnthropicJudge(KeyedJudge):
    kind = "anthropic"

    def connect(self, key: str, base_url: str | None) -> None:
        # max_retries=0: backends.judge_with_retries is the single retry policy.
        self.client = AsyncAnthropic(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        self.endpoint = endpoint_label(str(self.client.base_url))

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        """Tools, then system, then messages is the order Anthropic caches in: the tool and the
        prefix are one cached block for every request of a benchmark, the history the next."""
        history = [{"type": "text", "text": request.history, "cache_control": _CACHE}] if request.history else []
        return {
            "model": self.model,
            "max_tokens": self.output_budget(request),  # sized from the turns asked (`budget`); the SDK's own
            # non-streaming limit does not apply: every request gives its timeout
            "system": [{"type": "text", "text": request.prefix, "cache_control": _CACHE}],
            "messages": [{"role": "user", "content": [*history, {"type": "text", "text": request.target}]}],
            "tools": [{
                "name": request.schema_name,
                "description": "Record the judgement asked for, in exactly this structure.",
                "input_schema": for_anthropic(request.schema),
                "strict": True,
            }],
            "tool_choice": {"type": "tool", "name": request.schema_name},
        }  # fmt: skip

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        timeout = request.timeout_s or self.timeout_s  # a whole run's reply takes minutes
        body = self.request_body(request)
        raw = await sdk_call(self.client.messages.with_raw_response.create(**body, timeout=timeout),
                             anthropic, self.endpoint, timeout)
        msg: Message = await parsed(raw, Message, self.endpoint, "a Messages API message")
        try:
            u = msg.usage
            cached = u.cache_read_input_tokens or 0
            written = u.cache_creation_input_tokens or 0
            usage = TokenUsage(input_tokens=u.input_tokens + cached + written, cached_input_tokens=cached,
                               output_tokens=u.output_tokens)
            blocks, stop = list(msg.content), msg.stop_reason
        except (AttributeError, TypeError, ValueError) as e:  # JSON, but not shaped like a message
            raise InvalidOutput(f"judge reply from {self.endpoint} is not a Messages API message ({type(e).__name__})") from e
        if stop in _CUT:
            raise self.truncated(request, body["max_tokens"], f"stop_reason {stop}")
        if stop == "refusal":
            raise InvalidOutput("judge refused (stop_reason refusal)")
        for block in blocks:
            if isinstance(block, ToolUseBlock) and block.name == request.schema_name:
                return JudgeReply(parse_output(block.input, request.output), usage)
        raise InvalidOutput(f"no {request.schema_name} tool use in the reply (stop_reason={stop})")

    async def aclose(self) -> None:
        await self.client.close()
