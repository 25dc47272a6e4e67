"""What `--effort` becomes in each provider's own request fields.

Which values a model takes is its catalog entry's (`catalog.Effort`), checked by the run's
preflight; here only how a checked value is spelled for each protocol: a named level, or a token
budget (a number). The fakes record those fields as they arrive, so tests assert on the wire.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.settings import RunSettings


def effort_parts(config: RunSettings) -> tuple[str | None, int | None]:
    """(a level, a token budget) of the run's effort: one of them, or neither (the provider's default)."""
    effort = config.effort
    if effort is None:
        return None, None
    return (None, int(effort)) if effort.isdigit() else (effort, None)


def google_thinking(config: RunSettings) -> dict[str, Any] | None:
    """Gemini (Live and the text API): the fields of Pipecat's `thinking` setting, sent as the
    request's `thinkingConfig` (`thinkingLevel` for Gemini 3, `thinkingBudget` for 2.5); None for the default."""
    level, budget = effort_parts(config)
    if level is not None:
        return {"thinking_level": level}
    return {"thinking_budget": budget} if budget is not None else None


def claude_thinking(config: RunSettings, max_tokens: int) -> dict[str, Any]:
    """Claude: a level is Anthropic's `output_config.effort`; a budget is extended thinking
    (`thinking: {type: enabled, budget_tokens}`), with `max_tokens` raised above it (the API
    refuses a budget that is not below max_tokens)."""
    from pipecat.services.anthropic.llm import AnthropicThinkingConfig  # deferred: Pipecat's Anthropic service loads with its runner only

    level, budget = effort_parts(config)
    if level is not None:
        return {"effort": level, "max_tokens": max_tokens}
    if budget is not None:
        return {"thinking": AnthropicThinkingConfig(type="enabled", budget_tokens=budget), "max_tokens": max_tokens + budget}
    return {"max_tokens": max_tokens}


def openai_reasoning(config: RunSettings) -> dict[str, Any]:
    """OpenAI's Chat Completions: `reasoning_effort` (Pipecat's `Settings.extra` goes into the request)."""
    level, _ = effort_parts(config)
    return {"reasoning_effort": level} if level is not None else {}
