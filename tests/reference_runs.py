"""Reference-harness run folders, written as Design-Arena/audio-agent-bench writes them, for import tests.

`write_run` lays out `runs/<benchmark>/<stamp>_<model>_<uid>/` with `transcript.jsonl`,
`runtime.json`, `claude_judged.jsonl`, `claude_summary.json` and, when given, a stereo
`conversation.wav`. `Conversation` builds that recording with every onset where it is put, to
the sample: user and bot "speech" are steady tones at speech levels (−20 / −22 dBFS), digital
silence between, and the reference's turn tag (2 kHz, 15 ms, −12 dBFS, 2 ms fades, mixed into
the first bot frame) where the test says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from arena_tui.spine.audio import write_wav

RATE = 24000
JUDGE_SUMMARY = {"judge_name": "claude", "judge_model": "claude-opus-4-5",
                 "judge_version": "claude-agent-sdk-v18-kb-visible-vs-tool-only", "judged_at": "2026-01-11T10:00:00Z"}


def reference_tag(rate: int = RATE) -> np.ndarray:
    """The reference's tag as its harness makes it: int(rate × 15 ms) samples of a 2 kHz sine at
    −12 dBFS (of 32768) with 2 ms linear fades, truncated to int16."""
    n = int(rate * 0.015)
    t = np.arange(n) / rate
    wave = 32768 * 10 ** (-12 / 20) * np.sin(2 * np.pi * 2000 * t)
    fade = int(rate * 0.002)
    wave[:fade] *= np.linspace(0, 1, fade)
    wave[-fade:] *= np.linspace(1, 0, fade)
    return wave.astype(np.int16)


def _tone(ms: float, freq: float, dbfs: float) -> np.ndarray:
    t = np.arange(round(ms * RATE / 1000)) / RATE
    return (10 ** (dbfs / 20) * 32767 * np.sin(2 * np.pi * freq * t)).astype(np.int16)


@dataclass
class Conversation:
    """A stereo recording: user speech (left), bot speech and tags (right), times in ms."""

    length_ms: float
    user: list[tuple[float, float]] = field(default_factory=list)
    bot: list[tuple[float, float]] = field(default_factory=list)
    tags: list[float] = field(default_factory=list)

    def pcm(self) -> np.ndarray:
        out = np.zeros((round(self.length_ms * RATE / 1000), 2), dtype=np.int32)
        for side, spans, freq, level in ((0, self.user, 220.0, -20.0), (1, self.bot, 330.0, -22.0)):
            for a, b in spans:
                x = _tone(b - a, freq, level)
                i = round(a * RATE / 1000)
                out[i : i + len(x), side] += x
        for at in self.tags:
            x = reference_tag()
            i = round(at * RATE / 1000)
            out[i : i + len(x), 1] += x
        return np.clip(out, -32768, 32767).astype(np.int16)


def row(turn: int, text: str, scores: dict[str, bool | None], *, ttfb: int | None = None, latency: int | None = None,
        calls: list[dict[str, Any]] | None = None, reconnects: int = 0, user_text: str = "") -> dict[str, Any]:  # fmt: skip
    """One transcript row (the reference's fields) with the judge's `scores` for its judged file."""
    calls = calls or []
    return {"turn": turn, "user_text": user_text or f"turn {turn}", "assistant_text": text, "tool_calls": calls,
            "tool_results": [{"name": c["name"], "response": {"status": "success"}} for c in calls], "tokens": {},
            "ttfb_ms": ttfb, "latency_ms": latency, "reconnection_count": reconnects, "scores": scores}  # fmt: skip


def write_run(root: Path, benchmark: str, stamp: str, model: str, uid: str, rows: list[dict[str, Any]], *,
              runtime: dict[str, Any] | None = None, conversation: Conversation | None = None) -> Path:  # fmt: skip
    """A reference run folder under `root/runs/`; rows' `ts` one minute apart from `stamp`."""
    folder = root / "runs" / benchmark / f"{stamp}_{model}_{uid}"
    folder.mkdir(parents=True)
    start = datetime.strptime(stamp, "%Y%m%dT%H%M%S")
    transcript, judged = [], []
    for n, r in enumerate(rows, 1):
        ts = (start + timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        base = {"ts": ts, "model_name": model, **{k: v for k, v in r.items() if k != "scores"}}
        transcript.append(base)
        judged.append({**base, "scores": r["scores"], "judge_reasoning": f"turn {r['turn']} reasoning"})
    (folder / "transcript.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcript))
    (folder / "claude_judged.jsonl").write_text("".join(json.dumps(j) + "\n" for j in judged))
    (folder / "runtime.json").write_text(json.dumps({"model_name": model, "turns": len(rows), "note": "",
                                                     "audio_source": "tts", **(runtime or {})}))  # fmt: skip
    (folder / "claude_summary.json").write_text(json.dumps({**JUDGE_SUMMARY, "model_name": model,
                                                            "turns_scored": len(rows)}))  # fmt: skip
    if conversation is not None:
        write_wav(folder / "conversation.wav", conversation.pcm(), RATE, 2)
    return folder
