"""Which judge scores a run: one rule for every way a run gets judged.

`--judge` as asked (`auto` resolved once, from the environment only, with the reason) or, for
`recorded`, the judge the run was judged with. `run`, `demo` and `campaign`
(`arena_tui.orchestration.live.choose_judge`), `resume` and the app's re-judge
(`arena_tui.app.ArenaApp.judge_for`) all take it from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena_tui.spine.judges import AUTO_ORDER, BY_KIND
from .factory import resolve_kind

#: how `auto` decided, by the kind it resolved to
AUTO_WHY = {k: f"auto: {BY_KIND[k].credential_names} {'are' if BY_KIND[k].credentials else 'is'} set" for k, _ in AUTO_ORDER}
_NAMES = [BY_KIND[k].credentials or "/".join(envs) for k, envs in AUTO_ORDER]
AUTO_FALLBACK_WHY = f"auto: no {', '.join(_NAMES[:-1])} or {_NAMES[-1]}"


@dataclass(frozen=True)
class Pick:
    kind: str  # a kind of `spine.judges` (openai, anthropic, …, heuristic) | none, or a recorded judge's kind (`reference` of an import)
    model: str | None = None  # a recorded judge's model
    why: str = ""  # how auto decided


def pick_judge(asked: str = "auto", recorded: Iterable[str] = ()) -> Pick:
    """The judge for `asked` (a `--judge` value): `none`; `recorded`: the kind and model of the
    first of the run's judge names (`heuristic`, `openai:<model>` …), none when it was not judged;
    `auto`: a real judge when its key is set, else the heuristic, and why; else that kind."""
    if asked == "none":
        return Pick("none")
    if asked == "recorded":
        names = sorted(recorded)
        if not names:
            return Pick("none")
        kind, _, model = names[0].partition(":")
        return Pick(kind, model or None)
    kind = resolve_kind(asked)
    return Pick(kind, why=AUTO_WHY.get(kind, AUTO_FALLBACK_WHY) if asked == "auto" else "")
