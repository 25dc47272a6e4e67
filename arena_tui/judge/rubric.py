"""The judging rules: which dimensions a turn is scored on, turn-taking (decided in code), and
what the judge LLM is told (`RUBRIC`, each rule once, and one task per way of judging).

docs/judging.md is the rule table: what the Audio Arena method says, what the reference's judge
does, what we do and why, and which rules code decides (`phase2`) and which the judge decides.
The prompt itself is built by `prompt.PromptBuilder`.
"""

from __future__ import annotations

from arena_tui.spine.benchmark import Turn

from arena_tui.spine.events import EMPTY_RESPONSE, DimensionScore, TurnResult
from ..verdicts import DIMENSION_TABLE, judged_dimensions


#: the version of our judging rules (rubric, prompt shape, code rules) a judgement was made by; stored
#: with every judgement, so figures judged by different rules are never mistaken for one another
JUDGE_VERSION = "arena-judge/4"
OVERLAP_FAIL_MS = 100.0
LEADING_SILENCE_FAIL_MS = 5000.0
_NO_ANSWER = {"no_response", "empty_response", "error", "ended_early"}


def dimensions_for(turn: Turn, *, audio: bool) -> list[str]:
    """The turn's own `dimensions` (the data switches category dimensions on) + turn_taking for audio."""
    return judged_dimensions(turn.dimensions, audio=audio)


def turn_taking_issues(result: TurnResult) -> list[tuple[str, str]]:
    """What fails a turn's turn-taking, each as (its cause, a `spine.causes` name; how it reads):
    the facts of the engine's timeline, never the LLM's."""
    issues: list[tuple[str, str]] = []
    lat = result.latencies
    if result.status in _NO_ANSWER or result.sentinel == EMPTY_RESPONSE:
        cause = {"empty_response": "empty_reply", "ended_early": "ended_early"}.get(result.status, "no_answer")
        issues.append((cause, f"no usable response ({result.status})"))
    elif result.no_audio:
        issues.append(("no_audio", "the reply had text but no audio"))
    elif lat.pipeline_ttfb_ms is None and lat.voice_to_voice_ms is None:
        issues.append(("timing_missing", "missing timing"))
    for name in ("pipeline_ttfb_ms", "voice_to_voice_ms"):
        value = getattr(lat, name)
        if value is not None and value < 0:
            issues.append(("barge_in", f"negative {name} ({value:.0f} ms)"))
    if result.overlap_ms >= OVERLAP_FAIL_MS:
        issues.append(("overlap", f"user/bot overlap {result.overlap_ms:.0f} ms >= {OVERLAP_FAIL_MS:.0f} ms"))
    if result.reconnects > 0:
        issues.append(("reconnected", f"reconnected mid-turn ({result.reconnects}x)"))
    if lat.leading_silence_ms is not None and lat.leading_silence_ms > LEADING_SILENCE_FAIL_MS:
        issues.append(("slow_start", f"leading silence {lat.leading_silence_ms / 1000:.1f} s > 5 s"))
    return issues


def turn_taking(result: TurnResult) -> DimensionScore:
    """Decided from the run engine's timeline, never by the LLM."""
    if issues := turn_taking_issues(result):
        return DimensionScore(verdict="fail", reasoning="; ".join(text for _, text in issues))
    if result.duplex:  # its cues' speech over the reply is the duplex figures', not an overlap of this turn's speech
        return DimensionScore(verdict="pass", reasoning="timing present, no overlap of the turn's own speech (its duplex "
                              "cues are scored under duplex), no reconnect")
    return DimensionScore(verdict="pass", reasoning="timing present, no overlap, no reconnect")


RUBRIC = """You judge a spoken-dialogue benchmark. A voice assistant talked with a scripted user, turn by turn,
and could call tools; the harness answered its calls from the benchmark's script. For each turn you are
asked about, give each dimension listed as scored for that turn a verdict, "pass" or "fail", and put
"na" on every dimension not listed. Below: what you get, the dimensions, then the rules that cut across
them. Each rule is stated once; apply it wherever it bears.

# What you get
- The knowledge base (KB). Lines between [tool-only] and [/tool-only] were not in the assistant's prompt:
  only a tool reveals them. The rest is the prompt-visible KB; the whole is the full (oracle) KB.
- The assistant's tools and the expected calls of the whole run.
- Per turn: what the user said (and what the provider heard, when that differs), its categories, the
  dimensions scored, the expected calls and any tool-use guidance, the golden answer, each call the
  assistant made with the payload the harness returned, the turn's status, the turn-taking facts
  measured in code, and what the assistant said.

# Dimensions
""" + "".join(f"{d.name}: {d.rubric}\n" for d in DIMENSION_TABLE if d.judge) + """turn_taking is measured in code from the run's timeline; you never score it (rule 8 says how it bears).

# Rules
1. The golden answer is one correct answer, not a script. Find the turn's core test (the right fact,
   correcting a false premise, the right call) and judge that; details the user did not ask for are
   optional even when the golden answer has them. Apply the same tolerance to every run of a turn. A
   clock time is the same time in 12-hour and 24-hour form ("15:30" is "3:30 PM") wherever it appears:
   in calls, in the KB, in the golden answer and in what the assistant says; the form alone never fails
   a dimension.
2. Call arguments are equivalent when they mean the same thing: the same time (rule 1), "9:15" vs
   "09:15", list order, case, articles, punctuation, or a reworded free-text field (a title, a note) that
   changes nothing the user would see. Extra arguments consistent with the conversation are fine unless
   they change the action. A broader or narrower search query that still finds the intended item (and
   only it) is equivalent. IDs of every kind must match exactly. The harness compares calls literally,
   so an equivalent call may have got an ARG_MISMATCH or UNEXPECTED_TOOL_CALL error back: decide whether
   the mismatch is benign; if it is, judge the rest of the turn as if the call had succeeded, and never
   fail instruction_following or kb_grounding for the harness's error alone. An end_session the turn
   expects is the expected call even when it carries a harmless argument or the harness answered it with
   an error because the script had no reply for it. For each call that is not a literal match of an
   expected call, add a call_verdicts entry saying whether it is equivalent.
3. A failure counts once, where its cause is. A missed call fails only tool_use_correct, unless a more
   specific cause takes it: asked for what it already had (over_clarification) fails ambiguity_handling
   instead when that is scored; lost a fact from earlier turns (forgotten_state) fails state_tracking
   instead when that is scored; otherwise it stays on tool_use_correct. Asking on a genuinely ambiguous
   request (genuine_ambiguity) is right: tool_use_correct and ambiguity_handling both pass where
   ambiguity_handling is scored. Asking to confirm what needed no confirmation fails tool_use_correct only.
4. Calls across turns: a call made before the turn that expects it satisfies that turn; a call made
   after it is credited on the turn where it was made, and the turn that expected it carries one failure
   (rule 3 says where it lands), unless waiting was right there (the user had not yet given what the call
   needs): then pass its tool_use_correct and name no fault. A turn that belongs to such a shifted
   workflow and still reaches the goal passes instruction_following.
5. Cascade: a later turn that asks about the outcome of an earlier call that never ran, where the earlier
   turn already failed state_tracking for it, passes state_tracking if the assistant does not invent the
   outcome (it says it has no record, or asks); saying so is then no instruction_following or
   kb_grounding failure either. Inventing the outcome fails.
6. Words against actions: when the assistant says it will wait for the user's go-ahead (or will not act
   until told), yet makes that call in the same turn, fail both tool_use_correct and
   instruction_following and set words_contradict_actions. Not this rule: asking permission for an
   action it already completed in this turn (narration after success: instruction_following alone); a
   turn that only asked and made no call (rule 3); reporting an error a correct call really returned.
7. Follow the turn's tool-use guidance when it has one (e.g. a lookup is required, or a redundant one is
   not). Adversarial turns test that the assistant does not invent what does not exist (false premise),
   corrects a user who confidently states a wrong fact, stays in its role against injected instructions,
   notices near-namesakes, and corrects a misquote of earlier turns.
8. Turn-taking: when it failed on a turn the assistant did answer, its words may have been misheard or
   garbled (compare what the provider heard): be lenient on instruction_following for what that
   explains. Leniency never covers a turn with no answer, a turn that was stopped (status interrupted),
   nor words that contradict actions.
9. A turn with no speech but a valid call is still a turn: judge the call. A turn with neither speech
   nor a call did not engage: instruction_following fails.

# Flags (inputs to the rules applied in code afterwards)
root_cause: why an expected call of the turn was missed or wrong: over_clarification, forgotten_state,
genuine_ambiguity, unnecessary_confirmation, wrong_call; "none" when nothing was missed, or waiting
was right (rule 4).
fabricated_action: the assistant claims an action happened that never executed.
unexecuted_reference: the user asks about or builds on an earlier action that never executed.
words_contradict_actions: rule 6.
causes: why the turn fails, one or more for each dimension you fail (none when nothing fails):
invented_fact (states or claims what did not happen or does not exist), kb_contradiction (a clear
contradiction of the KB), words_contradict_actions (rule 6), partial_answer (part of the request or
what the golden answer treats as essential left out), wrong_arithmetic, over_clarification,
unnecessary_confirmation, forgotten_state (rule 3), misreported_result (narration against a call's
result), fell_for_trap (rule 7's adversarial turns), other (none of these: your reasons say what).
A missed or wrong call, silence, and the turn-taking facts are found in code: name them only as
they lead to one of these."""

#: what the judge is asked to do with one turn (live scoring, `judge RUN --turn N`)
TURN_TASK = """Judge the target turn below. The conversation before it is context: use it for what the assistant
should know and for calls already made, but do not judge it. Calls made after this turn are unknown to
you: rules 4 and 5 are applied across turns in code afterwards (where not calling yet was right on this
turn, still pass tool_use_correct as rule 4 says)."""

#: what the judge is asked to do with a whole run in one request
RUN_TASK = """Judge every turn of the run that follows, in two passes. First judge each turn on its own against its golden
answer. Then look across turns: find calls made early or late (rule 4) and their effects, absorb
penalties once (rule 3) and apply the cascade (rule 5); put what you found in realignment_notes and
function_call_tracking (each expected call: its expected turn, the turn it was made on or null, and
on_time, early, late or missing). Answer final_judgments with exactly one entry per turn listed, with
the turn's own number (turn numbers may skip: never renumber)."""

#: a rehydrated run's turn: every turn ran in a fresh session seeded with the golden turns before it
ISOLATED_TASK = """This run was rehydrated: each turn ran alone in a fresh session seeded with the golden turns before
it, shown below as the conversation so far. Judge the target turn on its own: no call made in another
turn counts for it or against it (rules 4 and 5 do not apply), and rule 3 applies within this turn."""


def answered(result: TurnResult) -> bool:
    """Whether the assistant engaged at all: it said something (not a sentinel) or made a call."""
    spoke = bool(result.assistant_text.strip()) and result.sentinel is None
    return spoke or any(not c.is_duplicate for c in result.tool_calls)
