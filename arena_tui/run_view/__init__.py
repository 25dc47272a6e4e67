"""The run view-model: folds the event stream of one run into what the screens show.

Live runs and replays feed the same `RunState`, so a replayed run looks exactly like the
live one did; widgets only ever render a `RunState`, never raw events. No Textual here.
Which judgement counts and how pass rates are counted is `arena_tui.verdicts`' rule.
`state.py` folds the events, `rows.py` holds what it fills (turn rows, lines, meters).
"""

from .rows import SILENT_DBFS, LogLine, Meter, TranscriptLine, TurnRow, TurnSpec, specs_from_benchmark, wait_text
from .state import RunState

__all__ = ["SILENT_DBFS", "LogLine", "Meter", "RunState", "TranscriptLine", "TurnRow", "TurnSpec",
           "specs_from_benchmark", "wait_text"]
