"""Export to and import from the reference harness's run-directory layout.

Layout (`layout.py`): `runs/<benchmark>/<YYYYmmddTHHMMSS>_<model>_<uuid8>/` holding
`transcript.jsonl`, `runtime.json`, stereo `conversation.wav` (left user, right bot), and per
judge `<judge>_judged.jsonl`, `<judge>_summary.json`, `<judge>_analysis.md`.

Rows carry the reference fields with the reference's meaning (`fields.py`); our exports add an
`arena_tui` key holding the exact TurnResult / Judgement / summary, so a round trip through our
own exports loses nothing, while reference directories (without that key) import through the
mapping. `export.py` writes a stored run, `read_run.py` reads a folder back as events (`import_run`;
not `import_run.py`, which the function of that name would shadow on the package),
`conversation.py` puts its `conversation.wav` back on the run's timeline, `wav_metrics.py` derives
a reference run's latencies from it.
"""

from .export import export_run
from .read_run import import_run
from .layout import AlreadyStored, InteropError

__all__ = ["AlreadyStored", "InteropError", "export_run", "import_run"]
