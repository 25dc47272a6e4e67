"""A session's conversation as the API keeps it: its items by id and the newest one.

Shared by the two halves of a session, which both add items: the client-event side
(`connection.py`: user audio committed, items the client creates) and the reply producer
(`replies.py`: function calls, assistant messages). Every `previous_item_id` comes from here.
"""

from __future__ import annotations

from typing import Any


class Conversation:
    """Items by id (`items`) and the id of the newest (`last_item_id`)."""

    def __init__(self, session_id: str) -> None:
        self.id = "conv_" + session_id.removeprefix("sess_")
        self.items: dict[str, dict[str, Any]] = {}
        self.last_item_id: str | None = None
