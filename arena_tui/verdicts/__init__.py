"""Verdicts: the judge's dimensions, which judgement counts, pass rates and the strict row rule.

One home for these rules, so the live screen, the runs list, the store, phase 2, the summary
and the exports can never disagree about a number. The rules:

- **Dimensions.** The LLM scores `LLM_DIMENSIONS`; `turn_taking` is computed in code from the
  run's timeline (audio runs only). A turn is judged on its own `dimensions` (the benchmark
  data switches category dimensions on) that the LLM scores, plus `turn_taking` on audio runs
  (`judged_dimensions`). Summaries and table columns list them in `DIMENSIONS` order (`ordered`).
- **Which judge counts** (`run_judge`). A run is judged by one judge: its kind and model and the
  version of our rules it was asked by (`JudgeId`), so two judges are never pooled in a figure and
  a run sits in exactly one row (`arena_tui.compare.stored.row_identity`). Each turn that counts
  names the judge whose valid verdict on it is newest; the judge most turns name is the run's. A
  re-judge that gave no verdict (no server) names none: the run's verdicts, figures and row stay
  as they were, and no turn shows its error. Only that judge's revisions (and a person's) count.
- **Which judgement counts** (`standing`). A turn's revisions are ordered by revision number,
  then phase (a phase-2 revision over the phase-1 one it revises), then arrival. The one that
  counts is the newest revision *without an error*: a re-judge that fails never erases a valid
  earlier verdict. It stays visible as an error: `Standing.error` is set whenever the judge's newest
  revision errored, and every screen shows it beside the verdict that stands. A turn whose
  every revision errored is a judge error (`verdict == "judge_error"`). Phase 2 revises the
  standing phase-1 judgement and numbers its revisions after the newest one.
- **A person's verdict wins** (`standing`). A revision carrying a `Review` is a person's verdict
  on the dimensions it scores (`arena-tui review`, `arena_tui.judge.human`). Over the judge's
  standing revision, each of those dimensions takes the newest person's verdict on it, also
  when the judge judges the turn again later (a re-judge, a whole-run judgement, phase 2), until
  a review that `withdraw`s them: from then on the judge's count again. What counts is that
  overlay (`Standing.judgement`; its person's scores carry `by`, the dimensions are
  `Standing.human`); the judge's own is `Standing.machine` (what phase 2 and judge agreement
  read). A turn with a person's verdict and no valid judge's counts on the person's alone.
  Every figure says how many of its verdicts are a person's (`Tally.human`).
- **What a figure counts** (`counts`, `tally`). Every figure on every surface (runs list, run
  header, headless and `judge` summaries, leaderboard, compare, campaigns, report, export) counts
  the turns the model played and the judge judged: a turn whose status is the model's
  (`MODEL_STATUSES`: ok, no_response, empty_response, ended_session, ended_early) with a valid
  verdict. Every other turn the run set out to run is no verdict on the model, neither its
  failure nor its pass: it is counted apart by reason (`APART`, worded once: not played,
  stopped, lost pace, infra failure, engine error; judge error and not judged for a played
  turn the judge could not score) and every surface says how many (`apart_text`: "3 not
  played · 1 stopped"). The judge never judges such a turn (`counts`), and a judgement left
  from an earlier take of it counts nowhere. A run in which the model got no turn (every turn
  lost to the infrastructure, stopped or not played) has no scored row anywhere (`Tally.scored`).
  A run the model heard and never answered (no turn `ANSWERED`: every turn no_response) counts
  in full, each turn its failure, and every surface says so (`NEVER_ANSWERED`: check the setup).
  A run the judge never saw has no rates: "not judged", never 0 %.
- **Pass rates** (`tally`, `pass_rates`). Per dimension: passes over scored verdicts ("na" is
  not scored) of each counted turn's standing judgement. A verdict that scores nothing (every
  dimension "na": an imported reference row whose scores are all null, its "incomplete" row)
  is no valid verdict: the turn is not judged. A judge's reply that leaves "na" on a dimension
  the turn must be judged on (`must_judge`: IF and KB on every turn, a category dimension the
  turn lists, tool use where a call was expected or made; `left_unjudged`) judged the turn only
  in part: it is recorded as a judge error on the turn (counted apart, said), never a pass nor
  "not scored".
- **Strict row rule** (`row_verdict`, `row_passes`; named `STRICT` everywhere). A turn passes
  strictly when every scored dimension passes (none fails).
- **The original eval's turn pass** (`original_row_passes`; named `ORIGINAL`). The original
  30-turn eval (kwindla/aiewf-eval) passes a turn on tool use ∧ instruction following ∧ KB
  grounding alone (`ORIGINAL_DIMENSIONS`: none of the three fails; tool use not scored, no
  call expected nor made, is right), over the same turns. Ours is every scored dimension,
  turn_taking included: both are counted (`Tally.strict`, `Tally.original`) and shown, each named.
- **Consistency across repeats** (`turn_consistency`). Per turn, its row verdict in each repeat
  (`repeat_status`: "missing" where it has none), how often that changes from one repeat to the
  next, and which turns never pass. A model that passes 80 % of turns by passing a different 80 %
  each time is a different model from one that always fails the same 20 %.

Judgements may be `arena_tui.spine.events.Judgement` objects or plain dicts with the same field
names (`turn_index`, `revision`, `phase`, `error`, `scores`, `heuristic`, `review`, `causes`), as read from rows.

One module per rule family, every name read from here: `dimensions.py` (the dimensions, their
names, a turn's verdict and the row rules), `standing.py` (which judgement counts), `counting.py`
(what a figure counts, pass rates, what is counted apart), `repeats.py` (consistency across repeats).
"""

from .counting import (
    ANSWERED,
    APART,
    APART_REASONS,
    JUDGE_ERROR,
    MODEL_STATUSES,
    NEVER_ANSWERED,
    NO_ANSWER,
    NOT_JUDGED,
    NOT_PLAYED,
    PLAY_REASONS,
    UNJUDGED,
    Tally,
    apart_reason,
    apart_text,
    counts,
    human_text,
    pass_rates,
    tally,
)
from .dimensions import (
    DIMENSION_TABLE,
    DIMENSIONS,
    LLM_DIMENSIONS,
    NAMES,
    ORIGINAL,
    ORIGINAL_DIMENSIONS,
    REFERENCE_ORDER,
    STRICT,
    TOOL,
    TURN_TAKING,
    Named,
    judged_dimensions,
    left_unjudged,
    must_judge,
    named,
    ordered,
    original_row_passes,
    row_passes,
    row_verdict,
    scores_of,
    verdict_of,
)
from .repeats import RepeatStatus, TurnConsistency, repeat_status, turn_consistency
from .standing import (
    ANY,
    JudgeId,
    Standing,
    in_order,
    is_review,
    judge_id,
    newest_revisions,
    run_judge,
    standing,
    standing_judgements,
    standing_of,
)

__all__ = [
    "ANSWERED", "ANY", "APART", "APART_REASONS", "DIMENSION_TABLE", "DIMENSIONS", "JUDGE_ERROR", "LLM_DIMENSIONS", "MODEL_STATUSES",
    "NAMES", "NEVER_ANSWERED", "NOT_JUDGED", "NOT_PLAYED", "NO_ANSWER", "ORIGINAL", "ORIGINAL_DIMENSIONS", "REFERENCE_ORDER",
    "PLAY_REASONS", "STRICT", "TOOL", "TURN_TAKING", "UNJUDGED", "JudgeId", "Named", "RepeatStatus", "Standing",
    "Tally", "TurnConsistency", "apart_reason", "apart_text", "counts", "human_text", "in_order", "is_review",
    "judge_id", "judged_dimensions", "left_unjudged", "must_judge", "named", "newest_revisions",
    "ordered", "original_row_passes", "pass_rates", "repeat_status", "row_passes", "row_verdict", "run_judge",
    "scores_of", "standing", "standing_judgements", "standing_of", "tally", "turn_consistency", "verdict_of",
]
