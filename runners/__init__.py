"""The engine: providers, turn loops, fakes and the simulator (docs/architecture.md).

onnxruntime (Silero VAD, the local cascade's voices) starts Microsoft's telemetry when it loads unless
told not to: a device id and an event database under ~/.cache/Microsoft, a `.ses` file in TMPDIR, and
uploads it would try to send off this machine. Whatever imports the engine has it off before any of
them loads (a user who sets ORT_DISABLE_TELEMETRY themselves is obeyed; child processes inherit it).
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
