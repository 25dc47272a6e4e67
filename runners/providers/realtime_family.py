"""What our services and runners of Pipecat's OpenAI-Realtime family share: OpenAI's, Azure's,
xAI's, Inworld's and Azure Voice Live's. Pipecat wrote that service five times with one private
shape (`_api_session_ready`, `_llm_needs_conversation_setup`, `_create_response`, …), so one rule
written against it serves all five (`RealtimeReplay`), each dialect saying only what differs:

- history replay: an engine rotation opens a new session; the history goes in as one
  `conversation.item.create` per message, tool call and tool output, once the session is
  configured and before anything else of the conversation (`_create_item` marks each as ours,
  so its echo is not taken for the start of a reply);
- a session opened without a kickoff (`respond=False`) asks for no response: Pipecat's first
  context always sends `response.create`, and the model's answer to nothing would land in the
  next turn; the conversation is set up (its items, the session settings) without it;
- each reply's final status reaches the engine (`on_response_status`, `status_reason`);
- liveness and readiness are read from the service itself (`connection_alive`,
  `conversation_ready`: `RealtimeRunner` asks), its receive loop a fair share of the event loop
  (`fair_receive`);
- the user's audio ends at the service, sent (`push_frame`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypedDict

from pipecat.frames.frames import Frame, InputAudioRawFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import LLMService

from ..base import ProviderRunner, ResponseStatus, SessionSpec
from .fair_receive import fair


class ConversationItem(Protocol):
    """A dialect's conversation item (its `events.ConversationItem`), as the replay handles it."""

    @property
    def id(self) -> str | None: ...

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self: ...


def status_reason(details: object) -> str:
    """Why a reply ended as it did, from its `status_details`: its reason, else its error's message."""
    if not isinstance(details, dict):
        return str(details) if details else ""
    error = details.get("error")
    return str(details.get("reason") or (error.get("message") if isinstance(error, dict) else None) or "")


if TYPE_CHECKING:
    class _RealtimeShape(LLMService):
        """What `RealtimeReplay` reads of the Pipecat service it is mixed into, as a checker reads
        Pipecat's (an unannotated `self._websocket = None` is typed None there)."""

        base_url: str
        _websocket: None
        _receive_task: None
        _context: LLMContext | None
        _api_session_ready: bool
        _llm_needs_conversation_setup: bool
        _response_active: bool
        _messages_added_manually: dict[Any, Any]

        def __init__(self, **dialect_args: object) -> None:
            """The dialect's own constructor (key, endpoint, settings): its arguments passed on as given."""

        async def _connect(self) -> None: ...

        async def _receive_task_handler(self) -> None: ...

        async def _create_response(self) -> None: ...

        async def _send_session_update(self) -> None: ...

        async def send_client_event(self, event: object) -> None: ...

        async def _ws_send(self, realtime_message: dict[str, object]) -> None: ...

        async def _handle_evt_response_done(self, evt: object) -> None: ...
else:
    _RealtimeShape = object


class RealtimeReplay(_RealtimeShape):
    """Mixed in before a Pipecat service of the family (see the module docstring)."""

    #: the dialect's `conversation.item.create` event class
    item_event: ClassVar[Callable[..., object]]
    #: its conversation setup names the system instruction (Inworld's and Voice Live's adapters take it there)
    instruction_in_setup: ClassVar[bool] = False

    def __init__(self, *, replay: Sequence[ConversationItem] = (), respond: bool = True,
                 on_response_status: ResponseStatus | None = None, **dialect_args: object) -> None:
        super().__init__(**dialect_args)
        self._replay = list(replay)
        self._respond_on_setup = respond
        self.replayed_items = 0
        self.on_response_status = on_response_status  # the engine's, from the session's spec
        # True until the first connect attempt ends: the pipeline starts playing input before
        # the socket is up, and a session still connecting is not a dead one.
        self.connecting = True

    # -- what a dialect says

    def _replying(self) -> bool:
        """A reply is under way (the server refuses another)."""
        return self._response_active

    def _response_outcome(self, evt: object) -> tuple[str | None, object]:
        """A `response.done` event's status and its `status_details` (`evt`: the dialect's own event class)."""
        raise NotImplementedError

    async def _create_item(self, item: ConversationItem, *, fresh: bool) -> None:
        """One item of ours into the conversation (`fresh`: under an id of its own, a reset re-sends
        them), marked as ours, so the echo of an assistant item is not taken for a new reply."""
        if fresh:
            item = item.model_copy(update={"id": uuid.uuid4().hex})
        self._messages_added_manually[item.id] = True
        await self.send_client_event(self.item_event(item=item))

    # -- the shared rules

    async def _connect(self) -> None:
        try:
            await super()._connect()
        finally:
            self.connecting = False

    async def push_frame(self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM) -> None:
        """The user's chunks end here, sent: Pipecat passes every frame on, but nothing after the
        service reads them (our tracks took them at the pacer, the speaker plays the bot), and
        passing each of the 50 a second on cost a push, its observer and our tap."""
        if direction == FrameDirection.DOWNSTREAM and isinstance(frame, InputAudioRawFrame):
            return
        await super().push_frame(frame, direction)

    async def _receive_task_handler(self) -> None:
        self._websocket = fair(self._websocket)  # a burst: a share of each loop step across sessions (`fair_receive`)
        await super()._receive_task_handler()

    async def _handle_evt_response_done(self, evt: object) -> None:
        if self.on_response_status is not None:
            status, details = self._response_outcome(evt)
            self.on_response_status(status or "", status_reason(details))
        await super()._handle_evt_response_done(evt)

    def connection_alive(self) -> bool:
        """Pipecat does not report a closed socket: the receive loop ending is the sign (a
        session whose first connect is still under way is alive)."""
        if self.connecting:
            return True
        task = self._receive_task
        return self._websocket is not None and task is not None and not task.done()

    @property
    def conversation_ready(self) -> bool:
        """Configured (session.updated) and the conversation set up (replay and context sent)."""
        return bool(self._api_session_ready) and not self._llm_needs_conversation_setup

    async def _create_response(self) -> None:
        setting_up = self._api_session_ready and not self._replying() and self._llm_needs_conversation_setup
        if setting_up and self._replay:
            items, self._replay = self._replay, []
            for item in items:
                await self._create_item(item, fresh=True)
            self.replayed_items = len(items)
        if setting_up and not self._respond_on_setup:
            await self._set_up_conversation()
            return
        await super()._create_response()

    async def _set_up_conversation(self) -> None:
        """Pipecat's conversation setup (the context as items, the session settings) without
        the `response.create` that follows it there: the server answers the user's turn."""
        assert self._context is not None
        self._log_llm_conversation_setup(self._context)
        instruction = self._settings.system_instruction if self.instruction_in_setup else None
        params = await self.get_llm_adapter().get_llm_invocation_params(
            self._context, system_instruction=instruction if isinstance(instruction, str) else None)
        for item in params["messages"]:
            await self._create_item(item, fresh=False)
        await self._send_session_update()
        self._llm_needs_conversation_setup = False


class SessionArgs(TypedDict):
    """What every session's service of the family is given besides its dialect's own arguments."""

    api_key: str
    #: the seeded conversation asks for a reply (only the greeting's does)
    respond: bool
    on_response_status: ResponseStatus | None


class RealtimeRunner[S: RealtimeReplay](ProviderRunner[S]):
    """A runner whose sessions are a `RealtimeReplay` service of the family: where one connects,
    whether it lives, when the seeded conversation is in."""

    def session_args(self, spec: SessionSpec) -> SessionArgs:
        """The key, whether the seeded conversation asks for a reply, the engine's response-status hook."""
        return {"api_key": self.api_key(spec.config), "respond": spec.kickoff is not None,
                "on_response_status": spec.on_response_status}

    def service_endpoint(self, service: S) -> str:
        return service.base_url

    def is_alive(self, service: S) -> bool:
        return service.connection_alive()

    def session_ready(self, service: S) -> bool:
        return service.conversation_ready  # (xAI drops audio sent before session.updated)
