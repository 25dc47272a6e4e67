"""One module per provider (`<name>.py`, a `ProviderRunner` subclass and what only it needs;
GLM's own Pipecat service and server events beside it: `glm_service.py`, `glm_events.py`).

`catalog.py` lists them as plain data, so listing models imports none of them (nor Pipecat).
"""
