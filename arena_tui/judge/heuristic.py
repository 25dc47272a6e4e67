"""Offline judge for the no-key demo: labelled heuristic everywhere its scores appear.

Thresholds (recall of the golden answer's content words found in the assistant's answer):
- kb_grounding, state_tracking, ambiguity_handling: pass at recall >= 0.40 and every number
  in the golden answer present in the reply;
- instruction_following: pass when the reply is non-empty, not a sentinel, and recall >= 0.25;
- tool_use_correct: canonical matching of the turn's calls (na when none expected and none made).
These only make sense against the simulator, which speaks golden answers; they say nothing
about a real model's quality (docs/judging.md, "The offline heuristic judge": on real Gemini Live
replies it passed kb_grounding on 1 of 9 turns that Claude passed on 299-300 of 300). A whole-run
request is answered turn by turn, the same way: it realigns nothing (the code rules do, after).
"""

from __future__ import annotations

import re

from arena_tui.spine.benchmark import Turn

from arena_tui.spine.events import TokenUsage, TurnResult
from ..verdicts import DIMENSION_TABLE, LLM_DIMENSIONS
from .backends import JudgeBackend, JudgeReply, JudgeRequest
from .matching import call_matches
from .schema import JudgeOutput, RunJudgeOutput, Score, Scores, TurnVerdicts

GROUNDING_RECALL = 0.40
ENGAGEMENT_RECALL = 0.25
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"\d+(?:[.:]\d+)?")
_STOP = set(
    "a an the and or but if of to in on at for with by from as is are was were be been being it its this that these "
    "those i you he she we they me him her us them my your our their there here what which who whom when where why how "
    "do does did done have has had can could will would shall should may might must not no yes so just also very "
    "about into over than then too up out all any some each more most other such only own same s t".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def recall(golden: str, answer: str) -> float:
    g = content_words(golden)
    if not g:
        return 1.0
    return len(g & content_words(answer)) / len(g)


class HeuristicJudge(JudgeBackend):
    name = "heuristic"
    heuristic = True

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        if request.output is RunJudgeOutput:
            return JudgeReply(self.score_run(request), TokenUsage())
        assert request.turn is not None and request.result is not None, "a one-turn request names its turn"
        return JudgeReply(self.score(request.turn, request.result, request.dimensions), TokenUsage())

    def score_run(self, request: JudgeRequest) -> RunJudgeOutput:
        """Each turn of a whole-run request on its own (`score`)."""
        verdicts = []
        for r in request.results:
            out = self.score(request.benchmark.turn(r.turn_index), r, request.turn_dimensions[r.turn_index])
            reasons = dict.fromkeys(getattr(out.scores, d).reasoning for d in LLM_DIMENSIONS
                                    if getattr(out.scores, d).verdict != "na")
            verdicts.append(TurnVerdicts(
                turn=r.turn_index, reasoning="; ".join(reasons) or "heuristic: nothing scored",
                **{d: getattr(out.scores, d).verdict for d in LLM_DIMENSIONS},
                root_cause=out.root_cause, fabricated_action=False, unexecuted_reference=False,
                words_contradict_actions=False,
            ))
        return RunJudgeOutput(realignment_notes="heuristic: no realignment (the code rules apply it)",
                              function_call_tracking=[], final_judgments=verdicts)

    def score(self, turn: Turn, result: TurnResult, dimensions: list[str]) -> JudgeOutput:
        answer = result.assistant_text if not result.sentinel else ""
        r = recall(turn.golden_text, answer)
        numbers_ok = set(_NUMBER.findall(turn.golden_text)) <= set(_NUMBER.findall(answer))
        grounded = bool(answer.strip()) and r >= GROUNDING_RECALL and numbers_ok
        engaged = bool(answer.strip()) and r >= ENGAGEMENT_RECALL
        why = f"heuristic: golden-word recall {r:.2f}, numbers {'present' if numbers_ok else 'missing'}"

        def s(ok: bool, dim: str) -> Score:
            if dim not in dimensions:
                return Score(verdict="na", reasoning="not scored on this turn")
            return Score(verdict="pass" if ok else "fail", reasoning=why)

        expected = turn.expected_calls
        made = [c for c in result.tool_calls if not c.is_duplicate]
        used: set[int] = set()
        matched = 0
        for exp in expected:
            for i, c in enumerate(made):
                if i not in used and call_matches(exp, c.name, c.args):
                    used.add(i)
                    matched += 1
                    break
        extra = len(made) - len(used)
        root = "none"
        if not expected and not made:
            tool = Score(verdict="na", reasoning="no call expected, none made")
        else:
            ok = matched == len(expected) and extra == 0
            tool = Score(
                verdict="pass" if ok else "fail",
                reasoning=f"heuristic: {matched}/{len(expected)} expected calls matched, {extra} other call(s)",
            )
            if matched < len(expected):
                root = "wrong_call" if made else ("over_clarification" if answer.rstrip().endswith("?") else "none")
        # each dimension the judge scores, by its offline rule (`verdicts.DIMENSION_TABLE`)
        offline = {"grounded": lambda d: s(grounded, d), "engaged": lambda d: s(engaged, d), "calls": lambda d: tool}
        return JudgeOutput(
            scores=Scores.model_validate(  # (`Scores` is made from the dimension table: its fields unknown to a checker)
                {d.name: offline[d.offline](d.name) for d in DIMENSION_TABLE if d.judge and d.offline}),
            root_cause=root,
            fabricated_action=False,
            unexecuted_reference=False,
        )
