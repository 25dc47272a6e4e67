"""Run and campaign ids as commands take them: a stored id or a unique prefix of one
(`arena_tui.spine.ids.unique_prefix`); an unknown or ambiguous one is a CliError (exit 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena_tui.campaign import records
from arena_tui.spine.errors import CliError
from arena_tui.spine.ids import IdError, unique_prefix

if TYPE_CHECKING:
    from arena_tui.store import Store


async def resolve_run_id(store: Store, raw: str) -> str:
    """The stored run `raw` names (an id or a unique prefix of one)."""
    if await store.get_run(raw) is not None:
        return raw
    try:
        return unique_prefix(raw, [r.run_id for r in await store.list_runs()], kind="run", where=store.path,
                             hint="arena-tui runs")
    except IdError as e:
        raise CliError(str(e)) from None


async def resolve_campaign_id(store: Store, raw: str) -> str:
    """The recorded campaign `raw` names (an id or a unique prefix of one)."""
    try:
        return unique_prefix(raw, await records.campaign_ids(store), kind="campaign", where=store.path,
                             hint="arena-tui campaign list")
    except IdError as e:
        raise CliError(str(e)) from None
