"""Hostile inputs for `benchmarks import` and `import` + `resume` (issue 41), each built as its item
describes, for tests/test_hostile_import.py and scripts/bench_hostile_import.py.

Every benchmark tree is the reference harness's layout (tests/py_layouts.py) with one thing
changed. What lies outside the folder given holds `SECRET`: if anything of it turns up in what an
import wrote or said, the import read outside its folder.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .py_layouts import DEMO, reference

SECRET = "sk-outside-the-folder-5f1e2d"  # what a file beside or above the given folder holds
PRIVATE_WAV = "tax_return_2025.wav"  # a file name in a folder outside the given one


@dataclass
class Case:
    """One hostile tree: the folder given to `benchmarks import`, and what its refusal must name."""

    name: str
    given: Path
    says: list[str]  # fragments of the line that refuses (or notices) it
    imports: int = 0  # benchmarks still imported beside it


def _bench(given: Path) -> Path:
    return given / "benchmarks" / "bike_bench"


def init_at_top(tmp: Path) -> Case:
    """A benchmark folder given alone, with an `__init__.py` at its top (as every reference harness
    benchmark has), whose config imports `system` from beside it: its parent holds a system.py
    reading a credentials file there."""
    home = tmp / "home"
    given = home / "bench"
    shutil.move(_bench(reference(tmp / "ref")), given)
    config = given / "config.py"
    config.write_text(config.read_text().replace("from .system import system_instruction",
                                                 "from system import system_instruction"))
    (home / "system.py").write_text('from pathlib import Path\n\nsystem_instruction = (Path(__file__).parent / '
                                    '"credentials.txt").read_text()\n')
    (home / "credentials.txt").write_text(SECRET)
    return Case("init_at_top", given, ["bench: not imported: config.py:", "cannot read BenchmarkConfig.system_instruction",
                                       "it is system.system_instruction, imported from no file of the given folder"])


def parent_read(tmp: Path) -> Case:
    """The same folder's own system.py reading `Path(__file__).parent.parent / "credentials.txt"`."""
    home = tmp / "home"
    given = home / "bench"
    shutil.move(_bench(reference(tmp / "ref")), given)
    system = given / "system.py"
    system.write_text(system.read_text().replace('data_dir = Path(__file__).parent / "data"',
                                                 'data_dir = Path(__file__).parent.parent').replace(
        'kb_path = data_dir / "knowledge_base.txt"', 'kb_path = data_dir / "credentials.txt"'))
    (home / "credentials.txt").write_text(SECRET)
    return Case("parent_read", given, ["bench: not imported: system.py:", f"{home / 'credentials.txt'} is outside {given}"])


def linked_benchmark(tmp: Path) -> Case:
    """A benchmark folder that is a symlink to one outside the given folder (its knowledge base
    the secret); the given folder's own benchmark still imports."""
    given = reference(tmp / "given")
    elsewhere = reference(tmp / "elsewhere", "evil_bench")
    (elsewhere / "benchmarks" / "evil_bench" / "data" / "knowledge_base.txt").write_text(SECRET)
    (given / "benchmarks" / "evil_bench").symlink_to(elsewhere / "benchmarks" / "evil_bench", target_is_directory=True)
    return Case("linked_benchmark", given, ["evil_bench: not imported: benchmarks/evil_bench", "links to", "outside"],
                imports=1)


def linked_speaker(tmp: Path) -> Case:
    """A speaker folder under real_audio/ that is a symlink to a private folder outside."""
    given = reference(tmp / "given", speaker="person1")
    private = tmp / "private"
    private.mkdir()
    shutil.copyfile(DEMO / "audio" / "turn_000.wav", private / PRIVATE_WAV)
    shutil.copyfile(DEMO / "audio" / "turn_000.wav", private / "turn_000.wav")
    (_bench(given) / "real_audio" / "person9").symlink_to(private, target_is_directory=True)
    return Case("linked_speaker", given, ["not read:", "real_audio/person9 links to", "outside"], imports=1)


def fifo_knowledge_base(tmp: Path) -> Case:
    """data/knowledge_base.txt is a FIFO nobody writes to (read, it blocks for ever)."""
    given = reference(tmp / "given")
    kb = _bench(given) / "data" / "knowledge_base.txt"
    kb.unlink()
    os.mkfifo(kb)
    return Case("fifo_knowledge_base", given, ["bike_bench: not imported:", "data/knowledge_base.txt is a FIFO, not a "
                                                                             "regular file"])


def socket_knowledge_base(tmp: Path) -> Case:
    """data/knowledge_base.txt is a listening UNIX socket (bound from its folder: a socket's path is short)."""
    given = reference(tmp / "given")
    data = _bench(given) / "data"
    (data / "knowledge_base.txt").unlink()
    here = Path.cwd()
    os.chdir(data)
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("knowledge_base.txt")
    finally:
        os.chdir(here)
    sock.close()  # (the socket file stays; nothing listens: a read would fail, not block)
    return Case("socket_knowledge_base", given, ["bike_bench: not imported:", "data/knowledge_base.txt is a socket, "
                                                                               "not a regular file"])


def fifo_turns(tmp: Path) -> Case:
    """turns.py is a FIFO."""
    given = reference(tmp / "given")
    turns = _bench(given) / "turns.py"
    turns.unlink()
    os.mkfifo(turns)
    return Case("fifo_turns", given, ["bike_bench: not imported:", "turns.py is a FIFO, not a regular file"])


def fifo_wav(tmp: Path) -> Case:
    """One turn's WAV is a FIFO (the rest import; that turn's audio is missing, said)."""
    given = reference(tmp / "given", with_audio=True)
    wav = _bench(given) / "audio" / "turn_003.wav"
    wav.unlink()
    os.mkfifo(wav)
    return Case("fifo_wav", given, ["not read:", "audio/turn_003.wav is a FIFO, not a regular file"], imports=1)


def repeated_name(tmp: Path, *, chars: int, joined: bool, uses: int) -> Case:
    """turns.py binding a big string to a name (`A`, or `B = A + A` when `joined`: twice as big) and
    naming it in `uses` turns: small as a file, `uses` times the string as a value."""
    given = reference(tmp / "given")
    turns = _bench(given) / "turns.py"
    name = "B" if joined else "A"
    rows = ",\n".join(f'    {{"input": {name}, "golden_text": "ok"}}' for _ in range(uses))
    with turns.open("a") as f:
        f.write(f"\nA = '{'x' * chars}'\n" + ("B = A + A\n" if joined else "") + f"\nturns = [\n{rows},\n]\n")
    return Case(f"repeated_name_{uses}", given, ["bike_bench: not imported: benchmarks/bike_bench/config.py:",
                                                 "cannot read BenchmarkConfig.turns", "more than 64 MiB (each use of a "
                                                 "name counts its value again), in benchmarks/bike_bench/turns.py"])


def many_tokens(tmp: Path, tokens: int = 1_000_000) -> Case:
    """turns.py of `tokens` small tokens: a few MB whose syntax tree alone would take gigabytes."""
    given = reference(tmp / "given")
    with (_bench(given) / "turns.py").open("a") as f:
        f.write("\nfiller = [" + "0," * (tokens // 2) + "]\n")
    return Case("many_tokens", given, ["bike_bench: not imported: benchmarks/bike_bench/turns.py: cannot read the file: "
                                       "it has more than 200,000 tokens"])


BENCHMARK_CASES: dict[str, Callable[[Path], Case]] = {
    "init_at_top": init_at_top,
    "parent_read": parent_read,
    "linked_benchmark": linked_benchmark,
    "linked_speaker": linked_speaker,
    "fifo_knowledge_base": fifo_knowledge_base,
    "socket_knowledge_base": socket_knowledge_base,
    "fifo_turns": fifo_turns,
    "fifo_wav": fifo_wav,
    # 8.4 MB of turns.py naming a 16 MB string 50 times (the audit's 2.5 GB), and a 512 kB one 400 times
    # (each turn under the 1 MiB a turns.jsonl line may hold: 200 MB of turns written, and imported)
    "repeated_16mb_x50": lambda tmp: repeated_name(tmp, chars=8_300_000, joined=True, uses=50),
    "repeated_512kb_x400": lambda tmp: repeated_name(tmp, chars=512_000, joined=False, uses=400),
    "many_tokens": many_tokens,
}


def leaked(*places: Path | str) -> list[str]:
    """Where `SECRET` or the private file's name turns up among files under `places` and texts."""
    out = []
    for place in places:
        if isinstance(place, Path):
            files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file() and not p.is_symlink()]
            out += [str(p) for p in files if SECRET.encode() in p.read_bytes() or PRIVATE_WAV in p.name]
        elif SECRET in place or PRIVATE_WAV in place:
            out.append(place[:200])
    return out


# -- item 1: a run folder that names where the key goes -------------------------------------------

KEY = "sk-test-not-a-real-key-41"  # what the user's environment holds as OPENAI_API_KEY


@dataclass
class Listener:
    """A TCP listener on 127.0.0.1 counting every connection made to it and what its first bytes
    carried (the request line, and whether the user's key came with it)."""

    sock: socket.socket = field(default_factory=socket.socket)
    seen: list[tuple[str, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2.0)
                try:
                    head = conn.recv(65536)
                except OSError:
                    head = b""
                self.seen.append((head.split(b"\r\n", 1)[0].decode("latin-1"), KEY.encode() in head))
                conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._thread.join(timeout=5)


def base_url_named(port: int) -> dict:
    """A run's config naming its endpoint: the listener (as a Realtime websocket URL)."""
    return {"base_url": f"ws://127.0.0.1:{port}/v1/realtime"}


def service_named(port: int) -> dict:
    """A run's config naming Pipecat's OpenAI class, the user's key by its variable, and the listener."""
    return {"service": "pipecat.services.openai.llm:OpenAILLMService",
            "service_args": {"api_key": "env:OPENAI_API_KEY", "base_url": f"http://127.0.0.1:{port}/v1"}}


def run_folder(root: Path, connection: dict, *, model: str = "sim") -> Path:
    """A reference-layout run folder (`runs/demo_bench/<ts>_<model>_<id8>/`) of an interrupted run of
    demo_bench: turns 0 and 1 answered, turn 2 planned, its runtime.json's config naming `connection`."""
    folder = root / "runs" / "demo_bench" / f"20260101T000000_{model}_0123abcd"
    folder.mkdir(parents=True)
    turns = [json.loads(line) for line in (DEMO / "turns.jsonl").read_text().splitlines() if line.strip()]
    rows = [{"ts": f"2026-01-01T00:00:{10 * i:02d}.000Z", "turn": i, "model_name": model, "user_text": t["input"],
             "assistant_text": t["golden_text"]} for i, t in enumerate(turns[:2])]
    (folder / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runtime = {"model_name": model, "arena_tui": {
        "benchmark": "demo_bench", "provider": model, "status": "interrupted", "turn_indices": [0, 1, 2],
        "config": {"model": model, "speed": 20.0, "turns": [0, 1, 2], **connection}}}
    (folder / "runtime.json").write_text(json.dumps(runtime))
    return folder
