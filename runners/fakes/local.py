"""What a provider's local stand-in is to the engine (`runners.base.ProviderRunner` starts and stops
it; a cascade's three are one): declared beside the fakes, which import nothing of the engine."""

from __future__ import annotations

from typing import Any, Protocol


class LocalFake(Protocol):
    """A provider's local stand-in (a server on 127.0.0.1, or in-process): started and
    stopped by `ProviderRunner`, its `base_url` becomes the run's endpoint."""

    @property
    def base_url(self) -> str: ...

    async def start(self) -> Any: ...

    async def stop(self) -> None: ...

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the fake received, once each and in order: `{call_id, name, result}`."""
        ...

    def kickoff_replies(self, after: int = 1) -> int:
        """Replies it made that no user turn asked for, in its sessions after the first `after`."""
        ...
