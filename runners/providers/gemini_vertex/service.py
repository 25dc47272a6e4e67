"""`ArenaGeminiVertexService`: Gemini Live's benchmark service (`gemini_live/service.py`: 16 kHz input,
client-side turns, the tool-result nudge, history seeding, Pipecat's reconnects reported) on
Pipecat's `GeminiLiveVertexLLMService`: the client is google-genai's Vertex AI one (a service
account's OAuth token, a project and a location; Pipecat refreshes the token when it builds the
service), no `history_config` and no NON_BLOCKING tools (Vertex takes neither)."""

from __future__ import annotations

from pipecat.services.google.gemini_live.vertex.llm import GeminiLiveVertexLLMService

from ..gemini_live.service import ArenaGeminiLiveService


class ArenaGeminiVertexService(ArenaGeminiLiveService, GeminiLiveVertexLLMService):
    pass
