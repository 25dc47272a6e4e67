"""`ready` only for what answers (`orchestration.models.Model.status`, the one rule `arena-tui
models` and the new-run dialog show): a model served on this machine (`local:<model>`, at
ARENA_TUI_LOCAL_LLM_URL) is `ready` only when its server answers a short probe listing it; a
remote service with its key set is `key set` (only a run finds out whether the key is taken);
simulator and fakes answer. The servers are real, on 127.0.0.1: the OpenAI-compatible text fake
(`GET /v1/models`), a port nothing listens on, and a socket that takes the request and never answers.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from arena_tui.app import ArenaApp
from arena_tui.cli import main
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.orchestration.models import models
from runners.providers.text_chat.fake import OpenAIChatFake
from arena_tui.spine.local_llm import LOCAL_LLM_URL_ENV
from tests.pilot import until

LOCAL = "local:llama3.2"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def status_of(alias: str, fake: bool = False) -> str:
    listed = await asyncio.to_thread(models)  # the probe blocks: off the loop the local server runs on
    return next(m for m in listed if m.alias == alias).status(fake)


@pytest.mark.parametrize("served,ready", [(["llama3.2:latest", "qwen2.5:7b"], True), (["llama3.2"], True),
                                          (["qwen2.5:7b"], False)])
async def test_a_local_server_is_ready_only_when_it_lists_the_model(monkeypatch, served, ready):
    async with OpenAIChatFake() as server:
        server.served = served
        monkeypatch.setenv(LOCAL_LLM_URL_ENV, server.base_url)
        status = await status_of(LOCAL)
        assert server.model_lists == 1  # asked once, what a server is asked for its models
    if ready:
        assert status == "ready"
    else:
        assert status == f"{server.base_url} does not list llama3.2 (it serves qwen2.5:7b)"


def test_nothing_listening_is_not_ready_and_says_where(monkeypatch):
    url = f"http://user:secret@127.0.0.1:{closed_port()}/v1?key=hidden"
    monkeypatch.setenv(LOCAL_LLM_URL_ENV, url)
    status = next(m for m in models() if m.alias == LOCAL).status()
    where = url.replace("user:secret@", "").split("?")[0]
    assert status.startswith(f"no answer from {where} (") and "refused" in status, status
    assert "secret" not in status and "hidden" not in status
    assert next(m for m in models() if m.alias == LOCAL).status(fake=True) == "ready"  # its local fake answers


def test_a_server_that_never_answers_is_probed_in_bounded_time(monkeypatch):
    with socket.socket() as listener:  # takes connections (the kernel's backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        monkeypatch.setenv(LOCAL_LLM_URL_ENV, f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
        t0 = time.monotonic()
        status = next(m for m in models() if m.alias == LOCAL).status()
        took = time.monotonic() - t0
    assert status.startswith("no answer from http://127.0.0.1:") and "timed out" in status, status
    assert took < 5.0, took  # the probe's 1 s, not a client's default minutes


def test_a_remote_key_set_is_key_set_not_ready(monkeypatch, capsys):
    monkeypatch.setenv("XAI_API_KEY", "xai-secret-value-123")
    monkeypatch.setenv(LOCAL_LLM_URL_ENV, f"http://127.0.0.1:{closed_port()}/v1")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    assert lines["grok-realtime"].endswith("key set") and "xai-secret-value-123" not in out
    assert lines["sim"].endswith("ready")
    assert "no answer from http://127.0.0.1:" in lines[LOCAL]


async def test_the_new_run_dialog_says_what_models_says(tmp_path, monkeypatch):
    from arena_tui.screens.dialogs.new_run import NewRunDialog
    from arena_tui.screens.runs import RunsScreen
    from tests.test_app_new_run import text_of

    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv(LOCAL_LLM_URL_ENV, url)
    monkeypatch.setenv("XAI_API_KEY", "xai-secret-value-123")
    app = ArenaApp(tmp_path / "arena.db", tmp_path, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewRunDialog) and app.screen.choices)
        dialog = app.screen
        labels = {alias: str(label) for label, alias in dialog.query_one("#model")._options if alias}
        assert f"no answer from {url}" in labels[LOCAL] and "ready" not in labels[LOCAL], labels[LOCAL]
        assert labels["grok-realtime"].endswith("key set)"), labels["grok-realtime"]
        dialog.query_one("#model").value = LOCAL
        await pilot.pause()
        said = text_of(dialog.query_one("#new-run-error"))
        assert f"{LOCAL}: no answer from {url}" in said and "start its server" in said, said
        dialog.query_one("#against").value = "fake"
        await pilot.pause()
        assert "no answer" not in text_of(dialog.query_one("#new-run-error"))  # its fake answers
