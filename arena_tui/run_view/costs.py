"""What a run has cost so far, as its events come: its services' usage reports (`usage` events)
and, apart, every judge request's tokens (each judgement revision's, the whole-run one's too),
each counted once however often it arrives (the bus's, then the store's read back); priced by
`arena_tui.cost` when shown."""

from __future__ import annotations

from arena_tui.spine.events import Judgement, RunEvent, TokenUsage, Usage, UsageReported

from ..cost import Estimate, current_prices, judge_estimate, run_estimate


class RunCosts:
    """The usage and judge tokens of one run, folded from its events."""

    def __init__(self) -> None:
        self.usage: list[Usage] = []
        self._seen: set[tuple[object, ...]] = set()
        self.judge_tokens: dict[str, TokenUsage] = {}

    def see(self, ev: RunEvent) -> None:
        """Fold a `usage` or `judgement` event in (any other is not theirs)."""
        if isinstance(ev, UsageReported):
            key: tuple[object, ...] = ("usage", ev.t_ms, ev.turn_index, ev.usage.model_dump_json())
            if key not in self._seen:
                self._seen.add(key)
                self.usage.append(ev.usage)
        elif isinstance(ev, Judgement) and (ev.usage.input_tokens or ev.usage.output_tokens):
            key = ("judgement", ev.t_ms, ev.turn_index, ev.judge, ev.revision, ev.phase, ev.rule, ev.scope)
            if key not in self._seen:
                self._seen.add(key)
                t, u = self.judge_tokens.get(ev.judge, TokenUsage()), ev.usage
                self.judge_tokens[ev.judge] = TokenUsage(input_tokens=t.input_tokens + u.input_tokens,
                                                         cached_input_tokens=t.cached_input_tokens + u.cached_input_tokens,
                                                         output_tokens=t.output_tokens + u.output_tokens)

    def model(self, alias: str) -> Estimate:
        """The model's side so far (`alias`: the run's model, for reports that name none)."""
        return run_estimate(alias, self.usage, current_prices())

    def judge(self) -> Estimate:
        return judge_estimate(self.judge_tokens, current_prices())
