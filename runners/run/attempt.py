"""What one attempt of one turn produced, in both loops (`audio_attempt.Attempt`, `text`'s): its
text (control tokens left out: `spoken_text`), its calls and whether they are answered, its
responses, its tokens, and how it ended. A retry starts a fresh one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipecat.metrics.metrics import LLMUsageMetricsData

from arena_tui.spine.events import ToolCallRecord

from ..tools import ToolResolver

_CONTROL_TOKEN = re.compile(r"<[A-Za-z_]*\d*>|<\|[^|>]*\|>")


def spoken_text(text: str) -> str:
    """Assistant text without control tokens."""
    return _CONTROL_TOKEN.sub("", text).strip()


@dataclass
class AttemptBase:
    """What one attempt of one turn produced, in both loops; a retry starts a fresh one."""

    turn_index: int
    number: int
    started_ms: float
    resolver: ToolResolver | None = None
    assistant_text: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    pending_tools: int = 0
    responses_started: int = 0
    responses_ended: int = 0
    response_active: bool = False
    tokens: dict[str, int] = field(default_factory=dict)
    ends_session: bool = False
    error: str | None = None
    #: the attempt was lost to an infrastructure failure before the model answered (`infra.infra_failure`)
    infra: str | None = None

    def count_usage(self, usage: LLMUsageMetricsData) -> None:
        """Add a usage report to the attempt's token counts."""
        u = usage.value
        for key, val in (
            ("input_tokens", u.prompt_tokens),
            ("output_tokens", u.completion_tokens),
            ("cached_input_tokens", u.cache_read_input_tokens),
        ):
            if val:
                self.tokens[key] = self.tokens.get(key, 0) + int(val)
