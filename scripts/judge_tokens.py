#!/usr/bin/env python3
"""Judge input tokens for one run: per-turn judging, our whole-run request, and one reference-shaped request.

Builds exactly the prompts `arena_tui.judge` sends (OpenAI backend: schema + system prefix + history +
target) for a simulated run in which every turn answers with its golden text and makes its expected
calls, and counts them with the o200k_base tokenizer offline:

- per-turn (the live monitor's scores, `judge RUN --turn N`): one request per turn, the conversation so
  far as its history; with what provider prefix caching recovers (OpenAI rule: the longest prefix
  shared with an earlier request, in 128-token blocks once it reaches 1024 tokens);
- whole-run (`judge RUN`, a completed live run, campaigns): one request holding every turn;
- reference-shaped: one request laid out as the reference harness's judge lays out a run (its
  knowledge-base views, turn-taking failures, expected-call summary, then per turn: turn-taking, user,
  assistant, golden, categories and scored dimensions, expected call, tool-use guidance, actual calls
  and their results as JSON), built here from the same run, plus its rules: the length of its judge's
  system prompt and closing instructions at d3659ba, measured once from its public source with the
  same tokenizer (`REFERENCE_RULES_TOKENS`; its text is not reproduced here).

Also the reply's side: the o200k tokens of one whole-run `final_judgments` entry (its fields, compact
JSON and indented) and of a ~100-word commentary, beside what `judge.budget` counts a turn
(`REPLY_TOKENS_PER_TURN`), and the characters a prompt token takes here (`budget.CHARS_PER_TOKEN`
must stay below it, so prompts are over-, never under-counted).

Prints numbers; asserts nothing. The issue's goal: whole-run at most 1.2x the reference-shaped request.

Tokenizer: tiktoken if its o200k_base file is available offline, else `bpe-openai` (PyPI),
which ships the same o200k_base vocabulary inside the wheel.

Usage: python -m scripts.judge_tokens [--benchmark conversation_bench] [--shared DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from arena_tui.spine.events import Latencies, ToolCallRecord, TurnResult  # noqa: E402
from arena_tui.judge import budget  # noqa: E402
from arena_tui.judge.knowledge import knowledge_views  # noqa: E402
from arena_tui.judge.prompt import PromptBuilder  # noqa: E402
from arena_tui.judge.rubric import dimensions_for, turn_taking  # noqa: E402
from arena_tui.judge.schema import JUDGE_SCHEMA  # noqa: E402
from arena_tui.judge.whole_run import judgeable, run_request  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402
from scripts import shared_data  # noqa: E402

PER_MESSAGE = 4  # chat-format overhead per message (role + separators), as OpenAI documents for its tokenizers
CACHE_MIN, CACHE_BLOCK = 1024, 128
# The reference judge's rules (audio-agent-bench d3659ba, judging/llm_judge.py), o200k_base: its system
# prompt (31,222 chars) and the closing instructions of its whole-run user prompt (1,934 chars, before
# the turn list is filled in). Measured once from the public source; the turn list is counted below.
REFERENCE_RULES_TOKENS = 6566 + 431


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


def reference_shaped(bench, results: list[TurnResult]) -> str:
    """The data part of one reference-shaped request: its sections, in its order, from our run."""
    views = knowledge_views(bench)
    lines = []
    if not views.all_visible:  # the reference sends a prompt-visible view only where it differs
        visible = [ln for ln in bench.knowledge_base.splitlines() if ln.strip() and ln.strip() in bench.system_prompt]
        lines += ["# Prompt-visible knowledge base", "", "\n".join(visible), "", "---", ""]
    lines += ["# Full knowledge base", "", bench.knowledge_base.strip(), "", "---", ""]
    failed = [r for r in results if turn_taking(r).verdict == "fail"]
    if failed:
        lines += ["# Turn-taking failures", ""] + [f"- Turn {r.turn_index}: {turn_taking(r).reasoning}" for r in failed]
        lines += ["", "---", ""]
    lines += ["# Expected function calls", ""]
    for t in bench.turns:
        if t.expected_calls:
            lines.append(f"- Turn {t.turn_index}: " + " → ".join(f"{c.name}({json.dumps(c.args)})" for c in t.expected_calls))
    lines += ["", "---", "", "# Conversation turns", ""]
    for r in results:
        t = bench.turn(r.turn_index)
        tt = turn_taking(r)
        lines += [f"## Turn {t.turn_index}", "**Turn-Taking**: " + ("OK" if tt.verdict == "pass" else f"FAILURE ({tt.reasoning})"),
                  f"**User**: {r.user_text}", f"**Assistant**: {r.assistant_text}", "", f"**Golden Response**: {t.golden_text}", ""]
        if t.categories:
            lines.append(f"**Category**: {', '.join(t.categories)}")
            if t.subcategory:
                lines.append(f"**Subcategory**: {t.subcategory}")
            lines += [f"**Score Dimensions**: {', '.join(dimensions_for(t, audio=True))}", ""]
        rfc = t.required_function_call  # as the turn's data has it
        raw = None if rfc is None else [c.model_dump(exclude_defaults=True) for c in rfc] if isinstance(rfc, list) \
            else rfc.model_dump(exclude_defaults=True)
        lines.append(f"**Expected Function**: {json.dumps(raw) if raw is not None else 'none'}")
        if t.tool_use_guidance:
            lines.append(f"**Tool Use Guidance**: {t.tool_use_guidance}")
        calls = [{"name": c.name, "args": c.args} for c in r.tool_calls]
        answers = [{"name": c.name, "response": c.response} for c in r.tool_calls]
        lines.append(f"**Actual Functions**: {json.dumps(calls) if calls else 'none'}")
        lines.append(f"**Actual Function Results**: {json.dumps(answers) if answers else 'none'}")
        lines += ["", "---", ""]
    lines.append("[" + ", ".join(str(r.turn_index) for r in results) + "]")  # the closing instructions' turn list
    return "\n".join(lines)


# ~100 words of commentary on one turn, as the schema asks for it ("why each verdict: tool use, IF and
# KB, state, ambiguity"); written here for counting, no judge's words
COMMENTARY = (
    "Tool use: the expected lookup was made on this turn with the session name the user gave, and its "
    "result was used. Instruction following: the reply answers both parts of the question, gives the time "
    "and the room as the golden answer does, and adds no invented detail. Knowledge base: the session time "
    "and speaker match the knowledge base and the tool result. State: it kept the registration from the "
    "earlier turn and did not ask again for the name. Ambiguity: not in scope for this turn, so it is not "
    "scored here."
)


def reply_entry(commentary: str) -> dict:
    """One whole-run `final_judgments` entry as a judge writes it (every field of the schema)."""
    return {"turn": 42, "reasoning": commentary, "kb_grounding": "pass", "instruction_following": "pass",
            "tool_use_correct": "na", "state_tracking": "na", "ambiguity_handling": "na", "root_cause": "none",
            "fabricated_action": False, "unexecuted_reference": False, "words_contradict_actions": False,
            "call_verdicts": [], "causes": []}


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
    ap.add_argument("--shared", default=str(shared_data()))
    ap.add_argument("--cached-price", type=float, default=0.1, help="cached input price as a fraction of uncached")
    args = ap.parse_args()
    name, encode = encoder()
    bench = load_benchmark(args.benchmark, args.shared)  # a name (--data folder, built-in demo) or a folder
    results = simulated_run(bench)
    builder = PromptBuilder(bench)
    schema_tokens = len(encode(json.dumps(JUDGE_SCHEMA)))
    prefix_tokens = encode(builder.prefix)

    total = cached = cached_prefix_only = 0
    previous: list[list[int]] = []
    per_turn = []
    for r in results:
        t = bench.turn(r.turn_index)
        earlier = [x for x in results if x.turn_index < r.turn_index]
        hist = encode(builder.history(earlier))
        target = encode(builder.target(t, r, dimensions_for(t, audio=True), turn_taking(r)))
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

    # Our whole-run request: exactly what `judge RUN` sends.
    req = run_request(bench, judgeable(bench, results), audio=True, builder=builder)
    whole_schema = len(encode(json.dumps(req.schema)))
    whole = whole_schema + sum(len(encode(part)) for part in (req.prefix, req.history, req.target)) + 3 * PER_MESSAGE + 3
    # The reference-shaped request: its rules' measured length + its data layout built from the same run.
    ref_data = len(encode(reference_shaped(bench, results)))
    reference = REFERENCE_RULES_TOKENS + ref_data + 2 * PER_MESSAGE + 3

    def cost(inp: int, cach: int) -> float:
        return (inp - cach) + args.cached_price * cach

    views = knowledge_views(bench)
    print(f"benchmark           {bench.name}: {len(results)} turns, knowledge base {len(bench.knowledge_base):,} chars "
          f"({views.hidden_lines} of {views.lines} lines tool-only)")
    print(f"tokenizer           {name}")
    print(f"stable prefix       {len(prefix_tokens):,} tokens (+ {schema_tokens:,} schema) identical on every request")
    print(f"per-turn judging    {total:,} input tokens over {len(results)} requests "
          f"(first {per_turn[0][1]:,}, last {per_turn[-1][1]:,})")
    print(f"  cached (prefix + append-only history) {cached:,} = {100 * cached / total:.1f}% ; uncached {total - cached:,}")
    print(f"  cached if only the fixed prefix were reused {cached_prefix_only:,} = {100 * cached_prefix_only / total:.1f}%")
    print(f"whole-run request   {whole:,} input tokens in 1 request (schema {whole_schema:,})")
    print(f"reference-shaped    {reference:,} input tokens in 1 request (rules {REFERENCE_RULES_TOKENS:,} measured, "
          f"data {ref_data:,} built from this run)")
    chars = sum(len(p) for p in (req.prefix, req.history, req.target)) + len(json.dumps(req.schema))
    fields = [len(encode(json.dumps(reply_entry(""), separators=(",", ":")))), len(encode(json.dumps(reply_entry(""), indent=2)))]
    words = len(encode(COMMENTARY))
    print(f"ratio               whole-run / reference-shaped = {whole / reference:.2f}x (goal: at most 1.2x)")
    print(f"reply per turn      one final_judgments entry: {fields[0]} tokens of fields compact, {fields[1]} indented; "
          f"+ {words} for a {len(COMMENTARY.split())}-word commentary = {fields[0] + words}-{fields[1] + words} "
          f"(judge.budget counts {budget.REPLY_TOKENS_PER_TURN} a turn, asks {budget.HEADROOM}x)")
    print(f"prompt characters   {chars / whole:.2f} a token in the whole-run request (judge.budget estimates "
          f"{budget.CHARS_PER_TOKEN:g}: more tokens than there are)")
    print(f"                    per-turn / whole-run = {total / whole:.1f}x raw; "
          f"{cost(total, cached) / whole:.2f}x cost-weighted with cached input at {args.cached_price:.0%} price "
          f"(prefix-only caching: {cost(total, cached_prefix_only) / whole:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
