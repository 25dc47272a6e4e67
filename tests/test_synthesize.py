"""`synthesize`: espeak-ng for real, and the real `openai` client against a local /v1/audio/speech."""

from __future__ import annotations

import json
import math
import shutil
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from arena_tui.spine import audio
from arena_tui.cli import main
from benchmarks.loader import load_folder
from benchmarks.registry import load_benchmark
from benchmarks.synthesize import EspeakBackend, OpenAIBackend, SynthError, synthesize_benchmark

KEY = "sk-test-not-a-real-key-1234"


def _copy(shared: Path, name: str, dest: Path) -> Path:
    out = dest / name
    shutil.copytree(shared / name, out)
    for p in [out, *out.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return out


class SpeechServer:
    """OpenAI's POST /v1/audio/speech on 127.0.0.1: raw 24 kHz s16le for response_format=pcm."""

    def __init__(self, fail_after: int | None = None, status: int = 401) -> None:
        self.requests: list[dict] = []
        self.fail_after, self.status = fail_after, status
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                srv.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if srv.fail_after is not None and len(srv.requests) > srv.fail_after:
                    data = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                                 "code": "invalid_api_key"}}).encode()
                    self.send_response(srv.status)
                    self.send_header("Content-Type", "application/json")
                else:
                    data = srv.pcm_for(body["input"]).tobytes()
                    self.send_response(200)
                    self.send_header("Content-Type", "audio/pcm")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)

    @staticmethod
    def pcm_for(text: str) -> np.ndarray:
        n = 2400 * max(1, len(text) // 10)  # length depends on the text, so mix-ups would show
        t = np.arange(n) / 24_000
        return (8000 * np.sin(2 * math.pi * (200 + len(text)) * t)).astype("<i2")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "SpeechServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_espeak_writes_24k_mono_and_marks_it(shared_data: Path, tmp_path: Path) -> None:
    folder = _copy(shared_data, "grocery_bench", tmp_path)
    bench = load_folder(folder)
    report = synthesize_benchmark(bench, EspeakBackend(), turns=[0, 2])
    assert report.written == [0, 2] and report.out_dir == folder
    for i in (0, 2):
        frames, fmt = audio.read_wav(folder / "audio" / f"turn_{i:03d}.wav")
        assert (fmt.sample_rate, fmt.channels, fmt.bits) == (24_000, 1, 16)
        assert 0.5 < fmt.duration_s < 15 and audio.rms_dbfs(frames[:, 0]) > -40  # real speech, not silence
    reloaded = load_folder(folder)
    assert reloaded.audio_source == {0: "synth:espeak", 2: "synth:espeak"}
    again = synthesize_benchmark(reloaded, EspeakBackend(), turns=[0, 1])
    assert again.skipped == [0] and again.written == [1]
    assert json.loads((folder / "audio" / "sources.json").read_text()) == {
        "0": "synth:espeak", "1": "synth:espeak", "2": "synth:espeak"}


def test_read_only_folder_goes_to_the_overlay(shared_data: Path, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    monkeypatch.setenv("ARENA_TUI_AUDIO_DIR", str(overlay))
    data = tmp_path / "data"  # our own read-only copy: ../shared may well be writable, and is never ours
    folder = _copy(shared_data, "product_bench", data)
    for p in [*folder.rglob("*"), folder]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        before = sorted(p.name for p in folder.iterdir())
        bench = load_benchmark("product_bench", data)
        report = synthesize_benchmark(bench, EspeakBackend(), turns=[3])
        assert report.out_dir == overlay / "product_bench"
        assert sorted(p.name for p in folder.iterdir()) == before  # the read-only copy untouched
        again = load_benchmark("product_bench", data)
        assert again.audio_source == {3: "synth:espeak"}
        assert again.audio_path(again.turn(3)) == (overlay / "product_bench" / "audio" / "turn_003.wav").resolve()
    finally:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)  # so tmp_path can be cleaned up


def test_missing_espeak_is_a_clear_error(shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng on this PATH
    with pytest.raises(SynthError, match="espeak-ng is not installed"):
        EspeakBackend()
    assert main(["synthesize", "event_bench", "--data", str(shared_data)]) == 2
    assert "espeak-ng is not installed" in capsys.readouterr().err


def test_openai_backend_against_local_speech_endpoint(shared_data: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy(shared_data, "appointment_bench", tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with SpeechServer() as srv:
        bench = load_folder(folder)
        report = synthesize_benchmark(bench, OpenAIBackend(base_url=srv.base_url), turns=[0, 1, 2])
    assert report.written == [0, 1, 2]
    assert [r["path"] for r in srv.requests] == ["/v1/audio/speech"] * 3
    assert all(r["auth"] == f"Bearer {KEY}" for r in srv.requests)
    for i, r in enumerate(srv.requests):
        assert r["body"] == {"model": "tts-1", "voice": "alloy", "input": bench.turn(i).input,
                             "response_format": "pcm"}
        written = audio.load_pcm16(folder / "audio" / f"turn_{i:03d}.wav")
        assert np.array_equal(written, SpeechServer.pcm_for(bench.turn(i).input))
    sources = (folder / "audio" / "sources.json").read_text()
    assert json.loads(sources) == {"0": "synth:openai", "1": "synth:openai", "2": "synth:openai"}
    assert KEY not in sources


def test_openai_failure_keeps_what_was_written(shared_data: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    folder = _copy(shared_data, "appointment_bench", tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with SpeechServer(fail_after=2) as srv:
        code = main(["synthesize", str(folder), "--backend", "openai", "--base-url", srv.base_url, "--turns", "0-4",
                     "--out", str(folder)])
    err = capsys.readouterr().err
    assert code == 2 and "appointment_bench turn 2: OpenAI TTS refused (401)" in err and KEY not in err
    assert sorted(p.name for p in (folder / "audio").glob("*.wav")) == ["turn_000.wav", "turn_001.wav"]
    assert load_folder(folder).audio_source == {0: "synth:openai", 1: "synth:openai"}


def test_openai_without_key_is_a_clear_error(shared_data: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["synthesize", "event_bench", "--data", str(shared_data), "--backend", "openai"]) == 2
    assert "OPENAI_API_KEY is not set" in capsys.readouterr().err


def test_cli_espeak_one_turn(shared_data: Path, tmp_path: Path, capsys) -> None:
    _copy(shared_data, "event_bench", tmp_path)
    assert main(["synthesize", "event_bench", "--data", str(tmp_path), "--turns", "5"]) == 0
    out = capsys.readouterr().out
    assert "wrote 1 WAV(s)" in out and "synth:espeak" in out
    assert main(["benchmarks", "--data", str(tmp_path)]) == 0
    assert "1/29 (1 synth)" in capsys.readouterr().out
