"""`arena-tui models`: every model alias, its provider, and what a run with it still needs.

A user about to spend real API money wants to know before the run whether the key and the
packages are there. The list is `arena_tui.orchestration.models` (the providers' catalog: what
each entry declares, the checks its runner's preflight makes with default settings, keys for
presence only, their values never printed; a local server probed); it imports no provider and
no Pipecat. Its status column is `Model.status`: `ready` only for what answers.
"""

from __future__ import annotations

import argparse

from ..orchestration.logs import quiet_logs
from ..orchestration.models import cascades, models


HEAD = ("alias", "provider", "model id", "kind", "key", "capabilities")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fake", action="store_true", help="check as for a --fake run (no keys needed)")


def run(args: argparse.Namespace) -> int:
    quiet_logs(False)
    rows, listed = [], models()
    for m in listed:
        key = " + ".join(part for part in (", ".join(m.key_env), ", ".join(m.setting_env)) if part) or "-"
        rows.append((m.alias, m.provider, m.model_id, m.kind, key, m.caps or "-", m.status(args.fake)))
    widths = [max(len(r[i]) for r in rows + [(*HEAD, "")]) for i in range(len(HEAD))]
    print("  ".join(h.ljust(w) for h, w in zip(HEAD, widths, strict=True)) + "  status")
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    efforts = [f"{m.alias}: {m.effort}" for m in listed if m.effort]
    print("\nreasoning effort (--effort; refused for the others): " + "; ".join(efforts))
    print("capabilities: the model's speech rate; the service's session limit; rotation: a run outlives a session "
          "(a new one given the history); duplex: it listens while it speaks and answers when it chooses; delegation: "
          "it hands tools or reasoning to a backend model; manual commit: --disable-vad closes the user's turn")
    duplex = [m for m in listed if m.duplex]
    if duplex:
        print("full duplex (listens while it speaks and answers when it chooses: no commit; run in the full-duplex "
              f"turn loop): {', '.join(m.alias for m in duplex)}")
        for family in dict.fromkeys(m.family for m in duplex if m.delegation and m.family):
            base = family.rstrip("+")
            print(f"  delegates its tools to a backend model: {base} to its OpenAI-hosted one (Responses delegation), "
                  f"{family}<text model> to that text model of ours (client delegation, e.g. {family}claude-haiku-4-5)")
    c = cascades()
    keys = "; ".join(f"{part}: {', '.join(k)}" for part, k in c.keys.items())
    print(f"\ncascades (STT → a text model above → TTS, Pipecat's VAD closing the user's turn): {c.spelling}")
    print(f"  stt: {', '.join(c.stt)}  ·  tts: {', '.join(c.tts)}  ·  keys: {keys}")
    print(f"  e.g. {'  '.join(c.examples)}  (--fake: every part against its local fake)")
    print(f"  local, in this process ({c.local_hint}; weights: arena-tui weights): {', '.join(c.local)}; "
          f"the middle {c.local_llm} served at {c.local_llm_url}, e.g. {c.local_example}")
    print("your own Pipecat class: --service package.module:Class [--service-arg key=value …]")
    return 0
