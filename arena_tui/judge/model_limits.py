"""What each judge model can take and give in one request: its context window, its output cap and
how much of that output it may spend thinking. Data, read by `budget` to size a request's output
budget and to split a whole run that cannot fit one request.

Figures are the providers' published model cards (OpenAI, Anthropic, Google, the Ollama library);
a Bedrock id is its Claude model's (`us.anthropic.claude-sonnet-4-5-…` is `claude-sonnet-4-5`). A
model id matches the longest row it starts with, so a newer model of a family takes its family's
row (`claude-opus-4-7`: `claude-opus-4`'s 32,000). A model in no row gets a conservative default
(`DEFAULT`: 128,000-token window, 8,192 output tokens; a local model `LOCAL_DEFAULT`: 32,768), so an
unknown judge is split into more requests rather than cut off. Ollama says a local model's window
itself (`/api/show`), which then wins over the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from arena_tui.spine.judges import LOCAL


@dataclass(frozen=True)
class ModelLimits:
    context: int  # tokens of prompt and reply together
    output: int  # the most a request may ask for (max_tokens / max_completion_tokens / maxOutputTokens)
    thinking: int = 0  # output tokens a reasoning model may spend before its answer (counted in `output`)
    source: str = "table"  # "table", "default" or "server" (the server said its window)

    def told(self, context: int) -> ModelLimits:
        """These limits with the window the server reported (a local model's own output is its window)."""
        return replace(self, context=context, output=min(self.output, context), source="server")


# (model id prefix, context window, output cap, thinking allowance)
TABLE: tuple[tuple[str, int, int, int], ...] = (
    # OpenAI: a reasoning model's reasoning tokens count in max_completion_tokens
    ("gpt-5.2", 400_000, 128_000, 16_384),
    ("gpt-5.1", 400_000, 128_000, 16_384),
    ("gpt-5", 400_000, 128_000, 16_384),
    ("gpt-5-chat", 128_000, 16_384, 0),
    ("gpt-5.1-chat", 128_000, 16_384, 0),
    ("gpt-5.2-chat", 128_000, 16_384, 0),
    ("gpt-4.1", 1_047_576, 32_768, 0),
    ("gpt-4o", 128_000, 16_384, 0),
    ("o1", 200_000, 100_000, 16_384),
    ("o3", 200_000, 100_000, 16_384),
    ("o4-mini", 200_000, 100_000, 16_384),
    # Anthropic (and the same models on Bedrock); no extended thinking is asked for
    ("claude-opus-4-5", 200_000, 64_000, 0),
    ("claude-sonnet-4-5", 200_000, 64_000, 0),
    ("claude-haiku-4-5", 200_000, 64_000, 0),
    ("claude-opus-4-1", 200_000, 32_000, 0),
    ("claude-opus-4", 200_000, 32_000, 0),
    ("claude-sonnet-4", 200_000, 64_000, 0),
    ("claude-3-7-sonnet", 200_000, 64_000, 0),
    ("claude-3-5-sonnet", 200_000, 8_192, 0),
    ("claude-3-5-haiku", 200_000, 8_192, 0),
    ("claude-3-haiku", 200_000, 4_096, 0),
    # Google: thinking tokens count in maxOutputTokens (the allowance: each model's largest thinking budget)
    ("gemini-3-pro", 1_048_576, 65_536, 32_768),
    ("gemini-2.5-pro", 1_048_576, 65_536, 32_768),
    ("gemini-2.5-flash", 1_048_576, 65_536, 24_576),
    ("gemini-2.5-flash-lite", 1_048_576, 65_536, 24_576),
    ("gemini-2.0-flash", 1_048_576, 8_192, 0),
    # local models (the Ollama library's names): the window they were trained with; a reply may fill it
    ("llama3.3", 131_072, 131_072, 0),
    ("llama3.2", 131_072, 131_072, 0),
    ("llama3.1", 131_072, 131_072, 0),
    ("llama3", 8_192, 8_192, 0),
    ("qwen3", 40_960, 40_960, 8_192),
    ("qwen2.5", 32_768, 32_768, 0),
    ("gemma3", 131_072, 131_072, 0),
    ("gemma2", 8_192, 8_192, 0),
    ("mistral-nemo", 131_072, 131_072, 0),
    ("mistral", 32_768, 32_768, 0),
    ("phi4", 16_384, 16_384, 0),
    ("deepseek-r1", 131_072, 131_072, 8_192),
    ("gpt-oss", 131_072, 131_072, 8_192),
)

DEFAULT = ModelLimits(context=128_000, output=8_192, source="default")
LOCAL_DEFAULT = ModelLimits(context=32_768, output=32_768, source="default")

_BEDROCK_PREFIX = re.compile(r"^(?:(?:us|eu|apac|jp|au|ca|us-gov|global)\.)?(?:anthropic\.)")


def model_key(model: str) -> str:
    """The id a table row is matched against: lower case, no `models/` (Gemini) and no Bedrock
    region or vendor prefix."""
    key = model.strip().lower().removeprefix("models/")
    return _BEDROCK_PREFIX.sub("", key)


def limits_for(kind: str, model: str) -> ModelLimits:
    """The longest row `model` starts with, else the default of its kind."""
    key = model_key(model)
    rows = [r for r in TABLE if key.startswith(r[0])]
    if not rows:
        return LOCAL_DEFAULT if kind == LOCAL else DEFAULT
    prefix, context, output, thinking = max(rows, key=lambda r: len(r[0]))
    return ModelLimits(context=context, output=output, thinking=thinking)
