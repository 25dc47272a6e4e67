"""A local Hugging Face Hub for tests: serves dataset repos over HTTP the way huggingface.co does.

What `huggingface_hub` (snapshot_download / hf_hub_download) talks to, on 127.0.0.1:
- `GET /api/datasets/{repo}[/revision/{rev}]` repo info with `sha` and `siblings`;
- `GET /api/datasets/{repo}/tree/{rev}[/{path}]?recursive=&expand=` paginated with a
  `Link: <...>; rel="next"` header, LFS files carrying `lfs: {oid, size, pointerSize}`;
- `HEAD|GET /datasets/{repo}/resolve/{rev}/{path}`: regular files answered directly with
  `ETag` (git blob id) and `X-Repo-Commit`; LFS files (`*.wav`) answered with a 302 to a separate
  "CDN" server (another origin, as on the real Hub) with `X-Linked-Etag` (sha256) and
  `X-Linked-Size`, the CDN honouring `Range`;
- errors with `X-Error-Code: RepoNotFound | RevisionNotFound | EntryNotFound`.
Every request is recorded so tests can assert on what the client asked for.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlparse

LFS_SUFFIXES = (".wav", ".flac", ".mp3", ".parquet")


@dataclass
class Request:
    server: str  # "hub" | "cdn"
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class RepoFile:
    path: str
    source: Path | bytes

    def data(self) -> bytes:
        return self.source if isinstance(self.source, bytes) else self.source.read_bytes()


@dataclass
class DatasetRepo:
    repo_id: str
    files: dict[str, RepoFile] = field(default_factory=dict)
    _meta: dict[str, dict] = field(default_factory=dict)

    def add(self, path: str, source: Path | bytes | str) -> None:
        if isinstance(source, str):
            source = source.encode()
        self.files[path] = RepoFile(path, source)
        self._meta.pop(path, None)

    @property
    def sha(self) -> str:
        h = hashlib.sha1()
        for p in sorted(self.files):
            h.update(p.encode() + b"\0" + self.meta(p)["oid"].encode())
        return h.hexdigest()

    def is_lfs(self, path: str) -> bool:
        return path.endswith(LFS_SUFFIXES)

    def meta(self, path: str) -> dict:
        if path not in self._meta:
            data = self.files[path].data()
            blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            m = {"size": len(data), "oid": blob}
            if self.is_lfs(path):
                m["sha256"] = hashlib.sha256(data).hexdigest()
            self._meta[path] = m
        return self._meta[path]

    def tree(self, prefix: str, recursive: bool) -> list[dict]:
        prefix = prefix.strip("/")
        base = prefix + "/" if prefix else ""
        entries: dict[str, dict] = {}
        for p in sorted(self.files):
            if not p.startswith(base):
                continue
            rest = p[len(base):]
            parts = rest.split("/")
            for i in range(1, len(parts)):  # folders on the way
                if not recursive and i > 1:
                    break
                d = base + "/".join(parts[:i])
                entries.setdefault(d, {"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(),
                                       "size": 0, "path": d})
            if not recursive and len(parts) > 1:
                continue
            m = self.meta(p)
            e = {"type": "file", "oid": m["oid"], "size": m["size"], "path": p}
            if "sha256" in m:
                e["lfs"] = {"oid": m["sha256"], "size": m["size"], "pointerSize": 134}
            entries[p] = e
        return list(entries.values())


class HubFake:
    """Start with `with HubFake() as hub:`; `hub.endpoint` goes into HF_ENDPOINT."""

    def __init__(self, page_size: int = 1000) -> None:
        self.repos: dict[str, DatasetRepo] = {}
        self.requests: list[Request] = []
        self.page_size = page_size
        self._lock = threading.Lock()
        self._hub = ThreadingHTTPServer(("127.0.0.1", 0), self._handler("hub"))
        self._cdn = ThreadingHTTPServer(("127.0.0.1", 0), self._handler("cdn"))
        self._blobs: dict[str, tuple[DatasetRepo, str]] = {}
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._hub.server_address[1]}"

    @property
    def cdn(self) -> str:
        return f"http://127.0.0.1:{self._cdn.server_address[1]}"

    def dataset(self, repo_id: str) -> DatasetRepo:
        return self.repos.setdefault(repo_id, DatasetRepo(repo_id))

    def __enter__(self) -> "HubFake":
        for srv in (self._hub, self._cdn):
            t = threading.Thread(target=srv.serve_forever, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def __exit__(self, *exc: object) -> None:
        for srv in (self._hub, self._cdn):
            srv.shutdown()
            srv.server_close()
        # Close kept-alive client connections too: a later server may get the same port, and a
        # pooled connection must not keep talking to this one's handler threads.
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def paths(self, server: str = "hub", method: str | None = None) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests if r.server == server and (method is None or r.method == method)]

    # -- HTTP -------------------------------------------------------------------------------------------

    def _handler(self, which: str) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def setup(self) -> None:
                super().setup()
                with hub._lock:
                    hub._conns.add(self.connection)

            def finish(self) -> None:
                with hub._lock:
                    hub._conns.discard(self.connection)
                super().finish()

            def _record(self) -> tuple[str, dict[str, list[str]]]:
                u = urlparse(self.path)
                with hub._lock:
                    hub.requests.append(Request(which, self.command, unquote(u.path), parse_qs(u.query),
                                                {k.lower(): v for k, v in self.headers.items()}))
                return unquote(u.path), parse_qs(u.query)

            def do_HEAD(self) -> None:
                self._dispatch(head=True)

            def do_GET(self) -> None:
                self._dispatch(head=False)

            def _dispatch(self, head: bool) -> None:
                path, query = self._record()
                try:
                    if which == "cdn":
                        self._cdn(path, head)
                    else:
                        self._hub(path, query, head)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                      head: bool = False, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _error(self, status: int, code: str, message: str, head: bool) -> None:
                self._send(status, json.dumps({"error": message}).encode(),
                           {"X-Error-Code": code, "X-Error-Message": message}, head)

            def _repo(self, parts: list[str]) -> tuple[DatasetRepo | None, list[str]]:
                if len(parts) < 2:
                    return None, parts
                repo = hub.repos.get(f"{parts[0]}/{parts[1]}")
                return repo, parts[2:]

            def _hub(self, path: str, query: dict[str, list[str]], head: bool) -> None:
                parts = [p for p in path.split("/") if p]
                if parts[:2] == ["api", "datasets"]:
                    repo, rest = self._repo(parts[2:])
                    if repo is None:
                        return self._error(404, "RepoNotFound", "Repository not found", head)
                    if not rest or rest[0] == "revision":
                        rev = rest[1] if len(rest) > 1 else "main"
                        if rev not in ("main", repo.sha):
                            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
                        return self._info(repo, head)
                    if rest[0] == "tree":
                        rev = rest[1] if len(rest) > 1 else "main"
                        if rev not in ("main", repo.sha):
                            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
                        return self._tree(repo, "/".join(rest[2:]), query, head)
                    return self._error(404, "EntryNotFound", "Unknown API route", head)
                if parts[:1] == ["datasets"]:
                    repo, rest = self._repo(parts[1:])
                    if repo is None:
                        return self._error(404, "RepoNotFound", "Repository not found", head)
                    if len(rest) >= 3 and rest[0] == "resolve":
                        rev, fpath = rest[1], "/".join(rest[2:])
                        if rev not in ("main", repo.sha):
                            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
                        return self._resolve(repo, fpath, head)
                self._error(404, "EntryNotFound", "Not found", head)

            def _info(self, repo: DatasetRepo, head: bool) -> None:
                org, name = repo.repo_id.split("/")
                body = {
                    "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
                    "author": org, "sha": repo.sha, "lastModified": "2025-03-24T12:00:00.000Z",
                    "createdAt": "2025-03-01T12:00:00.000Z", "private": False, "gated": False,
                    "disabled": False, "downloads": 0, "likes": 0, "tags": [], "cardData": {},
                    "siblings": [{"rfilename": p} for p in sorted(repo.files)],
                }
                self._send(200, json.dumps(body).encode(), head=head)

            def _tree(self, repo: DatasetRepo, prefix: str, query: dict[str, list[str]], head: bool) -> None:
                recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
                entries = repo.tree(prefix, recursive)
                start = int(query.get("cursor", ["0"])[0])
                page = entries[start:start + hub.page_size]
                headers = {}
                if start + hub.page_size < len(entries):
                    q = f"recursive={str(recursive).lower()}&expand=false&cursor={start + hub.page_size}"
                    url = f"{hub.endpoint}/api/datasets/{repo.repo_id}/tree/{repo.sha}"
                    if prefix:
                        url += "/" + quote(prefix, safe="")
                    headers["Link"] = f'<{url}?{q}>; rel="next"'
                self._send(200, json.dumps(page).encode(), headers, head)

            def _resolve(self, repo: DatasetRepo, fpath: str, head: bool) -> None:
                if fpath not in repo.files:
                    return self._error(404, "EntryNotFound", f"{fpath} does not exist", head)
                m = repo.meta(fpath)
                common = {"X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
                if repo.is_lfs(fpath):
                    hub._blobs[m["sha256"]] = (repo, fpath)
                    loc = f"{hub.cdn}/blobs/{m['sha256']}"
                    self._send(302, b"", {**common, "Location": loc, "X-Linked-Etag": f'"{m["sha256"]}"',
                                          "X-Linked-Size": str(m["size"]), "ETag": f'"{m["oid"]}"'}, head)
                    return
                data = repo.files[fpath].data()
                self._send(200, data, {**common, "ETag": f'"{m["oid"]}"'}, head, "application/octet-stream")

            def _cdn(self, path: str, head: bool) -> None:
                sha = path.rsplit("/", 1)[-1]
                if sha not in hub._blobs:
                    return self._send(404, b"NoSuchKey", head=head, ctype="text/plain")
                repo, fpath = hub._blobs[sha]
                data = repo.files[fpath].data()
                rng = self.headers.get("Range")
                if rng and rng.startswith("bytes="):
                    a, _, b = rng[6:].partition("-")
                    start, end = int(a or 0), int(b) if b else len(data) - 1
                    chunk = data[start:end + 1]
                    return self._send(206, chunk, {"Content-Range": f"bytes {start}-{end}/{len(data)}",
                                                   "ETag": f'"{sha}"'}, head, "audio/wav")
                self._send(200, data, {"ETag": f'"{sha}"'}, head, "audio/wav")

        return Handler


def hub_rows_from_shared(bench_dir: Path, speakers: tuple[str, ...] = ("person1", "person2")) -> list[dict]:
    """Rows of a Hub `metadata.jsonl` built from a shared benchmark folder, in the Hub's encoding
    (JSON-in-string calls/responses, comma-joined categories and dimensions): one row per turn and
    human speaker (`real_audio/<speaker>/turn_NNN.wav`); the TTS files under `audio/` have no rows."""
    rows = []
    for line in (bench_dir / "turns.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        base = {
            "turn_id": t["turn_index"],
            "input_text": t["input"],
            "golden_text": t["golden_text"],
            "required_function_call": None if t.get("required_function_call") is None
            else json.dumps(t["required_function_call"]),
            "function_call_response": None if t.get("function_call_response") is None
            else json.dumps(t["function_call_response"]),
            "categories": ", ".join(t["categories"]),
            "subcategory": t.get("subcategory"),
            "scoring_dimensions": ", ".join(t["dimensions"]),
        }
        for k in ("flexible_args", "tool_use_guidance"):
            if k in t:
                base[k] = t[k]
        name = f"turn_{t['turn_index']:03d}.wav"
        for s in speakers:
            rows.append({"file_name": f"real_audio/{s}/{name}", "speaker": s, **base})
    return rows


def publish_from_shared(hub: HubFake, shared: Path, name: str, *, with_text_files: bool = True, real_audio: bool = True) -> None:
    """Serve the shared folder `name` as its Hub dataset (arcada-labs/<name with dashes>)."""
    src = shared / name
    repo = hub.dataset(f"arcada-labs/{name.replace('_', '-')}")
    rows = hub_rows_from_shared(src)
    repo.add("README.md", "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: metadata.jsonl\n---\n")
    repo.add("metadata.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    if with_text_files:
        for f in ("tools.json", "system_prompt.txt", "knowledge_base.txt"):
            repo.add(f, src / f)
    for wav in sorted((src / "audio").glob("turn_*.wav")):
        repo.add(f"audio/{wav.name}", wav)
        if real_audio:
            for speaker in ("person1", "person2"):
                repo.add(f"real_audio/{speaker}/{wav.name}", wav)
