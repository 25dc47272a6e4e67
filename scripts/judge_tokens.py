#!/usr/bin/env python3
"""Judge input tokens for a full conversation_bench run: per-turn judging vs one whole-run prompt.

Builds exactly the prompts `arena_tui.judge` sends (OpenAI backend: schema + system prefix +
append-only history + target turn) for a simulated run in which every turn answers with its
golden text and makes its expected calls, counts them with the o200k_base tokenizer offline,
and estimates what provider prefix caching recovers (OpenAI rule: the longest prefix shared
with an earlier request, in 128-token blocks once it reaches 1024 tokens; cached input billed
at a discount). Prints numbers; asserts nothing.

Tokenizer: tiktoken if its o200k_base file is available offline, else `bpe-openai` (PyPI),
which ships the same o200k_base vocabulary inside the wheel.

Usage: python -m scripts.judge_tokens [--benchmark conversation_bench] [--shared DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from arena_tui.spine.events import Latencies, ToolCallRecord, TurnResult  # noqa: E402
from arena_tui.judge.prompt import PromptBuilder  # noqa: E402
from arena_tui.judge.rubric import dimensions_for  # noqa: E402
from arena_tui.judge.schema import JUDGE_SCHEMA  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402

PER_MESSAGE = 4  # chat-format overhead per message (role + separators), as OpenAI documents for its tokenizers
CACHE_MIN, CACHE_BLOCK = 1024, 128


def encoder():
    try:
        import tiktoken

        enc = tiktoken.get_encoding("o200k_base")
        return "tiktoken o200k_base", enc.encode
    except Exception:  # noqa: BLE001 - no network: tiktoken cannot download its vocabulary
        import bpe_openai

        enc = bpe_openai.get_encoding("o200k_base")
        return "bpe-openai o200k_base (tiktoken could not load its vocabulary offline)", enc.encode


def simulated_run(bench) -> list[TurnResult]:
    out = []
    for t in bench.turns:
        calls = [
            ToolCallRecord(call_id=f"call_{t.turn_index}_{k}", name=c.name, args=c.args, status="matched",
                           response=resp if resp is not None else {"status": "success"})
            for k, (c, resp) in enumerate(zip(t.expected_calls, t.expected_responses))
        ]
        out.append(TurnResult(turn_index=t.turn_index, status="ok", user_text=t.input, assistant_text=t.golden_text,
                              tool_calls=calls, latencies=Latencies(pipeline_ttfb_ms=900.0)))
    return out


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def cached_part(shared: int) -> int:
    return 0 if shared < CACHE_MIN else shared // CACHE_BLOCK * CACHE_BLOCK


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="conversation_bench")
    ap.add_argument("--shared", default=os.environ.get("ARENA_TUI_SHARED", str(REPO.parent / "shared" / "audio-arena")))
    ap.add_argument("--cached-price", type=float, default=0.1, help="cached input price as a fraction of uncached")
    args = ap.parse_args()
    name, encode = encoder()
    bench = load_benchmark(Path(args.shared) / args.benchmark)
    results = simulated_run(bench)
    builder = PromptBuilder(bench)
    schema = json.dumps(JUDGE_SCHEMA)
    schema_tokens = len(encode(schema))
    prefix_tokens = encode(builder.prefix)

    total = cached = cached_prefix_only = 0
    previous: list[list[int]] = []
    per_turn = []
    for r in results:
        t = bench.turn(r.turn_index)
        earlier = [x for x in results if x.turn_index < r.turn_index]
        hist = encode(builder.history(earlier))
        target = encode(builder.target(t, r, dimensions_for(t, audio=True)))
        # schema is part of the cached prefix (OpenAI puts structured-output schemas before the messages)
        seq = [-1] * schema_tokens + prefix_tokens + [-2] * PER_MESSAGE + hist + [-3] * PER_MESSAGE + target
        n = len(seq) + PER_MESSAGE + 3
        shared = max((common_prefix(seq, p) for p in previous[-2:]), default=0)
        c = cached_part(shared)
        c_prefix_only = cached_part(schema_tokens + len(prefix_tokens)) if previous else 0
        previous.append(seq)
        total += n
        cached += c
        cached_prefix_only += c_prefix_only
        per_turn.append((r.turn_index, n, c))

    # One whole-run prompt: the same prefix, the whole conversation once, then every turn's target part.
    whole_hist = encode(builder.history(results))
    whole_targets = sum(len(encode(builder.target(bench.turn(r.turn_index), r, dimensions_for(bench.turn(r.turn_index), audio=True))))
                        for r in results)
    whole = schema_tokens + len(prefix_tokens) + len(whole_hist) + whole_targets + 3 * PER_MESSAGE + 3

    def cost(inp: int, cach: int) -> float:
        return (inp - cach) + args.cached_price * cach

    print(f"benchmark           {bench.name}: {len(results)} turns, knowledge base {len(bench.knowledge_base):,} chars")
    print(f"tokenizer           {name}")
    print(f"stable prefix       {len(prefix_tokens):,} tokens (+ {schema_tokens:,} schema) identical on every turn")
    print(f"per-turn judging    {total:,} input tokens over {len(results)} requests "
          f"(first {per_turn[0][1]:,}, last {per_turn[-1][1]:,})")
    print(f"  cached (prefix + append-only history) {cached:,} = {100 * cached / total:.1f}% ; uncached {total - cached:,}")
    print(f"  cached if only the fixed prefix were reused {cached_prefix_only:,} = {100 * cached_prefix_only / total:.1f}%")
    print(f"whole-run prompt    {whole:,} input tokens in 1 request (no per-turn results until the end)")
    print(f"ratio               per-turn / whole-run = {total / whole:.1f}x raw; "
          f"{cost(total, cached) / whole:.2f}x cost-weighted with cached input at {args.cached_price:.0%} price")
    print(f"                    (prefix-only caching: {cost(total, cached_prefix_only) / whole:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
