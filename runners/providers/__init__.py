"""One module per provider (`<name>.py`, a `ProviderRunner` subclass and what only it needs;
GLM's own Pipecat service and server events beside it: `glm_service.py`, `glm_events.py`).

`runners/catalog.py` lists them as plain data, beside the contract they fill in (`runners/base.py`),
so listing models imports none of them (nor Pipecat).
"""
