"""The simulator's fault plans: the spec, its kinds, its parser and the duplex behaviour a plan
holds are the spine's (`arena_tui.spine.faults`), so the monitor can say which turn got which
fault; the simulator plays them (`turns.py`, `connection.py`, `replies.py`)."""

from arena_tui.spine.faults import (BACKCHANNELS, FAULT_KINDS, PLAIN_VAD, SIDE_SPEECH, DuplexBehaviour, FaultKind,
                                    FaultPlan, FaultSpecError, TurnFault, parse_faults)

__all__ = ["BACKCHANNELS", "FAULT_KINDS", "PLAIN_VAD", "SIDE_SPEECH", "DuplexBehaviour", "FaultKind", "FaultPlan",
           "FaultSpecError", "TurnFault", "parse_faults"]
