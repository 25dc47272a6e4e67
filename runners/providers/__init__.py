"""The providers, one folder each (`<name>/`), as Pipecat's `services/<vendor>/`: its catalog
entry (`entry.py`: plain data, what `arena-tui models` lists), its `ProviderRunner` subclass
(`runner.py`, with what only it needs beside it: GLM's own service, Gemini's and Nova's
subclasses of Pipecat's), and its local fake (`fake.py`, `--fake`). `runners/catalog.py`
reads every folder's `entry.py`, so listing models imports no runner (nor Pipecat); Gemini's and
Nova's services load only when a session is built, their SDKs being optional.

The modules here beside the folders are what several providers share: `effort.py`,
`fair_receive.py`, `text_base.py`, `aws.py`, `cascade.py` (+ `local_parts.py`) and
`service.py` (`--service`).
"""
