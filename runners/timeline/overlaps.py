"""Overlaps and barge-ins reported while the turn runs, as soon as they are certain."""

from __future__ import annotations

import math

from arena_tui.spine.events import Interval

from arena_tui.spine.speech import MIN_OVERLAP_MS, merge_intervals, overlap_intervals


class LiveOverlaps:
    """User/bot speech overlaps reported as soon as they are certain, not at the turn's end.

    Fed speech boundaries on the timeline (a detector may report a boundary a little after
    it happened, so times need not arrive in order); an overlap is certain once one of its
    two intervals has closed. Each is reported once, naming the side that started speaking
    over the other. The user holds the floor from the start of their turn's speech: a bot
    speech span that began after it (also in a pause between the user's phrases, the way a
    negative voice-to-voice is measured) is the bot talking over the user (`bot_barge_in`);
    the user coming in while a bot span that began before their speech still plays is the
    user barging in (`user_barge_in`). Who resumed first after a pause says nothing.

    A duplex cue's speech (`who="duplex"`: scripted into the bot's reply) holds no floor: there
    the side that started speaking first was talked over by the other.
    """

    def __init__(self, min_ms: float = MIN_OVERLAP_MS) -> None:
        self.min_ms = min_ms
        self.closed: dict[str, list[Interval]] = {"user": [], "duplex": [], "bot": []}
        self.open: dict[str, float | None] = {"user": None, "duplex": None, "bot": None}
        self.reported: list[Interval] = []

    def boundary(self, who: str, started: bool, t_ms: float) -> list[tuple[Interval, str]]:
        if started:
            if self.open[who] is None:
                self.open[who] = t_ms
        elif (began := self.open[who]) is not None:
            self.closed[who].append(Interval(start_ms=began, end_ms=max(t_ms, began)))
            self.open[who] = None
        return self._certain()

    def close(self, t_ms: float) -> list[tuple[Interval, str]]:
        """End whatever is still open (the turn is over)."""
        out: list[tuple[Interval, str]] = []
        for who in ("user", "duplex", "bot"):
            out += self.boundary(who, False, t_ms)
        return out

    def _spans(self, who: str) -> list[Interval]:
        spans = list(self.closed[who])
        if (began := self.open[who]) is not None:
            spans.append(Interval(start_ms=began, end_ms=math.inf))
        return spans

    def _certain(self) -> list[tuple[Interval, str]]:
        out: list[tuple[Interval, str]] = []
        bot = merge_intervals(self._spans("bot"), 0.0)
        user = self._spans("user")
        if user:
            floor = min(u.start_ms for u in user)  # where the user's turn began speaking
            for ov, span in self._new(user, bot):
                out.append((ov, "bot_barge_in" if span.start_ms >= floor else "user_barge_in"))
        duplex = self._spans("duplex")
        for ov, span in self._new(duplex, bot):
            cue = next(d for d in duplex if d.start_ms <= ov.start_ms <= d.end_ms)
            out.append((ov, "bot_barge_in" if span.start_ms >= cue.start_ms else "user_barge_in"))
        return out

    def _new(self, spans: list[Interval], bot: list[Interval]) -> list[tuple[Interval, Interval]]:
        """Overlaps of `spans` with the bot's that are certain and not reported yet, each with its bot span."""
        found = []
        for ov in overlap_intervals(spans, bot, self.min_ms):
            if math.isinf(ov.end_ms) or any(r.start_ms < ov.end_ms and ov.start_ms < r.end_ms for r in self.reported):
                continue
            self.reported.append(ov)
            found.append((ov, next(b for b in bot if b.start_ms <= ov.start_ms <= b.end_ms)))
        return found
