"""Where a keyless OpenAI-compatible server (Ollama, vLLM, llama.cpp) is looked for: the one
address both the `local:<model>` runner and the `--judge local` judge use."""

from __future__ import annotations

import os

LOCAL_LLM_URL_ENV = "ARENA_TUI_LOCAL_LLM_URL"
LOCAL_LLM_URL = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible API on this machine
LOCAL_KEY = "no-key"  # what such a server is sent (the client needs a string; a real key never goes there)


def local_llm_url(explicit: str | None = None) -> str:
    """`explicit` (a flag), else `ARENA_TUI_LOCAL_LLM_URL`, else Ollama's default."""
    return explicit or os.environ.get(LOCAL_LLM_URL_ENV) or LOCAL_LLM_URL
