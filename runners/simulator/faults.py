"""The simulator's fault plans: the spec, its kinds and its parser are the spine's
(`arena_tui.spine.faults`), so the monitor can say which turn got which fault; the simulator
plays them (`turns.py`, `connection.py`, `replies.py`)."""

from arena_tui.spine.faults import FAULT_KINDS, FaultKind, FaultPlan, FaultSpecError, TurnFault, parse_faults

__all__ = ["FAULT_KINDS", "FaultKind", "FaultPlan", "FaultSpecError", "TurnFault", "parse_faults"]
