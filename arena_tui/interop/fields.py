"""What the reference's fields mean in ours, both ways.

Latency fields:
- `ttfb_ms`: the provider's own TTFB (Pipecat's metric) <-> `provider_ttfb_ms`, never ours.
- `latency_ms`: wall-clock time from the turn's start to its end — the turn's duration, not a
  response latency. Exported from our `turn_started` -> `turn_ended` (audio timeline / speed);
  imported into the run config's `turn_duration_ms` (turn -> ms), never into our latencies.
- our own figures go in extra row fields: `pipeline_ttfb_ms`, `v2v_ms`, `leading_silence_ms`;
  a negative one is no latency (null) and a barge-in is `barge_in_ms` (its overlap); a run at
  a speed other than 1 says `latency_note` ("20× — not comparable") on every row, and its
  `runtime.json` holds `speed`, `started_at` and `ended_at` (wall clock).
`function_tracking` in `<judge>_summary.json` is the reference's dict keyed `<function>_<n>`
holding `{expected_turn, actual_turn, status}` (on_time | early | late | missing); our own
tracking rows, with our statuses, stay in the summary's `arena_tui.tracking`.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.events import EMPTY_RESPONSE, MODEL_ENDED_SESSION, MODEL_ENDED_SESSION_EARLY, DimensionScore

SENTINEL_STATUS = {  # the reference's assistant_text sentinel -> our turn status
    EMPTY_RESPONSE: "no_response",
    MODEL_ENDED_SESSION: "ended_session",
    MODEL_ENDED_SESSION_EARLY: "ended_early",
}
OUR_LATENCIES = {"pipeline_ttfb_ms": "pipeline_ttfb_ms", "v2v_ms": "voice_to_voice_ms",
                 "leading_silence_ms": "leading_silence_ms"}  # extra row field -> Latencies field
# phase-2 link status -> the reference's; a call made with wrong arguments never satisfied the expectation
TRACKING_STATUS = {"matched": "on_time", "early": "early", "late": "late", "missed": "missing", "wrong": "missing"}


def score_value(score: DimensionScore | None) -> bool | None:
    """A verdict as the reference's score: true, false, or null where not scored."""
    if score is None or score.verdict == "na":
        return None
    return score.verdict == "pass"


def reference_tracking(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Our tracking rows (phase-2 links) as the reference's `function_tracking`: `<function>_<n>` keys.

    `n` counts each function's expected calls from 1, in expected-turn order.
    """
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: (r["expected_turn"], r.get("expected_index", 0))):
        seen[row["name"]] = seen.get(row["name"], 0) + 1
        status = TRACKING_STATUS.get(row["status"], "missing")
        out[f"{row['name']}_{seen[row['name']]}"] = {
            "expected_turn": row["expected_turn"],
            "actual_turn": None if status == "missing" else row.get("actual_turn"),
            "status": status,
        }
    return out
