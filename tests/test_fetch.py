"""`fetch` through the real huggingface_hub client against a local Hub (tests/hf_fake.py).

The served dataset is built at test time from the shared data, in the Hub's layout
(`metadata.jsonl` rows per human speaker with JSON-in-string calls, `audio/` TTS WAVs,
`real_audio/<speaker>/` recordings), so both the download and the Hub-layout loader are exercised.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena_tui.cli import main
from benchmarks.fetch import FetchError, fetch_benchmark
from benchmarks.registry import load_benchmark
from benchmarks.registry import available_benchmarks, hf_snapshot

from .hf_fake import HubFake, publish_from_shared as _publish


@pytest.fixture
def hub(shared_data: Path, hf_home: Path, monkeypatch: pytest.MonkeyPatch):
    with HubFake(page_size=40) as h:  # small pages so the tree listing paginates
        _publish(h, shared_data, "conversation_bench")
        monkeypatch.setenv("HF_ENDPOINT", h.endpoint)
        yield h


def test_fetch_downloads_the_hub_layout_and_it_loads(hub: HubFake, hf_home: Path) -> None:
    result = fetch_benchmark("conversation_bench")
    assert result.problems == []
    assert result.turns == 75 and result.audio_present == 75
    assert result.path == hf_snapshot("conversation_bench")
    assert result.commit == hub.dataset("arcada-labs/conversation-bench").sha

    api = hub.paths("hub", "GET")
    assert "/api/datasets/arcada-labs/conversation-bench/revision/main" in api
    tree = [r for r in hub.requests if r.path.startswith("/api/datasets/arcada-labs/conversation-bench/tree/")]
    assert len(tree) >= 2, "the tree listing should have followed the Link header to a second page"
    assert all(r.query.get("recursive") == ["True"] or r.query.get("recursive") == ["true"] for r in tree)
    resolved = {p.split("/resolve/", 1)[1].split("/", 1)[1] for p in hub.paths("hub", "HEAD")}
    assert "metadata.jsonl" in resolved and "audio/turn_074.wav" in resolved
    assert not any(p.startswith("real_audio/") for p in resolved), "human recordings only with --real-audio"
    cdn = hub.paths("cdn", "GET")
    assert len(cdn) == 75  # every WAV is LFS: fetched from the CDN after the 302
    repo_requests = [r for r in hub.requests if r.server == "hub" and "arcada-labs" in r.path]
    assert all("arena-tui/0.1.0" in r.headers.get("user-agent", "") for r in repo_requests)
    assert not any("authorization" in r.headers for r in hub.requests), "no token configured, none sent"

    bench = load_benchmark("conversation_bench")  # no --data: found in the HF cache
    assert bench.source == "huggingface" and bench.root == result.path
    t = bench.turn(34)
    assert isinstance(t.required_function_call, list) and isinstance(t.function_call_response, list)
    assert bench.turn(0).dimensions == ["kb_grounding", "instruction_following", "tool_use_correct"]
    assert set(bench.audio_source.values()) == {"recorded"}


def test_fetch_again_uses_the_cache_and_offline_works(hub: HubFake, monkeypatch: pytest.MonkeyPatch) -> None:
    fetch_benchmark("conversation_bench")
    cdn_before = len(hub.paths("cdn"))
    fetch_benchmark("conversation_bench")
    assert len(hub.paths("cdn")) == cdn_before, "cached files must not be downloaded twice"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    n_requests = len(hub.requests)
    r = fetch_benchmark("conversation_bench")
    assert r.turns == 75 and len(hub.requests) == n_requests, "offline: no request at all"


def test_offline_without_cache_is_a_clear_error(hub: HubFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FetchError, match="HF_HUB_OFFLINE is set and arcada-labs/event-bench is not in the cache"):
        fetch_benchmark("event_bench")
    assert hub.requests == []


def test_real_audio_speaker_selection(hub: HubFake) -> None:
    fetch_benchmark("conversation_bench", real_audio=True)
    assert any(p.startswith("/datasets/arcada-labs/conversation-bench/resolve/")
               and "/real_audio/person2/" in p for p in hub.paths("hub", "HEAD"))
    bench = load_benchmark("conversation_bench", speaker="person2")
    assert bench.audio_path(bench.turn(3)).as_posix().endswith("real_audio/person2/turn_003.wav")
    assert bench.audio_source[3] == "human:person2"


def test_missing_repo_and_missing_text_files(hub: HubFake, shared_data: Path, capsys) -> None:
    with pytest.raises(FetchError, match="dataset arcada-labs/grocery-bench not found on http://127.0.0.1"):
        fetch_benchmark("grocery_bench")
    # a Hub snapshot without tools/prompt downloads, then says exactly what is missing
    _publish(hub, shared_data, "appointment_bench", with_text_files=False)
    r = fetch_benchmark("appointment_bench")
    fields = {(p.path.name if p.path else None) for p in r.problems}
    assert {"tools.json", "system_prompt.txt"} <= fields
    assert r.files >= 2


def test_fetch_command(hub: HubFake, capsys) -> None:
    assert main(["fetch", "conversation-bench"]) == 0  # the Hub spelling works too
    out = capsys.readouterr().out
    assert "conversation_bench: 75 turns, audio 75/75" in out
    assert main(["fetch", "no_such_bench"]) == 2
    assert "unknown benchmark no_such_bench" in capsys.readouterr().err
    infos = {i.name: i for i in available_benchmarks(None)}
    assert infos["conversation_bench"].source == "huggingface" and infos["conversation_bench"].turns == 75


def test_data_copy_without_audio_uses_the_downloaded_audio(hub: HubFake, shared_data: Path, tmp_path: Path) -> None:
    """The shared copies of five benchmarks have no audio: after `fetch`, the Hub's WAVs fill in."""
    data = tmp_path / "data"
    shutil.copytree(shared_data / "conversation_bench", data / "conversation_bench", ignore=shutil.ignore_patterns("audio"))
    before = load_benchmark("conversation_bench", data)
    assert before.audio_source == {} and before.root == data / "conversation_bench"
    result = fetch_benchmark("conversation_bench")
    after = load_benchmark("conversation_bench", data)
    assert after.root == data / "conversation_bench" and after.source == "local"  # text from --data
    assert set(after.audio_source.values()) == {"recorded"} and len(after.audio_source) == 75
    assert after.audio_path(after.turn(12)) == (result.path / "audio" / "turn_012.wav").resolve()
