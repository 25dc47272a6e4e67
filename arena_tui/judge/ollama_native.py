"""Ollama's own API, for the local judge when its server is Ollama: the one way to set a request's
context window.

Ollama's OpenAI-compatible endpoint has no field for it (its documentation: "The OpenAI API does
not have a way of setting the context size for a model"; its `ChatCompletionRequest` has no
`options`, and unknown fields are dropped). Through it every request gets the server's default
window (2,048 or 4,096 tokens on most machines), and a longer prompt silently loses its start: the
judge's rules. `/api/chat` takes the window (`options.num_ctx`) and the output budget
(`options.num_predict`) per request, and `/api/show` says the window a model was trained with.
Whether the server is Ollama is asked once (`GET /api/version`); vLLM and llama.cpp answer 404 and
keep the OpenAI-compatible route, where a prompt over the window is refused, never cut.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from .errors import InvalidOutput, TransientError
from .sdk_errors import short, status_error

WINDOW_STEP = 8_192  # num_ctx is rounded up to a multiple: Ollama reloads the model whenever it changes
PROBE_TIMEOUT_S = 5.0


def root_of(base_url: str) -> str:
    """Ollama's own root from its OpenAI-compatible base URL (`…:11434/v1` -> `…:11434`)."""
    return base_url.rstrip("/").removesuffix("/v1")


class OllamaServer:
    """The native API of the server behind a local judge's URL, if it is Ollama."""

    def __init__(self, base_url: str, endpoint: str, timeout_s: float) -> None:
        self.http = httpx.AsyncClient(base_url=root_of(base_url), timeout=timeout_s)
        self.endpoint = endpoint
        self.is_ollama: bool | None = None  # None: not known yet (not asked, or the server did not answer)
        self._windows: dict[str, int | None] = {}

    async def probe(self) -> bool:
        """Whether the server is Ollama (asked once it answers; False while it cannot be reached)."""
        if self.is_ollama is None:
            try:
                resp = await self.http.get("/api/version", timeout=PROBE_TIMEOUT_S)
            except httpx.HTTPError:
                return False  # not reachable now: the request itself will say so, and retry
            try:
                self.is_ollama = resp.status_code == 200 and "version" in resp.json()
            except ValueError:
                self.is_ollama = False
        return self.is_ollama

    async def window(self, model: str) -> int | None:
        """The context window `model` was trained with (`/api/show`'s `<arch>.context_length`), or None."""
        if model not in self._windows:
            try:
                resp = await self.http.post("/api/show", json={"model": model}, timeout=PROBE_TIMEOUT_S)
                info = resp.json().get("model_info") or {} if resp.status_code == 200 else {}
            except (httpx.HTTPError, ValueError, AttributeError):
                return None  # asked again next time
            found = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int) and v > 0]
            self._windows[model] = found[0] if found else None
        return self._windows[model]

    async def chat(self, model: str, messages: list[dict[str, str]], schema: dict[str, Any], *, num_ctx: int,
                   num_predict: int, timeout_s: float) -> dict[str, Any]:
        """One non-streaming `/api/chat` answering in `schema`; its JSON reply, or the error it means."""
        body = {"model": model, "messages": messages, "stream": False, "format": schema,
                "options": {"num_ctx": num_ctx, "num_predict": num_predict}}
        try:
            resp = await self.http.post("/api/chat", json=body, timeout=timeout_s)
        except httpx.TimeoutException as e:
            raise TransientError(f"{type(e).__name__}: no reply from {self.endpoint} within {timeout_s:g} s") from e
        except httpx.HTTPError as e:
            raise TransientError(f"{type(e).__name__}: cannot reach {self.endpoint}: {short(e)}") from e
        try:
            data = resp.json()
        except ValueError:
            kind = resp.headers.get("content-type", "").split(";")[0] or "no content type"
            raise InvalidOutput(f"judge reply from {self.endpoint} was not JSON ({kind}, {len(resp.content)} bytes)") from None
        if resp.status_code != 200:
            said = data.get("error") if isinstance(data, dict) else None
            raise status_error(resp.status_code, f"HTTP {resp.status_code} from {self.endpoint}: {str(said or data)[:200]}")
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise InvalidOutput(f"judge reply from {self.endpoint} is not an /api/chat reply ({json.dumps(data)[:80]})")
        return data

    async def aclose(self) -> None:
        await self.http.aclose()
