"""GLM-Realtime's server events, typed (as Pipecat types OpenAI Realtime's in its `events.py`).

One pydantic model per server event the service acts on or knows to ignore, parsed by its
`type`; every field GLM may leave out has a default, so a sparse event parses and a wrongly
typed one is refused with one line naming the event and the field instead of failing deep in
a handler. Event types not modelled here (`input_audio_buffer.committed`,
`conversation.item.created`, `response.audio_transcript.done`, ...) parse to None.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError


class GLMEventError(ValueError):
    """A server message that is not JSON, or an event whose fields have the wrong types."""


class GLMServerEvent(BaseModel):
    """Fields every server event may carry; unknown extra fields are kept, never refused."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    event_id: str | None = None


class SessionCreated(GLMServerEvent):
    type: Literal["session.created"]


class SessionUpdated(GLMServerEvent):
    type: Literal["session.updated"]
    session: dict[str, Any] | None = None


class Heartbeat(GLMServerEvent):
    type: Literal["heartbeat"]


class ResponseCreated(GLMServerEvent):
    type: Literal["response.created"]
    response: dict[str, Any] | None = None


class ResponseAudioDelta(GLMServerEvent):
    """`delta`: base64 PCM16 at the session's output rate."""

    type: Literal["response.audio.delta"]
    delta: str = ""


class ResponseAudioTranscriptDelta(GLMServerEvent):
    type: Literal["response.audio_transcript.delta"]
    delta: str = ""


class ResponseTextDelta(GLMServerEvent):
    type: Literal["response.text.delta"]
    delta: str = ""


class FunctionCallArgumentsDone(GLMServerEvent):
    """`arguments`: the call's JSON arguments as a string (parsed by the service, which reports
    unparseable ones by tool name)."""

    type: Literal["response.function_call_arguments.done"]
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None


class InputTranscriptionCompleted(GLMServerEvent):
    type: Literal["conversation.item.input_audio_transcription.completed"]
    transcript: str | None = None


class Usage(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


class ResponseBody(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    usage: Usage | None = None


class ResponseDone(GLMServerEvent):
    type: Literal["response.done"]
    response: ResponseBody | None = None
    usage: Usage | None = None  # some builds send it beside the response instead of inside

    def token_usage(self) -> Usage | None:
        """The response's usage (inside, else beside it); None when GLM reported none."""
        for usage in (self.response.usage if self.response else None, self.usage):
            if usage is not None and usage.model_fields_set:
                return usage
        return None


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    type: str | None = None
    code: str | int | None = None
    message: str | None = None


class ServerError(GLMServerEvent):
    type: Literal["error"]
    error: ErrorDetail | None = None


#: The discriminator: each model's `type` literal → the model (one home for the wire names).
SERVER_EVENTS: dict[str, type[GLMServerEvent]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls
    for cls in (
        SessionCreated,
        SessionUpdated,
        Heartbeat,
        ResponseCreated,
        ResponseAudioDelta,
        ResponseAudioTranscriptDelta,
        ResponseTextDelta,
        FunctionCallArgumentsDone,
        InputTranscriptionCompleted,
        ResponseDone,
        ServerError,
    )
}


def parse_server_event(raw: str | bytes) -> GLMServerEvent | None:
    """The typed event for one websocket message; None for an event type not modelled here.

    Raises GLMEventError (one line, naming the event type and field) for a message that is not
    a JSON object or whose fields have the wrong types.
    """
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise GLMEventError(f"GLM-Realtime sent a non-JSON message: {str(raw)[:80]!r}") from None
    if not isinstance(data, dict):
        raise GLMEventError(f"GLM-Realtime sent a message that is not a JSON object: {str(raw)[:80]!r}")
    model = SERVER_EVENTS.get(str(data.get("type", "")))
    if model is None:
        return None
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "?"
        raise GLMEventError(f"GLM-Realtime sent a malformed {data['type']} event: {field}: {first['msg']}") from None
