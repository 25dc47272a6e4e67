"""Helper process for tests/test_store.py: records a run into a database and says what is committed.

    python tests/store_child.py DB RUN_ID [--events N] [--batch K]

Publishes `run_started`, then batches of K events (levels numbered by `t_ms`, transcript deltas,
and a 100 ms audio chunk per batch so transactions are not tiny) through a real EventBus into a
real Store; after each `flush()` prints `committed <n>` meaning levels with t_ms 0..n-1 are
committed. With --events it stops after N levels and ends the run; without, it runs until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import AudioChunk, Level, RunEnded, RunStarted, TranscriptDelta
from arena_tui.store import Store

PCM_100MS = bytes(range(256)) * (4800 // 256) + bytes(4800 % 256)  # 2400 mono frames at 24 kHz


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("run_id")
    ap.add_argument("--events", type=int, default=0)
    ap.add_argument("--batch", type=int, default=200)
    args = ap.parse_args()
    bus = EventBus()
    async with await Store.open(args.db) as store:
        recording = store.start_recording(bus)
        bus.publish(
            RunStarted(
                run_id=args.run_id, t_ms=0, benchmark="grocery_bench", model="child", provider="test",
                turn_indices=list(range(10)),
            )
        )  # fmt: skip
        n = 0
        while not args.events or n < args.events:
            turn = n // 1000
            for _ in range(args.batch):
                bus.publish(
                    Level(run_id=args.run_id, t_ms=n, turn_index=turn, source="bot", rms_dbfs=-20.0, peak_dbfs=-6.0)
                )
                n += 1
                if n % 50 == 0:
                    bus.publish(TranscriptDelta(run_id=args.run_id, t_ms=n, turn_index=turn, role="assistant", text="ok "))
            bus.publish(
                AudioChunk(run_id=args.run_id, t_ms=n, turn_index=turn, track="bot", sample_rate=24000, pcm=PCM_100MS)
            )
            await store.flush()
            print(f"committed {n}", flush=True)
            if args.events and n >= args.events:
                break
        bus.publish(RunEnded(run_id=args.run_id, t_ms=n + 1, status="completed"))
        bus.close()
        await recording
    print("done", flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
