"""One module per provider (`<name>.py`, a `ProviderRunner` subclass and what only it needs;
a provider's own Pipecat service beside it: `gemini_service.py`, `nova_service.py` (+ `nova_history.py`),
`glm_service.py` (+ `glm_turns.py`, `glm_replies.py`, `glm_wire.py`, `glm_events.py`); Gemini's and
Nova's load only when a session is built, their SDKs being optional).

`runners/catalog.py` lists them as plain data, beside the contract they fill in (`runners/base.py`),
so listing models imports none of them (nor Pipecat).
"""
