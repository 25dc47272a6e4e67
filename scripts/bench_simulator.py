"""Print what the OpenAI-Realtime simulator costs (tests never assert timings).

Measures: fingerprint index build, server CPU per 20 ms input chunk (VAD + turn
recognition + protocol), the fastest --speed it can keep up with, reply synthesis time.

Usage: .venv/bin/python -m scripts.bench_simulator [path/to/audio-arena]
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from arena_tui.spine.audio import load_pcm16  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402
from runners.simulator import SimulatorServer  # noqa: E402
from runners.simulator.fingerprint import FingerprintIndex  # noqa: E402
from runners.simulator import voice  # noqa: E402
from runners.simulator.voice import espeak_available, spoken_text  # noqa: E402
from scripts import shared_data  # noqa: E402

RATE = 24000
CHUNK = RATE // 50


def shared() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    return shared_data()


async def stream_cost(bench, turns: list[int]) -> None:
    from websockets.asyncio.client import connect

    pcm = np.concatenate(
        [np.concatenate([load_pcm16(bench.audio_path(bench.turn(t))), np.zeros(RATE * 6, np.int16)]) for t in turns]
    )
    chunks = [base64.b64encode(pcm[i : i + CHUNK].tobytes()).decode() for i in range(0, pcm.size, CHUNK)]
    async with SimulatorServer(bench, voice="tone") as sim:
        async with connect(f"{sim.base_url}?model=bench", additional_headers={"Authorization": "Bearer x"},
                           max_size=None) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "session.update", "session": {"audio": {"input": {
                "turn_detection": {"type": "server_vad", "threshold": 0.7, "silence_duration_ms": 800}}}}}))

            async def drain() -> int:
                n = 0
                async for _ in ws:
                    n += 1
                return n

            reader = asyncio.create_task(drain())
            cpu0, t0 = time.process_time(), time.perf_counter()
            for c in chunks:
                await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": c}))
            # a final no-op the server answers, so we know it has processed everything before it
            await ws.send(json.dumps({"type": "response.cancel"}))
            while not any(e["code"] == "response_cancel_not_active" for e in sim.sessions[0].errors_sent):
                await asyncio.sleep(0.001)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            await ws.close()
            events = await reader
    audio_s = pcm.size / RATE
    statuses = [sim.truth[t].status if t in sim.truth else "unheard" for t in turns]
    print(f"streamed {audio_s:.1f} s of audio ({len(chunks)} chunks, turns {turns}) as fast as possible:")
    print(f"  wall {wall * 1000:.0f} ms -> {audio_s / wall:.0f}x real time; "
          f"CPU (client+server, one process) {cpu * 1e6 / len(chunks):.0f} us per 20 ms chunk")
    print(f"  {events} server events; turn statuses {statuses} (34 waits for its tool output); identified by "
          f"{sorted({sim.truth[t].identified_by for t in turns if t in sim.truth})}")


def main() -> None:
    root = shared()
    bench = load_benchmark(root / "conversation_bench")
    t0 = time.perf_counter()
    idx = FingerprintIndex()
    for turn in bench.turns:
        idx.add_file(turn.turn_index, bench.audio_path(turn))
    print(f"fingerprint index, {len(idx)} WAVs of conversation_bench: {(time.perf_counter() - t0) * 1000:.0f} ms")

    texts = [spoken_text(t.golden_text) for t in bench.turns[:12]]
    for kind in (["espeak"] if espeak_available() else []) + ["tone"]:
        times = []
        for text in texts:
            t0 = time.perf_counter()
            # uncached: the server caches per text, a run pays this once per distinct reply
            (voice._espeak.__wrapped__ if kind == "espeak" else voice._tones.__wrapped__)(text)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"reply synthesis ({kind}), {len(texts)} golden answers: median {statistics.median(times):.0f} ms, "
              f"max {max(times):.0f} ms")

    asyncio.run(stream_cost(bench, [0, 1, 2, 34]))


if __name__ == "__main__":
    main()
