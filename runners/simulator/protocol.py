"""Wire-level constants and ids of the OpenAI Realtime (GA) protocol as the simulator speaks it."""

from __future__ import annotations

import uuid

RATE = 24000  # PCM16 mono, both directions
PATH = "/v1/realtime"
DEFAULT_SILENCE_MS = 800.0
DEFAULT_THRESHOLD = 0.5
SECRET_HEADERS = {"authorization", "api-key", "x-api-key", "openai-api-key", "cookie", "x-goog-api-key"}


def new_id(prefix: str) -> str:
    """Ids shaped like the API's (`event_…`, `item_…`, `resp_…`, `call_…`)."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"
