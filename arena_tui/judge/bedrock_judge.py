"""Judge with Claude on AWS Bedrock through `boto3` (Converse, forced tool use for structure).

boto3 is synchronous, so each call runs in a worker thread. Region and credentials come from
the usual AWS chain (env, profile, SSO, instance role); nothing is stored. `maxTokens` is sized from
the turns asked (`budget`); a reply cut at it (`stopReason: max_tokens`) is a permanent error.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import boto3
import botocore.exceptions as bex
from botocore.config import Config
from botocore.parsers import ResponseParserError

from arena_tui.spine.events import TokenUsage
from arena_tui.spine.judges import DEFAULT_MODELS
from .backends import (InvalidOutput, JudgeBackend, JudgeReply, JudgeRequest, PermanentError, TransientError, parse_output,
                       retry_after_seconds)
from ..store.scrub import endpoint_label

DEFAULT_BEDROCK_MODEL = DEFAULT_MODELS["bedrock"]
_TRANSIENT_CODES = {
    "ThrottlingException",
    "ServiceUnavailableException",
    "InternalServerException",
    "ModelNotReadyException",
    "ModelTimeoutException",
    "TooManyRequestsException",
}
# the reply reached maxTokens, or the model's window (input and output together)
_CUT = ("max_tokens", "model_context_window_exceeded")


class BedrockJudge(JudgeBackend):
    def __init__(
        self,
        model: str = DEFAULT_BEDROCK_MODEL,  # (`spine.judges`' row)
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        timeout_s: float | None = None,  # default: request_timeout()
    ) -> None:
        self.identify("bedrock", model, timeout_s)
        self._where = {"region_name": region or os.environ.get("AWS_REGION"),  # boto3 itself reads only AWS_DEFAULT_REGION
                       "endpoint_url": endpoint_url}
        self._clients: dict[float, Any] = {}
        self.client = self._client(self.timeout_s)
        self.endpoint = endpoint_label(self.client.meta.endpoint_url)

    def _client(self, timeout_s: float) -> Any:
        """A client whose read timeout is `timeout_s`: boto3 fixes it per client, and a whole run's
        reply takes minutes where a turn's takes seconds (one client per timeout asked for)."""
        if timeout_s not in self._clients:
            # total_max_attempts=1: backends.judge_with_retries is the single retry policy.
            config = Config(read_timeout=timeout_s, connect_timeout=min(10.0, timeout_s),
                            retries={"total_max_attempts": 1, "mode": "standard"})
            try:
                self._clients[timeout_s] = boto3.client("bedrock-runtime", config=config, **self._where)
            except bex.NoRegionError as e:
                raise PermanentError("no AWS region configured (set AWS_REGION or --judge-region)") from e
        return self._clients[timeout_s]

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        return {
            "modelId": self.model,
            "system": [{"text": request.prefix}, {"cachePoint": {"type": "default"}}],
            "messages": [
                {
                    "role": "user",
                    # an empty history (a whole-run request) is no block: Converse refuses blank text
                    "content": [
                        *([{"text": request.history}, {"cachePoint": {"type": "default"}}] if request.history else []),
                        {"text": request.target},
                    ],
                }
            ],
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": request.schema_name,
                            "description": "Record the judgement asked for, in exactly this structure.",
                            "inputSchema": {"json": request.schema},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": request.schema_name}},
            },
            "inferenceConfig": {"maxTokens": self.output_budget(request)},  # sized from the turns asked (`budget`)
        }

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = self.request_body(request)
        try:
            resp = await asyncio.to_thread(self._client(request.timeout_s or self.timeout_s).converse, **body)
        except bex.ClientError as e:
            err = e.response.get("Error", {})
            code = err.get("Code", "")
            meta = e.response.get("ResponseMetadata", {})
            status = meta.get("HTTPStatusCode", 0) or 0
            text = f"{code or 'HTTP ' + str(status)} from {self.endpoint}: {err.get('Message', '')[:200]}"
            if code in _TRANSIENT_CODES or status == 429 or status >= 500:
                hint = retry_after_seconds((meta.get("HTTPHeaders") or {}).get("retry-after"))
                raise TransientError(text, hint) from e
            raise PermanentError(text) from e
        except (bex.ReadTimeoutError, bex.ConnectTimeoutError) as e:
            raise TransientError(f"{type(e).__name__}: no reply from {self.endpoint} within {request.timeout_s or self.timeout_s:g} s") from e
        except (bex.EndpointConnectionError, bex.ConnectionClosedError) as e:
            # their own text quotes the full request URL; name the endpoint instead
            raise TransientError(f"{type(e).__name__}: cannot reach {self.endpoint}") from e
        except bex.NoCredentialsError as e:
            raise PermanentError("no AWS credentials found (needed for --judge bedrock)") from e
        except (ResponseParserError, ValueError) as e:
            raise InvalidOutput(f"judge reply from {self.endpoint} could not be parsed: {str(e)[:200]}") from e
        if "output" not in resp:
            raise InvalidOutput(self._unreadable(resp))
        u = resp.get("usage", {}) or {}
        cached = int(u.get("cacheReadInputTokens", 0) or 0)
        written = int(u.get("cacheWriteInputTokens", 0) or 0)
        usage = TokenUsage(
            input_tokens=int(u.get("inputTokens", 0) or 0) + cached + written,
            cached_input_tokens=cached,
            output_tokens=int(u.get("outputTokens", 0) or 0),
        )
        stop = resp.get("stopReason")
        if stop in _CUT:
            raise self.truncated(request, body["inferenceConfig"]["maxTokens"], f"stopReason {stop}")
        content = (resp.get("output", {}).get("message", {}) or {}).get("content", []) or []
        for block in content:
            tool = block.get("toolUse")
            if tool and tool.get("name") == request.schema_name:
                return JudgeReply(parse_output(tool.get("input"), request.output), usage)
        raise InvalidOutput(f"no {request.schema_name} tool use in the reply (stopReason={stop})")

    def _unreadable(self, resp: dict[str, Any]) -> str:
        """botocore turns a body that is not JSON into `{"message": <text>}`; say what came back."""
        headers = (resp.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
        kind = (headers.get("content-type") or "").split(";")[0].strip() or "no content type"
        size = headers.get("content-length") or str(len(str(resp.get("message", "")).encode()))
        if "json" not in kind:
            return f"judge reply from {self.endpoint} was not JSON ({kind}, {size} bytes)"
        return f"judge reply from {self.endpoint} is not a Converse response ({kind}, {size} bytes)"
