"""A threaded loopback HTTP server that records requests and plays scripted faults.

Threaded (not asyncio) so the same fake serves the async `openai` client and the sync
`boto3` client running in a worker thread.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Fault:
    """One scripted misbehaviour, used for the next request instead of a normal answer."""

    status: int = 500
    body: bytes | None = None  # raw body; None -> the fake's error envelope
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before answering (longer than the client timeout = a timeout; stop() ends it)
    answer: dict[str, Any] | None = None  # a 200 with this structured answer (e.g. schema-violating)
    content: str | None = None  # a 200 whose model output is this raw text (e.g. malformed JSON)


class LoopbackServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.gets: list[Recorded] = []  # GET requests (a client asking what the server is), kept apart
        self.faults: deque[Fault] = deque()
        self.lock = threading.Lock()
        self.stopping = threading.Event()  # releases handlers still delaying (a hanging server)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                rec = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with outer.lock:
                    outer.requests.append(rec)
                    fault = outer.faults.popleft() if outer.faults and outer.takes_fault(rec) else None
                status, headers, payload = outer.handle(rec, fault)
                if fault is not None and fault.delay_s:
                    outer.stopping.wait(fault.delay_s)
                self.reply(status, headers, payload)

            def do_GET(self) -> None:  # noqa: N802
                rec = Recorded("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, b"")
                with outer.lock:
                    outer.gets.append(rec)
                self.reply(*outer.handle_get(rec))

            def reply(self, status: int, headers: dict[str, str], payload: bytes) -> None:
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def start(self) -> "LoopbackServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, rec: Recorded, fault: Fault | None) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError

    def takes_fault(self, rec: Recorded) -> bool:
        """Whether a scripted fault is played on this request (a server's side requests let it pass)."""
        return True

    def handle_get(self, rec: Recorded) -> tuple[int, dict[str, str], bytes]:
        """A JSON API answers a path it does not serve with 404 (vLLM, llama.cpp: `GET /api/version`)."""
        return 404, {"Content-Type": "application/json"}, json.dumps({"detail": "Not Found"}).encode()


AnswerFn = Callable[[str], dict[str, Any]]
Reply = tuple[int, dict[str, str], bytes]


class JudgeFake(LoopbackServer):
    """A judge provider's fake: what it answers (`answer(target text)`), a prompt cache, what an
    injected fault becomes (its raw body, else the provider's error envelope: `_error`), and its
    model's limits as the real API enforces them: a request asking for more output than `max_output`
    or a prompt and output over `context_window` is refused with the API's own error; a reply longer
    than the output asked for is cut there and marked with the API's stop reason (`cut_to`)."""

    def __init__(self, answer: AnswerFn, *, max_output: int, context_window: int) -> None:
        super().__init__()
        self.answer = answer
        self.cache = PrefixCache()
        self.max_output, self.context_window = max_output, context_window
        self.cuts = 0  # replies cut at their output limit
        self._n = 0

    def _error(self, status: int, message: str) -> Reply:
        raise NotImplementedError

    def injected(self, fault: Fault | None) -> Reply | None:
        """The reply of a fault that is no 200 with an answer (None for any other)."""
        if fault is None or fault.answer is not None or fault.content is not None:
            return None
        if fault.body is not None:
            return fault.status, {"Content-Type": "application/json", **fault.headers}, fault.body
        status, headers, body = self._error(fault.status, f"injected {fault.status}")
        return status, {**headers, **fault.headers}, body

    def scripted(self, target: str, fault: Fault | None) -> dict[str, Any]:
        """The structured answer: the fault's, else the script's for the target turn."""
        return fault.answer if fault is not None and fault.answer is not None else self.answer(target)


def approx_tokens(text: str) -> int:
    """~4 characters a token: enough to simulate usage numbers and prefix caching."""
    return max(1, len(text) // 4)


def cut_to(text: str, tokens: int) -> tuple[str, bool]:
    """What a model that writes `text` returns when it may write `tokens` tokens: the text, or its
    start (and True: cut)."""
    if approx_tokens(text) <= tokens:
        return text, False
    return text[: tokens * 4], True


class PrefixCache:
    """Provider-like prompt caching: the longest prefix shared with an earlier prompt, in blocks."""

    def __init__(self, min_tokens: int = 1024, block: int = 128) -> None:
        self.seen: list[str] = []
        self.min_tokens, self.block = min_tokens, block

    def cached_tokens(self, prompt: str) -> int:
        best = 0
        for old in self.seen:
            n = 0
            for a, b in zip(old, prompt):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        self.seen.append(prompt)
        toks = approx_tokens(prompt[:best]) if best else 0
        if toks < self.min_tokens:
            return 0
        return toks // self.block * self.block
