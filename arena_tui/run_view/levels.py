"""A run's two level meters as its events come: the user's and the bot's level and whether each is
speaking, silent once the run is over, and the overlap flag (both speaking, or an overlap reported
or measured in the last second of run time). A live meter without new levels falls on the wall clock
(`rows.Meter.shown`)."""

from __future__ import annotations

from typing import Protocol

from arena_tui.spine.events import Level, Overlap, RunEnded, RunEvent, SpeechBoundary, TurnEnded

from .rows import SILENT_DBFS, Meter


class Clocked(Protocol):
    """What the meters read of their run: how far its events go (audio time) and its wall clock."""

    last_ms: float

    def wall_now(self) -> float | None: ...


class Said(Protocol):
    """The run's log (`run_log.RunLog`), folded after the meters: whether a line of `kind` was said for the turn."""

    def said(self, turn: int | None, kind: str) -> bool: ...


class Levels:
    """`meters` ("user", "bot") and `overlap_until_ms` (run time until which an overlap is flagged)."""

    def __init__(self, run: Clocked, log: Said) -> None:
        self.run, self.log = run, log
        self.meters = {"user": Meter(), "bot": Meter()}
        self.overlap_until_ms = -1.0

    def fold(self, ev: RunEvent) -> None:
        match ev:
            case Level():
                m = self.meters[ev.source]
                m.rms_dbfs, m.peak_dbfs, m.updated_ms, m.updated_wall = ev.rms_dbfs, ev.peak_dbfs, ev.t_ms, self.run.wall_now()
            case SpeechBoundary():
                who, _, edge = ev.kind.partition("_speech_")
                self.meters[who].speaking = edge == "started"
            case Overlap():
                # reported once one of its two speech intervals has closed (runners.timeline.overlaps.LiveOverlaps),
                # so after it began: flag it from when it arrives, for a second of run time
                self.overlap_until_ms = max(self.overlap_until_ms, ev.end_ms, self.run.last_ms) + 1000
            case TurnEnded():
                res = ev.result
                self.meters["user"].speaking = self.meters["bot"].speaking = False
                if res.overlap_ms > 0 and not self.log.said(res.turn_index, "overlap"):  # measured, but no overlap event came
                    self.overlap_until_ms = max(self.overlap_until_ms, self.run.last_ms) + 1000
            case RunEnded():
                for m in self.meters.values():  # nothing plays once the run is over (a stored run showed its last level)
                    m.speaking, m.rms_dbfs, m.peak_dbfs = False, SILENT_DBFS, SILENT_DBFS

    def shown(self, who: str) -> Meter:
        return self.meters[who].shown(self.run.wall_now())

    @property
    def overlapping(self) -> bool:
        both = self.meters["user"].speaking and self.meters["bot"].speaking
        return both or self.run.last_ms <= self.overlap_until_ms
