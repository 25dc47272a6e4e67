"""Gemini as a text model through Pipecat's `GoogleLLMService`, as the reference runs
`--service google` (the Gemini API's generateContent, not Gemini Live).

A text model: the turn's text in, the streamed reply and function calls out (`runners.run.text`).
The runner gives the service its own `HttpOptions`: the endpoint (the local fake with `--fake`,
`--base-url` otherwise), a timeout, and one attempt per request, so every failed request is the
engine's to see and retry in a rebuilt session.
"""

from __future__ import annotations

from google.genai.types import HttpOptions, HttpRetryOptions
from pipecat.services.google.llm import GoogleLLMService
from pipecat.utils.types import NOT_GIVEN

from ...base import SessionSpec
from ..effort import google_thinking
from ..text_base import TextProviderRunner

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


class GoogleTextRunner(TextProviderRunner[GoogleLLMService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = "google-fake-not-a-secret"

    def service_endpoint(self, service: GoogleLLMService) -> str:
        options = service._http_options  # (Pipecat's: google-genai's client is opened with them)
        return (options.base_url if options is not None else None) or self.default_endpoint

    def build_service(self, spec: SessionSpec) -> GoogleLLMService:
        cfg = spec.config
        options = HttpOptions(base_url=self.endpoint(cfg), timeout=int(self.reply_timeout_ms(cfg)),
                              retry_options=HttpRetryOptions(attempts=1))
        thinking = google_thinking(cfg)  # `--effort`: generationConfig.thinkingConfig
        return GoogleLLMService(
            api_key=self.api_key(cfg),
            http_options=options,
            settings=GoogleLLMService.Settings(model=spec.model, system_instruction=spec.system_prompt,
                                               thinking=GoogleLLMService.ThinkingConfig(**thinking) if thinking else NOT_GIVEN),
        )
