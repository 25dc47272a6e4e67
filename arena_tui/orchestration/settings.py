"""A run's settings as the engine takes them (`runners.config.RunConfig`), for the commands that
parse them from flags or read them from a stored run. Nothing here imports the engine at import
time (--help imports every command module); `runners.config` loads on first call.
"""

from __future__ import annotations

from typing import Any


def parse_turns(spec: str) -> list[int]:
    """`"0,5-9"` → `[0, 5, 6, 7, 8, 9]`; raises ValueError naming the bad part."""
    from runners.config import parse_turns as parse  # deferred: the engine's config loads only when a run needs it (--help imports every command module)

    return parse(spec)


def run_config(**settings: Any) -> Any:
    """The RunConfig of these settings; raises ConfigError (a ValueError: one line naming the flag)."""
    from runners.config import RunConfig  # deferred: the engine's config loads only when a run needs it (--help imports every command module)

    return RunConfig(**settings)


def recorded_config(recorded: dict[str, Any]) -> Any:
    """The RunConfig of a stored run (`run_started.config`); raises ConfigError (a ValueError)."""
    from runners.config import RunConfig  # deferred: the engine's config loads only when a run needs it (--help imports every command module)

    return RunConfig.from_recorded(recorded)
