"""A 75-turn run judged whole-run against each judge backend's fake (tests/fakes/): the output
budget each request asked for, how many requests were sent, and what happens when the fake cuts
the reply. Each backend is its real client; each fake enforces its model's limits as the real API
does (output over the cap and prompt over the window refused, a reply over the budget cut).

The run: conversation_bench's 75 turns, each answered with its golden text and its expected calls
(`scripts.judge_tokens.simulated_run`). Two judges: one writing ~150 tokens of commentary a turn
(~250 tokens an entry, the fakes counting ~4 characters a token), and a wordy one writing ~1,000,
more than any budget allows: its replies are cut. Prints a table; asserts nothing. Usage:
    .venv/bin/python -m scripts.bench_judge_budget [--shared DIR] [--turns 75]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from scripts import shared_data

REPO = Path(__file__).resolve().parents[1]

# (kind, model, fake, its limits (output cap, window), why it is in the table)
CASES: list[tuple[str, str, str, dict[str, int], str]] = [
    ("openai", "gpt-5.2", "FakeOpenAI", {"max_output": 128_000, "context_window": 400_000}, "default"),
    ("openai", "gpt-4o", "FakeOpenAI", {"max_output": 16_384, "context_window": 128_000}, "a 16k output cap"),
    ("anthropic", "claude-opus-4-5", "FakeAnthropic", {"max_output": 64_000, "context_window": 200_000}, "default"),
    ("anthropic", "claude-3-5-haiku-latest", "FakeAnthropic", {"max_output": 8_192, "context_window": 200_000},
     "an 8k output cap"),
    ("google", "gemini-2.5-pro", "FakeGemini", {"max_output": 65_536, "context_window": 1_048_576}, "default"),
    ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "FakeBedrock",
     {"max_output": 64_000, "context_window": 200_000}, "default"),
    ("local", "llama3.2", "FakeOllama", {"trained_ctx": 131_072}, "default (Ollama)"),
    ("local", "qwen2.5:7b", "FakeOllama", {"trained_ctx": 32_768}, "a 32k window (Ollama)"),
    ("local", "llama3.2", "FakeOpenAI", {"keyless": True, "max_output": 131_072, "context_window": 131_072},
     "vLLM/llama.cpp: OpenAI-compatible"),
]


def asked(kind: str, fake: Any) -> list[str]:
    """What each request the fake received asked for: its output budget (and a local one's window)."""
    if kind == "openai" or getattr(fake, "keyless", False):
        return [f"{r.get('max_completion_tokens') or r.get('max_tokens'):,}" for r in fake.chat_requests]
    if kind == "anthropic":
        return [f"{r['max_tokens']:,}" for r in fake.message_requests]
    if kind == "google":
        return [f"{r['generationConfig'].get('maxOutputTokens'):,}" for _, r in fake.generate_requests]
    if kind == "bedrock":
        return [f"{r['inferenceConfig']['maxTokens']:,}" for _, r in fake.converse_requests]
    return [f"{r['options']['num_predict']:,} (num_ctx {r['options']['num_ctx']:,})" for r in fake.chat_requests]


def sent(kind: str, fake: Any) -> int:
    """The judge requests the fake received (an Ollama's own /api/show question is none)."""
    what = {"openai": "chat_requests", "anthropic": "message_requests", "google": "generate_requests",
            "bedrock": "converse_requests"}.get(kind, "chat_requests")
    return len(getattr(fake, what))


async def judge_once(bench: Any, results: list[Any], kind: str, model: str, fake_name: str, limits: dict[str, int],
                     commentary: int) -> dict[str, Any]:
    from arena_tui.judge import make_backend  # deferred: after the path is set
    from arena_tui.judge.backends import RetryPolicy  # deferred: after the path is set
    from arena_tui.judge.whole_run import judge_run  # deferred: after the path is set
    from tests.fakes import anthropic_messages, bedrock_converse, google_generate  # deferred: after the path is set
    from tests.fakes import ollama_api, openai_chat  # deferred: after the path is set
    from tests.fakes.judge_answers import wordy  # deferred: after the path is set

    fakes = {"FakeOpenAI": openai_chat.FakeOpenAI, "FakeAnthropic": anthropic_messages.FakeAnthropic,
             "FakeGemini": google_generate.FakeGemini, "FakeBedrock": bedrock_converse.FakeBedrock,
             "FakeOllama": ollama_api.FakeOllama}
    fake = fakes[fake_name](wordy(commentary), **limits).start()
    where = {"endpoint_url": fake.endpoint_url, "region": "us-west-2"} if kind == "bedrock" else \
        {"base_url": fake.base_url, "api_key": "not-a-key"}
    backend = make_backend(kind, model, **where)
    policy = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.02, deadline_s=600.0, what="whole-run")
    try:
        out = await judge_run(bench, results, backend, run_id="bench", audio=False, policy=policy)
    finally:
        await backend.aclose()
        fake.stop()
    turns = [j for j in out if j.turn_index is not None]
    run = next(j for j in out if j.turn_index is None)
    return {"requests": sent(kind, fake), "asked": asked(kind, fake), "judged": sum(j.error is None for j in turns),
            "errors": sum(j.error is not None for j in turns), "cuts": fake.cuts, "error": run.error or "",
            "input": run.usage.input_tokens}


async def main(shared: Path, n_turns: int, width: int) -> None:
    from benchmarks.registry import load_benchmark  # deferred: after the path is set
    from scripts.judge_tokens import simulated_run  # deferred: after the path is set

    bench = load_benchmark(shared / "conversation_bench")
    results = simulated_run(bench)[:n_turns]
    print(f"{bench.name}: {len(results)} turns judged whole-run; each backend's real client against its fake\n")
    head = (f"{'backend:model':52} {'limits (out/window)':21} {'judge':9} {'requests':>8}  {'output budget asked':30} "
            f"{'judged':>9}  outcome")
    print(head)
    print("-" * len(head))
    for kind, model, fake_name, limits, why in CASES:
        lim = (f"{limits['max_output'] // 1000}k/{limits['context_window'] // 1000}k" if "max_output" in limits
               else f"window {limits['trained_ctx'] // 1024}k")
        lim = f"window {limits['context_window'] // 1024}k" if kind == "local" and "context_window" in limits else lim
        for label, commentary in (("~250/turn", 150), ("wordy", 1000)):
            r = await judge_once(bench, results, kind, model, fake_name, limits, commentary)
            budgets = ", ".join(r["asked"])
            if not r["errors"]:
                outcome = "all turns judged"
            elif not r["requests"]:
                outcome = f"nothing sent: {r['error']}"
            else:
                replies = f"repl{'y' if r['requests'] == 1 else 'ies'}"
                outcome = f"{r['cuts']} of {r['requests']} {replies} cut, none retried: {r['error']}"
            name = f"{kind}:{model}" + (f" ({why})" if why != "default" else "")
            print(f"{name[:52]:52} {lim:21} {label:9} {r['requests']:>8}  {budgets[:30]:30} "
                  f"{r['judged']:>3}/{r['judged'] + r['errors']:<3}    {outcome[:width]}")
            if len(budgets) > 30:
                print(f"{'':96}budgets: {budgets}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shared", type=Path, default=shared_data())
    p.add_argument("--turns", type=int, default=75)
    p.add_argument("--width", type=int, default=400, help="characters of each outcome shown")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:  # boto3 reads no real AWS setup: fake credentials, no files
        os.environ.update({"AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret", "AWS_REGION": "us-west-2",
                           "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(Path(tmp) / "none"),
                           "AWS_SHARED_CREDENTIALS_FILE": str(Path(tmp) / "none")})
        os.environ.pop("AWS_PROFILE", None)
        asyncio.run(main(a.shared, a.turns, a.width))
