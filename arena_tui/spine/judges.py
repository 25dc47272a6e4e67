"""The judge kinds: the one list behind every `--judge` (run, demo, judge, resume, campaign), a
campaign spec's `judge` and the new-run dialog. A new backend goes here and into
`arena_tui.judge.factory.make_backend`; every surface then offers it.
"""

from __future__ import annotations

HEURISTIC = "heuristic"  # the offline judge: always available, labelled wherever its scores are shown
BACKENDS = ("openai", "bedrock", HEURISTIC)  # what `arena_tui.judge.factory.make_backend` builds
AUTO = "auto"  # openai if OPENAI_API_KEY is set, bedrock if AWS credentials are, else the heuristic
NONE = "none"  # do not judge
KINDS = (AUTO, *BACKENDS)  # what a command that judges takes
KINDS_OR_NONE = (*KINDS, NONE)  # what one that judges as a side effect takes (run, demo, campaign, the dialog)
