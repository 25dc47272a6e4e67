"""Helper process for tests/test_store_open_race.py: opens a fresh database at a signal, many times.

    python tests/store_opener_child.py DIR TRIALS

For each trial i it prints `ready i`, waits until `DIR/go-i` exists (the test creates it once
every opener is ready, so they open at the same moment), opens `DIR/trial-i.db` with the real
`Store.open`, closes it, and prints `ok i` or `failed i <the error>`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from arena_tui.store import Store, StoreError


async def main() -> None:
    folder, trials = Path(sys.argv[1]), int(sys.argv[2])
    for i in range(trials):
        print(f"ready {i}", flush=True)
        go = folder / f"go-{i}"
        while not go.exists():
            time.sleep(0.001)  # a busy wait: every opener leaves at the same moment
        try:
            store = await Store.open(folder / f"trial-{i}.db")
        except StoreError as e:
            print(f"failed {i} {e}", flush=True)
            continue
        await store.close()
        print(f"ok {i}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
