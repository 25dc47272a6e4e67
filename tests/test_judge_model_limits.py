"""The judge models' limits as data (`judge.model_limits`), the output budget sized from the turns
a request asks for (`judge.budget`) and the plan that splits a whole run its model cannot take in
one request (`whole_run.plan_parts`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_tui.judge import budget
from arena_tui.judge.errors import PermanentError
from arena_tui.judge.model_limits import DEFAULT, LOCAL_DEFAULT, ModelLimits, limits_for
from arena_tui.judge.whole_run import judgeable, plan_parts, run_request
from arena_tui.spine.benchmark import Benchmark
from benchmarks.registry import load_benchmark

from .test_judge_backends import golden_result


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


@pytest.fixture(scope="module")
def pairs(conv):
    return judgeable(conv, [golden_result(conv, t.turn_index) for t in conv.turns])


@pytest.mark.parametrize("kind, model, context, output, thinking", [
    ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000, 64_000, 0),  # region and vendor prefix
    ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", 200_000, 8_192, 0),
    ("anthropic", "claude-opus-4-5-20251101", 200_000, 64_000, 0),
    ("anthropic", "claude-opus-4-1", 200_000, 32_000, 0),  # the longest row wins over claude-opus-4
    ("openai", "gpt-5.2-2025-12-11", 400_000, 128_000, 16_384),  # reasoning counts in the output
    ("openai", "gpt-5-chat-latest", 128_000, 16_384, 0),
    ("openai", "gpt-4o-mini", 128_000, 16_384, 0),
    ("google", "models/gemini-2.5-pro", 1_048_576, 65_536, 32_768),  # thinking counts in the output
    ("local", "llama3.2:3b", 131_072, 131_072, 0),
    ("local", "llama3:8b", 8_192, 8_192, 0),
])
def test_a_known_model_has_its_published_limits(kind, model, context, output, thinking):
    assert limits_for(kind, model) == ModelLimits(context=context, output=output, thinking=thinking)


def test_an_unknown_model_gets_a_conservative_default():
    assert limits_for("openai", "my-finetune") == DEFAULT and DEFAULT.output == 8_192 and DEFAULT.source == "default"
    assert limits_for("local", "my-judge:latest") == LOCAL_DEFAULT and LOCAL_DEFAULT.context == 32_768
    told = limits_for("local", "my-judge:latest").told(16_384)  # an Ollama server said its window
    assert (told.context, told.output, told.source) == (16_384, 16_384, "server")


def test_the_budget_grows_with_the_turns_asked_and_is_capped_by_the_model(conv, pairs):
    opus, haiku = limits_for("anthropic", "claude-opus-4-5"), limits_for("anthropic", "claude-3-5-haiku")
    whole = run_request(conv, pairs, audio=False)
    need = budget.reply_tokens(whole)
    calls = sum(len(t.expected_calls) for t in conv.turns)
    assert need == budget.REPLY_TOKENS_FIXED + 75 * budget.REPLY_TOKENS_PER_TURN + calls * budget.REPLY_TOKENS_PER_CALL
    assert budget.output_budget(whole, opus) == int(need * budget.HEADROOM + 0.999) and budget.misfit(whole, opus) is None
    assert budget.output_budget(whole, haiku) == 8_192 and "over the model's cap of 8,192" in budget.misfit(whole, haiku)
    small = run_request(conv, pairs[:2], audio=False)
    assert budget.output_budget(small, opus) == budget.FLOOR  # a small request is never stingy
    gemini = limits_for("google", "gemini-2.5-pro")
    assert budget.output_budget(whole, gemini) == budget.output_budget(whole, opus) + 32_768  # and thinks first


def test_a_run_its_model_cannot_take_in_one_request_is_planned_in_consecutive_parts(conv, pairs):
    assert len(plan_parts(conv, pairs, limits_for("anthropic", "claude-opus-4-5"), audio=False)) == 1
    assert len(plan_parts(conv, pairs, None, audio=False)) == 1  # no limits (the offline judge): one request
    parts = plan_parts(conv, pairs, limits_for("anthropic", "claude-3-5-haiku"), audio=False)
    assert len(parts) == 4 and [p.part for p in parts] == [f"part {i} of 4" for i in range(1, 5)]
    turns = [budget.turns_of(p) for p in parts]
    assert sum(turns, []) == list(range(75)) and max(map(len, turns)) - min(map(len, turns)) <= 1  # near-equal
    assert all(budget.misfit(p, limits_for("anthropic", "claude-3-5-haiku")) is None for p in parts)
    assert [len(p.earlier) for p in parts] == [0, len(turns[0]), len(turns[0]) + len(turns[1]), 75 - len(turns[3])]
    with pytest.raises(PermanentError, match="not even one turn a request fits"):
        plan_parts(conv, pairs, ModelLimits(context=20_000, output=20_000), audio=False)
    with pytest.raises(PermanentError, match="the request judging turn 0: its prompt"):
        plan_parts(conv, pairs[:1], ModelLimits(context=10_000, output=10_000), audio=False)
