"""OpenAI Realtime through Pipecat's `OpenAIRealtimeLLMService`, and `sim`: the same runner
pointed at the in-process simulator that speaks the same protocol.

The simulator (`runners.simulator`, driven by the benchmark's golden answers) is also the
local fake of every OpenAI Realtime alias: `--fake` runs them against it on 127.0.0.1.

History is replayed as one `conversation.item.create` per message, tool call and tool
output (Pipecat's own setup would pack the history into a single JSON user message and
drop the call structure), before the session's first `response.create`.
"""

from __future__ import annotations

import json

from pipecat.services.openai.realtime import events as rt
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
from websockets.protocol import State

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from ...base import HistoryItem, LocalFake, SessionSpec
from ..effort import effort_parts
from ..realtime_family import RealtimeReplay, RealtimeRunner

DEFAULT_BASE_URL = "wss://api.openai.com/v1/realtime"
SIMULATOR_KEY = "sk-simulator-not-a-secret"


def history_items(history: list[HistoryItem]) -> list[rt.ConversationItem]:
    """Replay items in conversation order, tool structure kept."""
    items: list[rt.ConversationItem] = []
    for h in history:
        if h.kind == "user":
            items.append(
                rt.ConversationItem(type="message", role="user", content=[rt.ItemContent(type="input_text", text=h.text)])
            )
        elif h.kind == "assistant":
            items.append(
                rt.ConversationItem(
                    type="message", role="assistant", content=[rt.ItemContent(type="output_text", text=h.text)]
                )
            )
        elif h.kind == "tool_call":
            items.append(
                rt.ConversationItem(
                    type="function_call", call_id=h.call_id, name=h.name, arguments=json.dumps(h.args, ensure_ascii=False)
                )
            )
        else:
            items.append(
                rt.ConversationItem(
                    type="function_call_output",
                    call_id=h.call_id,
                    output=json.dumps(h.response, ensure_ascii=False) if h.response else "COMPLETED",
                )
            )
    return items


class ReplayBeforeFirstResponse(RealtimeReplay):
    """Our replay and response-status hooks (`RealtimeReplay`) for OpenAI's dialect (OpenAI's, Azure's
    and xAI's services), and nothing sent on a socket the server closed."""

    async def _ws_send(self, realtime_message: dict[str, object]) -> None:
        # A socket the server closed: the session is dead (connection_alive says so and the engine
        # rotates). Pipecat would push an error for every send meanwhile, one per 20 ms audio
        # chunk; at speed 20 that is ~1000 error events a second, each a Pipecat event task whose
        # clean-up scans all the others — the run's loop stalls for minutes.
        ws = self._websocket
        if ws is not None and ws.state is not State.OPEN:
            return
        await super()._ws_send(realtime_message)


class ReplayingRealtimeService(ReplayBeforeFirstResponse, OpenAIRealtimeLLMService):
    item_event = rt.ConversationItemCreateEvent

    def _response_outcome(self, evt: object) -> tuple[str | None, object]:
        assert isinstance(evt, rt.ResponseDone)
        return evt.response.status, evt.response.status_details


class SimulatedRealtimeService(ReplayingRealtimeService):
    """The service as `sim` runs it: the simulator takes `reasoning` (`--effort`) as
    gpt-realtime-2 does, so Pipecat sends it for the simulator's model id too (it drops it for a
    model it does not know to reason)."""

    _REASONING_CAPABLE_MODEL_SUBSTRINGS = (  # type: ignore[assignment]  # Pipecat's unannotated pair, typed as exactly two
        *OpenAIRealtimeLLMService._REASONING_CAPABLE_MODEL_SUBSTRINGS, "gpt-realtime")


class OpenAIRealtimeRunner(RealtimeRunner[ReplayingRealtimeService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = SIMULATOR_KEY
    service_class: type[ReplayingRealtimeService] = ReplayingRealtimeService

    def make_fake(self, config: RunSettings, benchmark: Benchmark) -> LocalFake:
        """The simulator: it speaks the OpenAI Realtime protocol and answers from the golden answers
        (`fake_class`: the simulator, or a subclass with another service's handshake)."""
        from ...fakes.timing import ENVELOPE  # deferred: the simulator loads only for `sim` runs

        # fake_timing "real" (a --fake run of a real alias, or asked for with sim) times replies as
        # a real service does; "instant" and sim's default keep its own fixed delay and one burst
        timing = self.timing or (ENVELOPE if config.fake_timing == "real" else None)
        # it expects each turn's audio as the run's condition makes it (the same seeded transform)
        return self.fake_type()(benchmark, policy=config.sim_policy, faults=config.faults, voice=config.sim_voice, timing=timing,
                                condition=config.condition, seed=config.seed)

    def build_service(self, spec: SessionSpec) -> ReplayingRealtimeService:
        vad = spec.config.vad
        # --disable-vad: `turn_detection: null`; Pipecat then commits the input buffer and asks
        # for a response at each UserStoppedSpeakingFrame, which the engine pushes at the end of
        # the speech in the user WAV (`client_turns`), as the reference's manual mode does
        turn_detection: rt.TurnDetection | bool = False if spec.config.disable_vad else rt.TurnDetection(
            threshold=vad.threshold,
            prefix_padding_ms=vad.prefix_padding_ms,
            silence_duration_ms=vad.silence_duration_ms,
        )
        level, _ = effort_parts(spec.config)
        props = rt.SessionProperties(
            audio=rt.AudioConfiguration(
                input=rt.AudioInput(transcription=rt.InputAudioTranscription(), turn_detection=turn_detection)
            ),
            reasoning=rt.Reasoning(effort=level) if level else None,  # `--effort`: session.reasoning.effort
        )
        settings = self.service_class.Settings(model=spec.model, system_instruction=spec.system_prompt, session_properties=props)
        return self.service_class(base_url=self.endpoint(spec.config), settings=settings, replay=history_items(spec.history),
                                  **self.session_args(spec))


class SimulatorRunner(OpenAIRealtimeRunner):
    """The OpenAI runner against an in-process `SimulatorServer` (no key, any speed)."""

    service_class = SimulatedRealtimeService

    def provider_ttfb_label(self) -> str:
        return "simulator TTFB (Pipecat metrics)"
