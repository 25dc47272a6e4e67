"""A model's tool calls answered from the turn spec, as its service makes them: each with THIS
call's scripted payload (the reference harness sent the previous one), recorded on the attempt
under way and said twice (`tool_call` when made, `tool_result` once answered); a call with no
turn under way gets the not-available payload. The loop hears when each settles (`tool_settled`):
a reply is due after it."""

from __future__ import annotations

from typing import Protocol

from pipecat.services.llm_service import FunctionCallParams

from arena_tui.spine.events import RunEvent, ToolAnswered, ToolCalled
from arena_tui.spine.settings import RunSettings

from ..base import ProviderRunner
from ..tools import Resolution, not_available_payload
from .attempt import AttemptBase


class ToolHost[A: AttemptBase](Protocol):
    """What the answers read of their run (`base.RunBase`): its attempt under way, provider and
    settings (who made a call), its clock and events, and its hook for a settled call."""

    provider: ProviderRunner
    config: RunSettings

    @property
    def attempt(self) -> A | None: ...

    def now(self) -> float: ...

    def ev(self, cls: type, turn_index: int | None = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...

    def tool_settled(self, a: A) -> None: ...  # (`A`: the run's own attempt type)


class ToolAnswers[A: AttemptBase]:
    """Answers `run`'s tool calls (`answer` is the handler every session's service registers)."""

    def __init__(self, run: ToolHost[A]) -> None:
        self.run = run

    async def answer(self, params: FunctionCallParams) -> None:
        """Answer with THIS call's scripted payload (the reference sent the previous one)."""
        run = self.run
        a = run.attempt
        args = dict(params.arguments or {})
        t = run.now()
        if a is not None:
            a.pending_tools += 1
        try:
            if a is None or a.resolver is None:
                res = Resolution(status="not_available", response=not_available_payload())
            else:
                res = a.resolver.resolve(params.function_name, args)
            record = res.record(params.tool_call_id, params.function_name, args, t_ms=t,
                                made_by=run.provider.call_maker(run.config))
            run.publish(
                run.ev(ToolCalled, t_ms=t, call_id=record.call_id, name=record.name, args=args, is_duplicate=record.is_duplicate,
                       made_by=record.made_by, made_by_model=record.made_by_model)
            )
            if a is not None:
                a.tool_calls.append(record)
                if res.ends_session:
                    a.ends_session = True
            await params.result_callback(res.response)
            run.publish(
                run.ev(ToolAnswered, call_id=record.call_id, name=record.name, status=record.status, response=res.response)
            )
        finally:
            if a is not None:
                a.pending_tools -= 1
                run.tool_settled(a)
