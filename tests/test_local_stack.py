"""The fully local stack: `whisper`, `piper` and `kokoro` cascade parts (the `[local]` extra, never
installed by the tests) and `local:<model>`, a text model on an OpenAI-compatible server.

Without the extra, each local part is one preflight line naming it and the install command,
and `arena-tui weights` says so too, fetching nothing. The catalog lists the parts and the
`local:` spelling; `local:<model>` asks an OpenAI-compatible server (the chat fake stands in
for Ollama at ARENA_TUI_LOCAL_LLM_URL) for `<model>`, sending it no key.
"""

from __future__ import annotations

import hashlib
import socket

import pytest

from arena_tui.cli import main
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from runners.base import get_runner
from runners.engine import run_benchmark
from runners.fakes.script import script_for_benchmark
from runners.providers.text_chat.fake import OpenAIChatFake
from runners import catalog
from runners.providers.text_chat.runner import LOCAL_KEY
from tests.provider_runs import quiet_loguru

LOCAL = "cascade:whisper+local:llama3.2+piper"
INSTALL = "(pip install 'arena-tui[local]')"
EXTRA = ("faster_whisper", "piper", "kokoro_onnx")


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.fixture
def no_extra():
    if any(catalog.installed(m) for m in EXTRA):
        pytest.skip("the [local] extra is installed here: these tests check a machine without it")


@pytest.mark.parametrize("fake", [False, True])
def test_each_missing_local_part_is_one_line_naming_it_and_the_install(no_extra, fake) -> None:
    for alias, lines in [
        (LOCAL, [f"cascade stt whisper: Python package 'faster_whisper' is not installed {INSTALL}",
                 f"cascade tts piper: Python package 'piper' is not installed {INSTALL}"]),
        ("cascade:openai-stt+local:llama3.2+kokoro",
         [f"cascade tts kokoro: Python package 'kokoro_onnx' is not installed {INSTALL}"]
         + ([] if fake else ["cascade stt openai-stt: environment variable OPENAI_API_KEY is not set (the API key)"])),
    ]:
        assert sorted(get_runner(alias).preflight(RunSettings(model=alias, fake=fake))) == sorted(lines), alias


def test_a_local_run_without_the_extra_stops_before_it_starts(no_extra, tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", LOCAL, "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert f"cascade stt whisper: Python package 'faster_whisper' is not installed {INSTALL}" in err
    assert f"cascade tts piper: Python package 'piper' is not installed {INSTALL}" in err


def test_weights_lists_each_part_and_fetches_nothing_without_the_extra(no_extra, capsys) -> None:
    assert main(["weights"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["whisper", "piper", "kokoro"]
    assert all(ln.endswith(f"not installed {INSTALL}") for ln in lines), lines
    assert "Whisper model 'small.en' (ARENA_TUI_WHISPER_MODEL)" in lines[0]
    assert "Piper voice 'en_US-lessac-medium' (ARENA_TUI_PIPER_VOICE)" in lines[1]
    assert main(["weights", "--fetch", "all"]) == 2
    got = capsys.readouterr()
    assert got.err.strip() == f"arena-tui: whisper: not installed {INSTALL}" and "fetching" not in got.out
    assert main(["weights", "--fetch", "espeak"]) == 2
    assert "unknown local part espeak (choose from whisper, piper, kokoro, or all)" in capsys.readouterr().err


def test_models_lists_the_local_parts_and_the_local_spelling(capsys, monkeypatch) -> None:
    with socket.socket() as s:  # nothing listens there: not ready (tests/test_models_ready.py)
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("ARENA_TUI_LOCAL_LLM_URL", url)
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    row = next(ln.split(maxsplit=6) for ln in out.splitlines() if ln.startswith("local:llama3.2 "))  # (its key and capabilities: none)
    assert row[:6] == ["local:llama3.2", "local", "llama3.2", "text", "-", "-"] and row[-1].startswith(f"no answer from {url}")
    assert "stt: openai-stt, deepgram, whisper" in out and "tts: openai-tts, cartesia, elevenlabs, piper, kokoro" in out
    local = next(ln for ln in out.splitlines() if ln.strip().startswith("local, in this process"))
    for needed in (INSTALL.strip("()"), "arena-tui weights", "whisper, piper, kokoro", "local:<model>",
                   "ARENA_TUI_LOCAL_LLM_URL (default http://127.0.0.1:11434/v1)", LOCAL):
        assert needed in local, (needed, local)


def test_the_local_spelling_names_any_model_of_the_server() -> None:
    entry = catalog.find("local:qwen2.5:7b")
    assert (entry.name, entry.mode, entry.key_env, entry.model_id("local:qwen2.5:7b")) == ("local", "text", (), "qwen2.5:7b")
    runner = get_runner("local:qwen2.5:7b")
    assert runner.resolve_model("local:qwen2.5:7b") == "qwen2.5:7b" and runner.preflight(RunSettings(model="local:x")) == []
    stt, llm, text, tts = catalog.cascade_parts("cascade:whisper+local:qwen2.5:7b+kokoro")
    assert (stt.name, llm, text.name, tts.name) == ("whisper", "local:qwen2.5:7b", "local", "kokoro")
    assert stt.local and tts.local and not stt.fake_class
    with pytest.raises(ValueError, match=r"unknown model 'local:'; known: .*local:<model>"):
        catalog.find("local:")
    with pytest.raises(ValueError, match=r"the middle of a cascade is a text model; known: .*local:<model>"):
        catalog.cascade_parts("cascade:whisper+ollama+piper")


async def test_the_local_llm_is_asked_at_its_url_for_its_model_with_no_key(demo, monkeypatch) -> None:
    """The chat fake as the local server: the run asks it, not OpenAI, for the alias's model; an
    OpenAI key in the environment is not sent to it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-reach-a-local-server")
    async with OpenAIChatFake(script_for_benchmark(demo, [0, 1])) as server:
        monkeypatch.setenv("ARENA_TUI_LOCAL_LLM_URL", server.base_url)
        bus = EventBus()
        sub = bus.subscribe()
        await run_benchmark(demo, RunSettings(model="local:qwen2.5:7b", turns=[0, 1]), bus)
    events = sub.drain()
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    started = next(e for e in events if e.kind == "run_started")
    assert started.provider == "local" and not started.simulator
    reqs = server.requests
    assert reqs and {r.model for r in reqs} == {"qwen2.5:7b"}
    assert {r.auth_sha256 for r in reqs} == {hashlib.sha256(LOCAL_KEY.encode()).hexdigest()}
    assert reqs[-1].messages[0]["content"] == demo.system_prompt
    assert [m["content"] for m in reqs[-1].messages if m["role"] == "user"][-2:] == [demo.turn(0).input, demo.turn(1).input]


async def test_a_fake_cascade_runs_its_local_part_as_it_is(demo) -> None:
    """`--fake` fakes the network parts only: a local part has no fake (it never leaves the machine)."""
    runner = get_runner("cascade:whisper+gpt-4.1-mini+openai-tts")
    fakes = runner.make_fake(RunSettings(model="cascade:whisper+gpt-4.1-mini+openai-tts", fake=True, turns=[0]), demo)
    await fakes.start()
    try:
        assert fakes.stt is None and fakes.parts == [fakes.llm, fakes.tts]
        assert type(fakes.tts).__name__ == "OpenAIAudioFake" and "127.0.0.1" in fakes.tts.base_url
    finally:
        await fakes.stop()
