"""Local OpenAI-Realtime-protocol simulator driven by a benchmark: the offline demo and test peer.

    async with SimulatorServer(bench, faults="3:no_response,expire=120") as sim:
        service = OpenAIRealtimeLLMService(api_key="sim", base_url=sim.base_url, ...)
        ...
        sim.truth[3]  # what the simulator did on turn 3 (latest attempt), in AUDIO time

How it behaves (what a client can rely on):
- Clock: AUDIO time = ms of input audio received on that connection (samples / 24). VAD
  boundaries, reply delays, slow_first_audio, barge_in and expire all count it, so a run at
  --speed 20 gets the same ground truth as one at real time.
- Turn recognition: fingerprints of the benchmark WAVs (decoded like the engine decodes
  them); unknown audio falls back to the next unanswered turn (logged in `sim.fallbacks`).
  A retry replaying the same audio is the same turn, next attempt. Turn -1: the greeting,
  sent for a `response.create` before any turn was heard.
- VAD: speech_started at the start of >= 100 ms of energy (audio_start_ms = that start),
  speech_stopped after silence_duration_ms (audio_end_ms includes it, as the API's does).
  A recognised turn that pauses mid-WAV gets its reply after the WAV's last speech
  (`wait_for_turn_end=False`: at every speech stop, like the real server_vad).
- Reply: golden answer (first sentences, markdown stripped) as espeak-ng speech or tone
  bursts (`sim.voice`), 150 ms leading silence, 200 ms deltas sent as fast as possible, first
  delta 300 ms of audio after speech_stopped. Turns with expected calls: calls first, speech
  after the client's function_call_output(s) and response.create.
- Faults: see `faults.py`; each one's wire behaviour is in `tests/test_simulator.py`.
- Duplex cues (user speech scripted into a reply): told apart by their fingerprints, stopped
  for or not as the `yield=`/`backchannel=`/`side_speech=` faults say (`duplex.py`); what it
  did per cue is `sim.duplex_truth`.
- A response.create with nothing to answer gets an empty completed response; a second one
  while a response is active gets the API's `conversation_already_has_active_response`.

Everything shown from a simulated run must be labelled a simulator run.
"""

from arena_tui.spine.faults import FAULT_KINDS, FaultPlan, FaultSpecError, TurnFault, parse_faults
from .records import (
    ClientEventRecord,
    DuplexTruth,
    ResponseRecord,
    SessionRecord,
    SimCall,
    ToolOutputRecord,
    TurnTruth,
)
from .server import SimulatorServer

__all__ = [
    "FAULT_KINDS",
    "ClientEventRecord",
    "DuplexTruth",
    "FaultPlan",
    "FaultSpecError",
    "ResponseRecord",
    "SessionRecord",
    "SimCall",
    "SimulatorServer",
    "ToolOutputRecord",
    "TurnFault",
    "TurnTruth",
    "parse_faults",
]
