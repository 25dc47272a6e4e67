"""How a text model's failed request is read, with each SDK's own exception: a timeout, a lost
connection, or an HTTP status no retry can fix. The text loop imports none of the SDKs (an SDK
never imported raised nothing), so these are the classes a real run's services raise."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import anthropic
import botocore.exceptions
import httpx
import openai
import pytest
from google.genai import errors as genai_errors
from pipecat.frames.frames import ErrorFrame

from runners.run.text import failure_reason, fatal_status

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def _status(cls, code: int):
    return cls("refused", response=httpx.Response(code, request=REQUEST), body=None)


@pytest.mark.parametrize(("exc", "reason", "fatal"), [
    (openai.APITimeoutError(request=REQUEST), "timeout", None),
    (anthropic.APITimeoutError(request=REQUEST), "timeout", None),
    (httpx.ReadTimeout("slow", request=REQUEST), "timeout", None),
    (asyncio.TimeoutError(), "timeout", None),
    (botocore.exceptions.ReadTimeoutError(endpoint_url="http://127.0.0.1:9"), "timeout", None),
    (openai.APIConnectionError(request=REQUEST), "disconnect", None),
    (anthropic.APIConnectionError(request=REQUEST), "disconnect", None),
    (httpx.RemoteProtocolError("closed", request=REQUEST), "disconnect", None),
    (ConnectionResetError(), "disconnect", None),
    (botocore.exceptions.EndpointConnectionError(endpoint_url="http://127.0.0.1:9"), "disconnect", None),
    (_status(openai.AuthenticationError, 401), "error", 401),
    (_status(anthropic.NotFoundError, 404), "error", 404),
    (_status(openai.InternalServerError, 500), "error", None),
    (genai_errors.ClientError(403, {"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}}), "error", 403),
    (botocore.exceptions.ClientError({"Error": {"Code": "AccessDeniedException"},
                                      "ResponseMetadata": {"HTTPStatusCode": 403}}, "ConverseStream"), "error", 403),
    (ValueError("our own bug"), "error", None),
])
def test_each_sdks_failure_is_read_as_what_it_is(exc, reason, fatal) -> None:
    frame = ErrorFrame(error=str(exc), exception=exc)
    assert (failure_reason(frame), fatal_status(frame)) == (reason, fatal)


def test_loading_the_engine_imports_no_text_sdk() -> None:
    """An audio run's start does not pay for the four text SDKs (anthropic alone took 0.8 s)."""
    code = "import sys, runners.engine; print(sorted(m for m in ('anthropic', 'openai', 'google.genai', 'botocore') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
