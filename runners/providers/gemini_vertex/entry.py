"""Gemini Live on Vertex AI's catalog entry: plain data (`runners/provider_entry.py`), read by
`runners/catalog.py` without importing the runner, the fake or Pipecat.

Its key is a service account (`GOOGLE_APPLICATION_CREDENTIALS`, the JSON file's path), its
project `GOOGLE_CLOUD_PROJECT`; the location is `GOOGLE_CLOUD_LOCATION` (default us-central1).
Vertex names its Live models without the Developer API's `models/`."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider, gemini25_thinking

PROVIDERS = (
    Provider(
        name="gemini-vertex",
        runner="runners.providers.gemini_vertex.runner:GeminiVertexRunner",
        fake_class="runners.providers.gemini_vertex.fake:GeminiVertexFake",
        aliases={"vertex-gemini-live": "gemini-live-2.5-flash-native-audio"},
        key_env=("GOOGLE_APPLICATION_CREDENTIALS",),
        setting_env={"GOOGLE_CLOUD_PROJECT": "the Google Cloud project Vertex AI bills"},
        packages=("google.genai", "google.auth", "pipecat.services.google.gemini_live.vertex.llm"),
        install_hint="pip install 'pipecat-ai[google]'",
        efforts={"vertex-gemini-live": gemini25_thinking(0, 24576)},
        caps=Capabilities(output_rate=24000, session_limit_s=600.0),  # (a Live connection lasts about 10 minutes)
        # Vertex AI's Live API: 1,000 concurrent sessions per project (Firebase AI Logic, "Live API
        # limits and specs"); the Developer API's (`gemini`) depends on the project's usage tier
        max_sessions=1000,
    ),
)
