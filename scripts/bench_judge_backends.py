"""What judging a run N times costs in prompt tokens, per judge backend, and how much its prompt
cache serves: each backend's real client against its local fake (tests/fakes/), judging
conversation_bench turns 0-9 (golden answers) `--repeat` times. The token counts are the fakes'
(about 4 characters a token; caching by each provider's rule as its fake simulates it): they
compare backends and repeats, they are no provider's bill. Usage:
    .venv/bin/python -m scripts.bench_judge_backends [--repeat 3] [--turns 10]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from scripts import shared_data

REPO = Path(__file__).resolve().parents[1]


async def main(repeat: int, turns: int) -> None:
    from arena_tui.judge import make_backend  # deferred: after the path is set
    from arena_tui.judge.backends import RetryPolicy  # deferred: after the path is set
    from arena_tui.judge.worker import judge_turn  # deferred: after the path is set
    from arena_tui.spine.events import TurnResult  # deferred: after the path is set
    from benchmarks.registry import load_benchmark  # deferred: after the path is set
    from tests.fakes.anthropic_messages import FakeAnthropic  # deferred: after the path is set
    from tests.fakes.google_generate import FakeGemini  # deferred: after the path is set
    from tests.fakes.openai_chat import FakeOpenAI  # deferred: after the path is set

    bench = load_benchmark(shared_data() / "conversation_bench")
    results = [TurnResult(turn_index=i, status="ok", user_text=t.input, assistant_text=t.golden_text)
               for i, t in enumerate(bench.turns[:turns])]  # fmt: skip
    policy = RetryPolicy(attempts=2, base_delay_s=0.01)
    for kind, fake in (("openai", FakeOpenAI()), ("anthropic", FakeAnthropic()), ("google", FakeGemini()),
                       ("local", FakeOpenAI(keyless=True))):  # fmt: skip
        fake.start()
        backend = make_backend(kind, "m", base_url=fake.base_url, api_key="not-a-key")
        start, line = time.perf_counter(), []
        for k in range(repeat):
            total = cached = 0
            for r in results:
                j = await judge_turn(bench, r, results, backend, run_id="bench", policy=policy, audio=False)
                if j.error:
                    raise SystemExit(f"{kind}: {j.error}")
                total, cached = total + j.usage.input_tokens, cached + j.usage.cached_input_tokens
            line.append(f"judging {k + 1}: {total:,} prompt tokens, {cached:,} cached ({100 * cached / total:.0f}%)")
        await backend.aclose()
        fake.stop()
        print(f"{kind:9} {len(fake.requests)} requests  " + "  ".join(line) + f"  ({time.perf_counter() - start:.2f} s)")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--turns", type=int, default=10)
    a = p.parse_args()
    asyncio.run(main(a.repeat, a.turns))
