"""The run view-model: folds the event stream of one run into what the screens show.

Live runs and replays feed the same `RunState`, so a replayed run looks exactly like the
live one did; widgets only ever render a `RunState`, never raw events. No Textual here.
Which judgement counts and how pass rates are counted is `arena_tui.verdicts`' rule.
`state.py` (`RunState`) holds the run's course and hands each event to its parts, one per job:
`table.py` (the turn rows), `transcript.py`, `levels.py` (the meters), `waits.py` (the wait under
way), `judgements.py` (the run's judge, the tally, the causes), `run_log.py` (the event log),
`costs.py`; `rows.py` holds what they fill (turn rows, lines, meters).
"""

from .rows import SILENT_DBFS, LogLine, Meter, TranscriptLine, TurnRow, TurnSpec, specs_from_benchmark, wait_text
from .state import RunState

__all__ = ["SILENT_DBFS", "LogLine", "Meter", "RunState", "TranscriptLine", "TurnRow", "TurnSpec",
           "specs_from_benchmark", "wait_text"]
