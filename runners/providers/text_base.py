"""What every text-model runner shares (OpenAI-compatible chat, Claude, Gemini, Bedrock, a
user's own text class): the text turn loop (`runners.run.text`), a fake that answers at once,
no connection to lose between HTTP requests, and latency as time to first token on our clock."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ..base import LocalFake, ProviderRunner

if TYPE_CHECKING:
    from pipecat.services.llm_service import LLMService

#: how a text run's latency is labelled: measured by us, not reported by the provider
TTFT_LABEL = "time to first token (our clock: request sent → first streamed token or tool call)"


class TextProviderRunner[S: LLMService[Any]](ProviderRunner[S]):
    """A text provider's runner; a subclass builds its Pipecat service and names its keys."""

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake:
        return self.fake_type()(self.fake_script(config, benchmark))  # no pace: it answers at once

    def is_alive(self, service: S) -> bool:
        return True  # HTTP: no connection to lose between requests; a failed request is seen as an error

    def provider_ttfb_label(self) -> str:
        return TTFT_LABEL
