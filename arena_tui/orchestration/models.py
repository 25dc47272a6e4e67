"""The model list: every alias, its provider, and what a run with it still needs.

Read from the providers' catalog (`runners.catalog`: plain data), so listing imports
no provider module and no Pipecat: `arena-tui models` prints it, the new-run dialog offers it
(`launch.EngineLauncher.models`). Keys are checked for presence only; their values never leave
the environment.

What each is said to be (`Model.status`, the one rule both surfaces show) is only what is
known: `ready` for what answers — the simulator and every local fake, and a model served on
this machine (`local:<model>`) whose server answered a short probe listing it; `key set` for a
remote service whose key is there (whether the service takes it, only a run finds out: no
listing spends a request on a paid API); `needs …` for what is missing.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from arena_tui.spine.local_llm import LOCAL_LLM_URL, LOCAL_LLM_URL_ENV, local_llm_url
from arena_tui.spine.urls import endpoint_label
from runners import catalog

from ..launcher import KEY_SET, READY

#: how long a local server may take to answer the probe (wall seconds, all of it)
PROBE_S = 1.0
PROBE_BYTES = 1 << 20  # a model list is small; a server sending more is not read further



@dataclass(frozen=True)
class Model:
    alias: str
    provider: str
    model_id: str
    kind: str  # text, simulator or audio
    key_env: tuple[str, ...]  # the environment variables that hold its key
    simulated: bool
    needs: tuple[str, ...]  # what a run against the real service still needs (keys, packages)
    needs_fake: tuple[str, ...]  # what a run against its local fake still needs
    manual_commit: bool = False  # its protocol lets `--disable-vad` close the user's turn by our commit
    effort: str = ""  # the reasoning effort it takes (`--effort`, the catalog's `Effort.text`); "" none
    #: a model served on this machine: why its server does not answer for it ("" it does); None: not one
    served: str | None = None
    #: what it can do, in a few words (the catalog's `Capabilities`, manual commit, effort): "24 kHz, 60 min session, …"
    caps: str = ""
    #: environment variables a real run needs besides the key (an endpoint, a project)
    setting_env: tuple[str, ...] = ()
    duplex: bool = False  # full duplex: it answers when it chooses (the full-duplex turn loop)
    #: it hands its work to a backend model; the family spelling that names one of ours (`gpt-live-1+`)
    delegation: bool = False
    family: str = ""

    def status(self, fake: bool = False) -> str:
        """What it is said to be (`arena-tui models`, the new-run dialog): `needs …`, `ready`
        (it answers), `key set` (a remote service's key is there), or why a local server is not ready."""
        missing = self.needs_fake if fake else self.needs
        if missing:
            return "needs " + "; ".join(missing)
        if fake or self.simulated:
            return READY  # its local fake answers
        if self.served is not None:
            return self.served or READY
        return KEY_SET


def models() -> list[Model]:
    """Every model alias, in alias order (a local server probed once, `probe_local`)."""
    needs: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # per provider: its aliases need the same
    out = []
    for alias in catalog.known_models():
        p = catalog.find(alias)
        if p.name not in needs:
            needs[p.name] = (tuple(short(x) for x in p.problems()), tuple(short(x) for x in p.problems(fake=True)))
        model = p.model_id(alias)
        # the provider served on this machine (`local:<model>`): asked whether it answers for the model
        served = probe_local(local_llm_url(), model) if p.name == "local" else None
        out.append(Model(alias, p.name, model, p.kind, p.key_env, p.simulated, *needs[p.name],
                         manual_commit=p.manual_commit, served=served,
                         effort=p.efforts[alias].text if alias in p.efforts else "",
                         caps=caps_text(p, alias), setting_env=tuple(p.setting_env), duplex=p.caps.duplex,
                         delegation=p.caps.delegation, family=p.alias_family))
    return out


def caps_text(p: catalog.Provider, alias: str) -> str:
    """A model's capabilities as the list says them: its output rate, session limit, rotation,
    duplex and delegation, then `manual commit` (`--disable-vad`) and `effort` (`--effort`, its values below)."""
    extra = [word for word, on in (("manual commit", p.manual_commit), ("effort", alias in p.efforts)) if on]
    return ", ".join(part for part in (p.caps.text, *extra) if part)


def manual_commit_names() -> str:
    """The providers `--disable-vad` applies to (the catalog's `manual_commit`), as a sentence names them."""
    return catalog.manual_commit_names()


def probe_local(url: str, model: str, timeout_s: float = PROBE_S) -> str:
    """Why the OpenAI-compatible server at `url` does not answer for `model`, in a few words naming
    the endpoint (no credentials); "" when it answers its model list (`GET /models`) with `model`
    in it. Bounded: the socket's `timeout_s`, at most half a second more whatever the server does
    (a slow drip), and no proxy (a local server)."""
    where = endpoint_label(url)
    got: list[str] = []

    def ask() -> None:
        try:
            request = _models_request(url)
        except ValueError as e:  # a port that is not a number, …
            got.append(f"{where} is not a URL it can ask ({e})")
            return
        got.append(_ask(request, model, timeout_s, where))

    worker = threading.Thread(target=ask, name="probe-local-llm", daemon=True)  # daemon: a stuck socket never holds an exit
    worker.start()
    worker.join(timeout_s + 0.5)  # the socket's own timeout says it first; this bounds the rest (a slow drip)
    return got[0] if got else f"no answer from {where} within {timeout_s:g} s"


def _models_request(url: str) -> urllib.request.Request:
    """`GET <url>/models`, its query kept, credentials in the URL sent as an HTTP client sends them."""
    parts = urlsplit(url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    target = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/") + "/models", parts.query, ""))
    headers = {"Accept": "application/json"}
    if parts.username is not None:
        basic = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(basic).decode()
    return urllib.request.Request(target, headers=headers)


def _ask(request: urllib.request.Request, model: str, timeout_s: float, where: str) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout_s) as response:
            body = response.read(PROBE_BYTES)
    except urllib.error.HTTPError as e:
        return f"{where} answered HTTP {e.code}"
    except (OSError, ValueError) as e:  # refused, no such host, timed out, not a URL
        reason = getattr(e, "reason", None) or e
        return f"no answer from {where} ({reason})"
    try:
        listed = [str(m.get("id", "")) for m in json.loads(body).get("data", [])]
    except (ValueError, AttributeError, TypeError):
        return ""  # it answers; a server that does not list its models is asked for one at the run
    if any(served(m, model) for m in listed):
        return ""
    return f"{where} does not list {model} (it serves {', '.join(listed[:3]) or 'none'}{', …' if len(listed) > 3 else ''})"


def served(listed: str, model: str) -> bool:
    """Whether a listed model id is `model` (Ollama lists `llama3.2:latest` for `llama3.2`)."""
    return listed == model or (":" not in model and listed == f"{model}:latest")


def short(problem: str) -> str:
    """'nova-sonic: environment variable AWS_ACCESS_KEY_ID is not set (…)' → 'AWS_ACCESS_KEY_ID'."""
    text = problem.split(": ", 1)[-1]
    m = re.match(r"environment variable (\S+)", text)
    return m.group(1) if m else text


@dataclass(frozen=True)
class Cascades:
    """How to spell a cascade (`cascade:<stt>+<llm>+<tts>`) and what each part may be."""

    spelling: str
    stt: tuple[str, ...]  # speech-to-text parts
    tts: tuple[str, ...]  # text-to-speech parts
    examples: tuple[str, ...]
    keys: dict[str, tuple[str, ...]]  # part → its key's variables (the parts that need one)
    local: tuple[str, ...]  # parts that run in this process (the [local] extra, weights on this machine)
    local_hint: str  # how to install them
    local_llm: str  # the spelling of a locally served text model, e.g. local:<model>
    local_llm_url: str  # where it is served: "ENV (default URL)"
    local_example: str


def cascades() -> Cascades:
    parts = {**catalog.STT, **catalog.TTS}
    return Cascades(f"{catalog.CASCADE_PREFIX}<stt>+<llm>+<tts>", tuple(catalog.STT), tuple(catalog.TTS),
                    catalog.CASCADE_EXAMPLES, {name: c.key_env for name, c in parts.items() if c.key_env},
                    tuple(name for name, c in parts.items() if c.local), catalog.LOCAL_HINT,
                    " ".join(f"{p.alias_family}<model>" for p in catalog.TEXT_FAMILIES),
                    f"{LOCAL_LLM_URL_ENV} (default {LOCAL_LLM_URL})", catalog.LOCAL_EXAMPLE)
