"""The benchmark's turns as every session of one simulator shares them.

A retry or a rotated session continues the same conversation, so which turns were heard
(attempts), which were answered, which calls are owed to a later turn (late_call) or were
already made by an earlier one (early_call), and the ground truth of each attempt live here,
once per simulator, not per session. Sessions (`connection.py`) and their reply producers
(`replies.py`) read and update it; the server (`server.py`) exposes its records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arena_tui.spine.benchmark import Benchmark, ExpectedCall
from arena_tui.spine.conditions import CLEAN, Condition, babble_voices, heard

from arena_tui.spine.faults import FaultPlan, TurnFault
from .fingerprint import RATE, FingerprintIndex
from .records import DuplexTruth, ResponseRecord, TurnTruth


class TurnBook:
    """Turn state shared across sessions, and the records of what the simulator did."""

    def __init__(self, benchmark: Benchmark, faults: FaultPlan, condition: Condition = CLEAN, seed: int = 0) -> None:
        self.benchmark = benchmark
        self.faults = faults
        self.condition, self.seed = condition, seed
        self.index = FingerprintIndex()
        self.truth: dict[int, TurnTruth] = {}  # latest attempt per turn
        self.truth_log: list[TurnTruth] = []  # every attempt, in order
        self.responses: list[ResponseRecord] = []
        self.fallbacks: list[dict[str, Any]] = []  # turns identified by order, not by audio
        # the benchmark's duplex cues (turn, place in its list, kind), told apart by their own
        # fingerprints (key: the position here), and what was done about each one heard
        self.cues: list[tuple[int, int, str]] = []
        self.cue_index = FingerprintIndex()
        self.duplex_log: list[DuplexTruth] = []
        self._order = [t.turn_index for t in benchmark.turns]
        self._inputs = {t.input.strip(): t.turn_index for t in benchmark.turns}
        self._attempts: dict[int, int] = {}
        self._replayed: set[int] = set()
        self._answered: set[int] = set()
        self._early_done: set[int] = set()
        self._owed: dict[int, list[tuple[int, ExpectedCall]]] = {}

    def build_index(self) -> None:
        """Fingerprint every turn's WAV as the run's condition makes it heard (slow: run it in a
        thread): the same transform of the same decode the engine plays (`spine.conditions.heard`),
        so a conditioned turn is recognised as exactly as a clean one."""
        for turn in self.benchmark.turns:
            path = self.benchmark.audio_path(turn)
            if path is not None and path.exists():
                self.index.add_file(turn.turn_index, path, self._heard(turn.turn_index))
            for i, cue in enumerate(turn.duplex):
                cue_path = self.benchmark.cue_path(cue)
                if cue_path is not None and cue_path.exists():
                    self.cue_index.add_file(len(self.cues), cue_path, self._heard(turn.turn_index, f"cue{i}"))
                self.cues.append((turn.turn_index, i, cue.kind))
        self.index.link(self.cue_index)

    def _heard(self, turn_index: int, part: str = "") -> Callable[[np.ndarray], np.ndarray]:
        """What a clip of the turn goes through on its way here (the run's condition)."""
        def voices() -> list[np.ndarray]:
            return babble_voices(self.benchmark, turn_index, RATE)

        def under_condition(pcm: np.ndarray) -> np.ndarray:
            out = heard(pcm.tobytes(), RATE, self.condition, self.seed, turn_index, part=part, babble=voices)
            return np.frombuffer(out, dtype=np.int16)

        return under_condition

    # -- which turn, which attempt

    def position(self, turn_index: int) -> int:
        return self._order.index(turn_index)

    def next_unanswered(self) -> int | None:
        return next((t for t in self._order if t not in self._answered), None)

    def next_turn(self, turn_index: int) -> int | None:
        try:
            pos = self._order.index(turn_index)
        except ValueError:
            return None
        return self._order[pos + 1] if pos + 1 < len(self._order) else None

    def conversation_started(self) -> bool:
        return bool(self._attempts or self._replayed)

    def replayed(self, text: str) -> None:
        """A user message the client seeded (the history of a resumed, rotated or rehydrated
        session) that is a turn's input: that turn was said before this session, so it counts
        as answered and the conversation as started (no greeting; a turn told by order only is
        the next one not yet said) — a resumed run's simulator is a fresh one."""
        turn = self._inputs.get(text.strip())
        if turn is not None:
            self._replayed.add(turn)
            self._answered.add(turn)

    def attempts(self, turn_index: int) -> int:
        """Attempts of this turn begun so far (0: never heard)."""
        return self._attempts.get(turn_index, 0)

    def begin_attempt(self, turn_index: int) -> int:
        self._attempts[turn_index] = self._attempts.get(turn_index, 0) + 1
        return self._attempts[turn_index]

    def record_truth(self, truth: TurnTruth) -> None:
        self.truth_log.append(truth)
        self.truth[truth.turn_index] = truth

    # -- answered turns

    def answered(self, turn_index: int) -> bool:
        return turn_index in self._answered

    def mark_answered(self, turn_index: int) -> None:
        if turn_index >= 0:
            self._answered.add(turn_index)

    def unmark_answered(self, turn_index: int) -> None:
        """The reply never got through (the socket dropped mid-reply): the turn is open again."""
        self._answered.discard(turn_index)

    # -- calls

    def plan_calls(self, turn_index: int, fault: TurnFault | None) -> list[tuple[int, ExpectedCall, bool]]:
        """The calls to make on this turn: (for_turn, call, wrong), shaped by early/late/wrong faults."""
        turn = self.benchmark.turn(turn_index)
        own = [] if turn_index in self._early_done else [(turn_index, c) for c in turn.expected_calls]
        owed = self._owed.pop(turn_index, [])
        kind = fault.kind if fault else None
        calls = owed + own
        nxt = self.next_turn(turn_index)
        if kind == "early_call" and nxt is not None:
            calls += [(nxt, c) for c in self.benchmark.turn(nxt).expected_calls]
            self._early_done.add(nxt)
        elif kind == "late_call" and nxt is not None:
            self._owed.setdefault(nxt, []).extend(own)
            calls = owed
        if kind == "wrong_call":
            if not calls:
                tool = self.benchmark.tools[0] if self.benchmark.tools else None
                if tool is None:
                    return []
                return [(turn_index, ExpectedCall(name=tool.name, args={"unexpected_argument": "wrong"}), True)]
            return [(ft, _wrong_call(c), True) for ft, c in calls]
        return [(ft, c, False) for ft, c in calls]


def _wrong_call(call: ExpectedCall) -> ExpectedCall:
    """Same function, one compared argument changed (or an unexpected one added)."""
    args = dict(call.args)
    # IDs first: they must match exactly, even for a lenient judge
    keys = sorted((k for k in args if k not in call.flexible_args), key=lambda k: (not k.endswith(("id", "ids")), k))
    if not keys:
        args["unexpected_argument"] = "wrong"
        return call.model_copy(update={"args": args})
    k = keys[0]
    v = args[k]
    if isinstance(v, bool):
        args[k] = not v
    elif isinstance(v, (int, float)):
        args[k] = v + 1
    elif isinstance(v, str):
        args[k] = str(int(v) + 1).zfill(len(v)) if v.isdigit() else f"{v}-wrong"
    elif isinstance(v, list):
        args[k] = v[:-1] if v else ["wrong"]
    else:
        args[k] = "wrong"
    return call.model_copy(update={"args": args})
