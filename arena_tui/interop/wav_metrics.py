"""Voice-to-voice, leading silence and overlap per turn, from a recorded `conversation.wav`.

A reference run folder has no latency of ours: the reference computes its figures afterwards from
the recording (`scripts/analyze_turn_metrics.py`: `wav_v2v_ms` = bot speech start − user speech
end, `silent_pad_silero_ms` = bot speech start − the 2 kHz tag, overlaps of user and bot speech of
100 ms or more). We read the same recording by the rules a live run measures with
(`arena_tui.spine.speech`), so an imported turn's figures mean what a live turn's do:

- The tag: the reference mixes a 2 kHz / 15 ms / −12 dBFS tone into the first bot frame after the
  user stopped. It is found on the bot track where the 2 kHz component carries most of the level
  (5 ms blocks, then to the sample on a one-period envelope: the centre of its half-peak span less
  7.5 ms, so the reference's 2 ms fades do not move it), and blanked before
  the bot's speech is read, so a tone is never speech; bot speech starting under it (a leading
  silence under 15 ms) reads as starting after it. The tag is the turn's first bot frame:
  leading silence = bot speech onset − tag, pipeline TTFB = tag − user speech end.
- User speech: the energy rule of a live run's user WAV (`energy_speech`, pauses under 300 ms
  bridged, each interval padded by 30 ms: the same 30 ms a live voice-to-voice carries). Bot
  speech: the live bot detector (`SpeechDetector`), fed the bot track.
- Turns: bot speech before the user first speaks is the greeting. The user's speech splits into
  turns where the bot replied in between and the user spoke again only after that reply had
  ended by `RESUME_MS` (the reference waits 2 s of bot silence and 0.5 s before the next turn;
  a bot speaking into a pause of the user's is a barge-in inside the turn). Turn k's window runs
  from its first user speech to the next turn's; its bot speech is what starts inside it. Turns
  map onto transcript rows in order: an answered row takes the next window with a reply, a row
  without an answer (empty response) adds no window (its audio is in the next answered turn's),
  a row for a session the model had already ended (`[MODEL_ENDED_SESSION_EARLY]`) played nothing.
  When the counts disagree nothing is derived, and the reason is kept: a guess would mislabel
  every turn after it.
- A turn with a reconnection is left without figures, as the reference leaves it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from arena_tui.spine.events import Interval, TurnResult
from arena_tui.spine.speech import TAG_DBFS, TAG_FREQ_HZ, TAG_MS, SpeechDetector, TurnMeasures, energy_speech, measure_turn

RESUME_MS = 1000.0  # the user speaking again this soon after the bot's speech ended: the same turn
TAG_BLOCK_MS = 5.0  # a whole number of 2 kHz periods
TAG_SHARE = 0.7  # the 2 kHz component's amplitude over a pure tone's of the block's RMS: a tag
TAG_LEVEL_DB = 6.0  # a tag's amplitude within this of the reference's −12 dBFS
TAG_MIN_MS, TAG_MAX_MS = 5.0, 30.0  # a tag lasts 15 ms (less when its frame was shorter)
TAG_FULL_SLACK_MS = 3.0  # a whole tag is at least 15 ms less this at half its peak (2 ms fades)
_CHUNK_S = 60  # the bot track is scanned for tags a minute at a time


def _tone_blocks(x: np.ndarray, rate: int, start: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(2 kHz amplitude, RMS) of each whole block of `x` (PCM16), full scale 1."""
    n = len(x) // block
    xs = x[: n * block].astype(np.float32).reshape(n, block) / 32768.0
    basis = np.exp(-2j * np.pi * TAG_FREQ_HZ * (start + np.arange(block)) / rate)
    amp = 2.0 * np.abs(xs @ basis) / block
    rms = np.sqrt(np.mean(xs * xs, axis=1))
    return amp, rms


def find_tags(bot: np.ndarray, rate: int) -> list[Interval]:
    """The reference's 2 kHz tags on the bot track (PCM16), each as (onset, end) in ms."""
    amp_tag = 10 ** (TAG_DBFS / 20.0)
    lo, hi = amp_tag * 10 ** (-TAG_LEVEL_DB / 20.0), amp_tag * 10 ** (TAG_LEVEL_DB / 20.0)
    block = max(1, round(rate * TAG_BLOCK_MS / 1000.0))
    flags: list[np.ndarray] = []
    step = _CHUNK_S * rate // block * block
    for start in range(0, len(bot), step):
        amp, rms = _tone_blocks(bot[start : start + step], rate, start, block)
        flags.append((amp >= lo / 2) & (amp <= hi) & (amp >= TAG_SHARE * math.sqrt(2.0) * rms))
    marked = np.concatenate(flags) if flags else np.zeros(0, dtype=bool)
    out: list[Interval] = []
    period = max(1, round(rate / TAG_FREQ_HZ))
    tag_len = round(rate * TAG_MS / 1000.0)
    k = 0
    while k < len(marked):
        if not marked[k]:
            k += 1
            continue
        k1 = k
        while k1 < len(marked) and marked[k1]:
            k1 += 1
        a, b = max(0, (k - 1) * block), min(len(bot), (k1 + 1) * block)
        seg = bot[a:b].astype(np.float64) / 32768.0
        z = seg * np.exp(-2j * np.pi * TAG_FREQ_HZ * (a + np.arange(len(seg))) / rate)
        env = 2.0 * np.abs(np.convolve(z, np.ones(period) / period, mode="same"))
        above = np.flatnonzero(env >= env.max() / 2.0)
        i0, i1 = a + int(above[0]), a + int(above[-1])  # first and last sample at half its peak
        span_ms = (i1 + 1 - i0) * 1000.0 / rate
        if TAG_MIN_MS <= span_ms <= TAG_MAX_MS and lo <= env.max() <= hi:
            # a whole tag: its centre sample less half its length (its fades, if any, cancel out);
            # a tag cut short by a short frame: where it reached half its peak
            whole = span_ms >= TAG_MS - TAG_FULL_SLACK_MS
            first = round((i0 + i1) / 2.0 - (tag_len - 1) / 2.0) if whole else i0
            out.append(Interval(start_ms=first * 1000.0 / rate, end_ms=max(i1 + 1, first + tag_len) * 1000.0 / rate))
        k = k1
    return out


def blank_tags(bot: np.ndarray, rate: int, tags: Sequence[Interval]) -> np.ndarray:
    """The bot track with each tag (and a 1–2 ms guard around it) silenced: a copy."""
    out = bot.copy()
    for t in tags:
        a = max(0, math.floor((t.start_ms - 1.0) * rate / 1000.0))
        b = min(len(out), math.ceil((max(t.end_ms, t.start_ms + TAG_MS) + 2.0) * rate / 1000.0))
        out[a:b] = 0
    return out


@dataclass(frozen=True)
class Window:
    """One user turn in the recording: its speech, and the span until the next turn's speech."""

    speech: list[Interval]
    start_ms: float
    end_ms: float  # the next turn's first speech (inf for the last)
    bot_speech: list[Interval]
    tags: list[Interval]

    @property
    def reply(self) -> bool:
        return bool(self.bot_speech)


@dataclass(frozen=True)
class Recording:
    """What a conversation.wav shows, on its own timeline (ms from its first frame)."""

    user_speech: list[Interval]
    bot_speech: list[Interval]
    tags: list[Interval]
    greeting: list[Interval]  # bot speech before the user first spoke
    windows: list[Window]


def _replied(prev: Interval, nxt: Interval, bot: Sequence[Interval]) -> bool:
    """Whether the bot answered between two stretches of user speech: it spoke after the first
    ended, and had been quiet `RESUME_MS` when the user spoke again."""
    begun = [b.end_ms for b in bot if b.start_ms < nxt.start_ms]
    if not begun:
        return False
    last = max(begun)
    return last > prev.end_ms and nxt.start_ms - last >= RESUME_MS


def read_recording(stereo: np.ndarray, rate: int) -> Recording:
    """Speech, tags and user turns of a stereo PCM16 recording (frames × 2: left user, right bot)."""
    user_track, bot_track = np.ascontiguousarray(stereo[:, 0]), np.ascontiguousarray(stereo[:, 1])
    tags = find_tags(bot_track, rate)
    detector = SpeechDetector(rate)
    detector.feed(blank_tags(bot_track, rate, tags), 0.0)
    detector.flush(len(bot_track) * 1000.0 / rate)
    bot = list(detector.intervals)
    user = energy_speech(user_track, rate)
    first = user[0].start_ms if user else math.inf
    greeting = [b for b in bot if b.start_ms < first]
    bot = [b for b in bot if b.start_ms >= first]
    groups: list[list[Interval]] = []
    for u in user:
        if groups and not _replied(groups[-1][-1], u, bot):
            groups[-1].append(u)
        else:
            groups.append([u])
    windows = []
    for i, g in enumerate(groups):
        a, b = g[0].start_ms, groups[i + 1][0].start_ms if i + 1 < len(groups) else math.inf
        windows.append(Window(g, a, b, [s for s in bot if a <= s.start_ms < b], [t for t in tags if a <= t.start_ms < b]))
    return Recording(user, bot, tags, greeting, windows)


@dataclass
class Derived:
    """Per turn, what the recording measured; the turns left without figures and why."""

    measures: dict[int, tuple[Window, TurnMeasures, float | None]] = field(default_factory=dict)  # (.., tag ms)
    skipped: dict[int, str] = field(default_factory=dict)
    problem: str | None = None  # why nothing was derived at all

    def summary(self, rec: Recording) -> dict[str, object]:
        """What the run's config records: derived on import, from what, for which turns."""
        return {
            "from": "conversation.wav",
            "rules": "arena-tui timeline: energy VAD (user), bot speech detector, the reference's 2 kHz tags",
            "turns": sorted(self.measures),
            "skipped": {str(k): v for k, v in sorted(self.skipped.items())},
            **({"problem": self.problem} if self.problem else {}),
            "greeting_ms": [[g.start_ms, g.end_ms] for g in rec.greeting],
            "tags": len(rec.tags),
            "user_turns": len(rec.windows),
        }


def _answered(r: TurnResult) -> bool:
    return r.status == "ok" and bool(r.assistant_text.strip() or r.tool_calls)


def _first_frame(w: Window) -> float | None:
    """The tag that marks the turn's first bot frame: the last one at or before its first bot
    speech (any when it has none)."""
    onset = min((b.start_ms for b in w.bot_speech), default=math.inf)
    before = [t.start_ms for t in w.tags if t.start_ms <= onset]
    return before[-1] if before else None


def derive(rec: Recording, results: Sequence[TurnResult]) -> Derived:
    """Match the recording's user turns to the transcript's rows and measure each (module docstring)."""
    out = Derived()
    rows = sorted((r for r in results if r.status != "ended_early" and r.turn_index >= 0), key=lambda r: r.turn_index)
    placed: dict[int, Window] = {}
    p, fits = 0, True
    for r in rows:
        if _answered(r):
            if p >= len(rec.windows) or not rec.windows[p].reply:
                fits = False
                break
        elif not (r.status == "ended_session" and p < len(rec.windows)):
            continue  # no answer: its audio is in the window the next answered turn closes
        placed[r.turn_index] = rec.windows[p]
        p += 1
    rest = rec.windows[p:]
    if not fits or len(rest) > 1 or any(w.reply for w in rest):
        answered = sum(_answered(r) for r in rows)
        replies = sum(w.reply for w in rec.windows)
        out.problem = (f"conversation.wav shows {len(rec.windows)} user turn(s), {replies} with a reply, for "
                       f"{answered} answered turn(s) in transcript.jsonl: the turns cannot be placed, no figure derived")
        return out
    by_turn = {r.turn_index: r for r in rows}
    for turn, w in placed.items():
        r = by_turn[turn]
        if r.reconnects:
            out.skipped[turn] = "reconnected during the turn: its timing in the recording is not trusted"
            continue
        tag = _first_frame(w)
        speech = Interval(start_ms=w.speech[0].start_ms, end_ms=w.speech[-1].end_ms)
        out.measures[turn] = (w, measure_turn(speech, w.speech, tag, w.bot_speech, r.latencies.provider_ttfb_ms), tag)
    return out


def apply(results: Sequence[TurnResult], derived: Derived) -> list[TurnResult]:
    """The rows with what the recording measured: latencies (the provider's TTFB kept), speech,
    overlap. A row without figures is returned as it was."""
    out = []
    for r in results:
        got = derived.measures.get(r.turn_index)
        if got is None:
            out.append(r)
            continue
        w, m, _ = got
        lat = m.latencies.model_copy(update={"provider_ttfb_ms": r.latencies.provider_ttfb_ms})
        out.append(r.model_copy(update={
            "latencies": lat, "user_audio": Interval(start_ms=w.speech[0].start_ms, end_ms=w.speech[-1].end_ms),
            "user_speech": w.speech, "bot_speech": w.bot_speech, "overlap_ms": m.overlap_ms,
            "interrupted": r.interrupted or bool(m.overlaps),
        }))  # fmt: skip
    return out
