"""What a fake says it used, counted the way its real service counts: text at about four
characters a token (OpenAI's and Google's rule of thumb), audio at its provider's tokens per
second of sound, the conversation so far billed as input again on every response (the realtime
APIs keep it in context). Each fake puts these figures in its own wire shape, so the engine's
usage records and the cost module are exercised offline. Sources, and where a rate is our
assumption, in docs/cost.md."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
GEMINI_AUDIO_PER_S = 32  # "Gemini represents each second of audio as 32 tokens" (Gemini API docs, token counting)
NOVA_SPEECH_PER_S = 25  # not published: our assumption (docs/cost.md)


def text_tokens(*texts: str) -> int:
    """Tokens of some text, at about four characters a token."""
    return sum(len(t) for t in texts) // CHARS_PER_TOKEN


def audio_tokens(ms: float, per_second: float) -> int:
    """Tokens of `ms` of audio at `per_second`."""
    return int(ms / 1000.0 * per_second)


def call_tokens(calls: Iterable[Any]) -> int:
    """Output tokens of function calls (their names and JSON arguments, as text)."""
    return text_tokens(*(f"{c.name}{json.dumps(c.args, sort_keys=True)}" for c in calls))


OPENAI_AUDIO_IN_PER_S = 10  # OpenAI Realtime: one token per 100 ms of user audio
OPENAI_AUDIO_OUT_PER_S = 20  # and per 50 ms of the model's (community-measured; docs/cost.md)


def realtime_usage(context: Iterable[str], heard_ms: float, said: str, spoken_ms: float, calls: Iterable[Any] = ()) -> dict[str, Any]:
    """A `response.done` `usage` in OpenAI Realtime's shape (also what xAI's and GLM's realtime
    APIs send, at OpenAI's audio rates: theirs are not published; and Azure Voice Live's, whose
    documented rates for Azure OpenAI models are the same, ~10 a second in and ~20 out): the
    conversation so far as input (its text, every second of user audio heard), the response's
    text, calls and audio."""
    text_in, audio_in = text_tokens(*context), audio_tokens(heard_ms, OPENAI_AUDIO_IN_PER_S)
    text_out, audio_out = text_tokens(said) + call_tokens(calls), audio_tokens(spoken_ms, OPENAI_AUDIO_OUT_PER_S)
    return {
        "total_tokens": text_in + audio_in + text_out + audio_out,
        "input_tokens": text_in + audio_in, "output_tokens": text_out + audio_out,
        "input_token_details": {"text_tokens": text_in, "audio_tokens": audio_in, "cached_tokens": 0},
        "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out},
    }
