"""OpenAI's full-duplex `gpt-live-1` (`OpenAILiveLLMService`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="openai-live",
        runner="runners.providers.openai_live.runner:OpenAILiveRunner",
        fake_class="runners.providers.openai_live.fake:OpenAILiveFake",
        # `gpt-live-1`: its backend OpenAI-hosted (Responses delegation); `gpt-live-1+<text model>`:
        # one of ours as its client backend (one listed; the family takes any text alias)
        aliases={"gpt-live-1": "gpt-live-1", "gpt-live-1+gpt-4.1-mini": "gpt-live-1"},
        key_env=("OPENAI_API_KEY",),
        packages=("websockets", "pipecat.services.openai.live.llm", "pipecat.workers.llm.backend_llm_worker"),
        alias_family="gpt-live-1+",
        # no session limit documented; `session.start` fixes model, voice and format, so a run
        # outlives a session only by our rotation (the history as startup `input`, text only)
        caps=Capabilities(output_rate=24000, duplex=True, delegation=True),
    ),
)
