"""An imported run folder is data: the endpoint, service class and service arguments its runtime.json
names never aim the user's key (issue 41, item 1). A listener on 127.0.0.1 stands where the folder
points; the user's OPENAI_API_KEY is set; the run is imported and resumed, and nothing reaches it.
The resumed run goes where this installation says (its catalog, or what the user types again),
and `resume` says which endpoint before any session opens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.cli import build_parser, main
from arena_tui.commands.campaign import spec_from_args
from arena_tui.campaign.spec import SpecError, load_toml
from arena_tui.interop import export_run, import_run
from arena_tui.orchestration.resume import endpoint_line, plan_resume
from arena_tui.spine.events import RunEnded, RunStarted, TurnEnded, TurnResult
from arena_tui.spine.ids import new_run_id
from arena_tui.spine.provenance import IMPORTED_CONNECTION
from arena_tui.spine.settings import build_settings
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from runners.fakes.script import script_for_benchmark
from runners.providers.text_chat.fake import OpenAIChatFake

from .hostile_inputs import KEY, Listener, base_url_named, run_folder, service_named


@pytest.fixture
def listener():
    got = Listener()
    yield got
    got.close()


async def _import(db: Path, folder: Path, capsys) -> str:
    assert await asyncio.to_thread(main, ["--db", str(db), "import", str(folder)]) == 0
    return capsys.readouterr().out.split()[-1]


async def _stored_config(db: Path, run_id: str) -> dict:
    async with await Store.open(db) as store:
        run = await store.get_run(run_id)
        assert run is not None
        return dict(run.config)


@pytest.mark.parametrize("named", [base_url_named, service_named], ids=["base_url", "service"])
async def test_an_imported_runs_endpoint_and_service_never_get_a_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, listener: Listener, named) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    db = tmp_path / "arena.db"
    run_id = await _import(db, run_folder(tmp_path, named(listener.port)), capsys)
    config = await _stored_config(db, run_id)
    assert not {"base_url", "service", "service_args"} & set(config), config  # provenance, not settings
    assert config[IMPORTED_CONNECTION] == named(listener.port)

    code = await asyncio.to_thread(main, ["--db", str(db), "resume", run_id[:8], "--headless", "--judge", "none"])
    said = capsys.readouterr()
    assert listener.seen == []  # not a connection, let alone the key
    endpoint = [line for line in said.out.splitlines() if line.startswith("endpoint: ")]
    assert len(endpoint) == 1, said.out
    assert endpoint[0].startswith("endpoint: sim's local simulator on 127.0.0.1, started for the run; not used: the "
                                  "imported run's "), endpoint[0]
    assert f"127.0.0.1:{listener.port}" in endpoint[0], endpoint[0]  # named, as what is not used
    assert code == 0, said.out + said.err
    assert "turns 3/3 done" in said.out, said.out  # the run went on, here, with the simulator


async def test_a_resume_goes_where_the_user_types_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, listener: Listener) -> None:
    """`--service`/`--service-arg` given to resume: the key goes to the endpoint the user typed."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    db = tmp_path / "arena.db"
    run_id = await _import(db, run_folder(tmp_path, service_named(listener.port)), capsys)
    bench = load_benchmark("demo_bench")
    async with OpenAIChatFake(script_for_benchmark(bench, [2])) as theirs:
        code = await asyncio.to_thread(main, [
            "--db", str(db), "resume", run_id, "--headless", "--judge", "none",
            "--service", "pipecat.services.openai.llm:OpenAILLMService",
            "--service-arg", f"base_url={theirs.base_url}", "--service-arg", "api_key=env:OPENAI_API_KEY"])
        said = capsys.readouterr()
        requests = list(theirs.requests)
    assert code == 0, said.out + said.err
    assert listener.seen == []
    assert requests and all(r.auth_present for r in requests)
    endpoint = next(line for line in said.out.splitlines() if line.startswith("endpoint: "))
    assert endpoint.startswith(f"endpoint: {theirs.base_url.rstrip('/')} (as typed); not used: the imported run's "
                               f"service pipecat.services.openai.llm:OpenAILLMService (its base_url "
                               f"http://127.0.0.1:{listener.port}/v1)"), endpoint


async def test_our_own_export_comes_back_with_its_endpoint_as_provenance(tmp_path: Path) -> None:
    """A run recorded here with --base-url resumes with it (the user typed it); exported and imported,
    the copy names it and never uses it, and a second round trip keeps saying so."""
    typed = "ws://127.0.0.1:9/v1/realtime"
    settings = build_settings("sim", base_url=typed, speed=20, turns="0-2")
    bench = load_benchmark("demo_bench")
    rid = new_run_id()
    async with await Store.open(tmp_path / "here.db") as store:
        store.submit(RunStarted(run_id=rid, t_ms=0.0, benchmark="demo_bench", model="sim", provider="sim",
                                simulator=True, turn_indices=[0, 1, 2], config=settings.public(), speed=20.0))
        for i in (0, 1):
            store.submit(TurnEnded(run_id=rid, t_ms=1000.0 * (i + 1), turn_index=i,
                                   result=TurnResult(turn_index=i, status="ok", user_text="u", assistant_text="a")))
        store.submit(RunEnded(run_id=rid, t_ms=3000.0, status="interrupted", reason="stopped"))
        await store.flush()
        here = await plan_resume(store, rid, bench)
        assert here.settings.base_url == typed and not here.imported  # recorded here: as typed
        assert endpoint_line(here, here.settings, typed=False) == f"endpoint: {typed} (as the run recorded it)"
        folder = await export_run(store, rid, tmp_path / "export")
    for hop in ("copy", "copy_of_copy"):
        async with await Store.open(tmp_path / f"{hop}.db") as store:
            await import_run(store, folder)
            plan = await plan_resume(store, rid, bench)
            config = dict((await store.get_run(rid)).config)
            assert plan.settings.base_url is None and plan.imported
            assert config[IMPORTED_CONNECTION] == {"base_url": typed} and "base_url" not in config
            line = endpoint_line(plan, plan.settings, typed=False)
            assert line == ("endpoint: sim's local simulator on 127.0.0.1, started for the run; not used: the imported "
                            "run's base_url ws://127.0.0.1:9/v1/realtime (a run folder never chooses where a key goes "
                            "or what is imported; pass --base-url or --service to choose)"), line
            folder = await export_run(store, rid, tmp_path / f"export_{hop}")


@pytest.mark.parametrize("key", ["base_url", "service", "service_args"])
def test_a_campaign_spec_file_never_names_an_endpoint_or_a_class(tmp_path: Path, key: str) -> None:
    value = {"base_url": '"http://127.0.0.1:9/v1"', "service": '"a.b:C"', "service_args": '{ api_key = "env:OPENAI_API_KEY" }'}
    spec = tmp_path / "spec.toml"
    spec.write_text(f'bench = ["demo_bench"]\nmodel = ["sim"]\n[config]\n{key} = {value[key]}\n')
    flag = {"base_url": "--base-url", "service": "--service", "service_args": "--service-arg"}[key]
    with pytest.raises(SpecError, match=rf"\[config\] {key}: a spec file never chooses where a key is sent or what is "
                                        rf"imported: give it on the command line \(`campaign run {flag}`\)"):
        load_toml(spec)


def test_campaign_flags_say_where_its_runs_connect(tmp_path: Path) -> None:
    """What a spec file may not say, the command line does, for every cell."""
    spec = tmp_path / "spec.toml"
    spec.write_text('bench = ["demo_bench"]\nmodel = ["gpt-4o"]\n[config]\nseed = 3\n')
    argv = ["campaign", "run", str(spec), "--base-url", "http://127.0.0.1:9/v1", "--service", "a.b:C",
            "--service-arg", "api_key=env:OPENAI_API_KEY"]
    got = spec_from_args(build_parser(argv).parse_args(argv))
    settings = got.cell_settings(got.cell_benchmarks()[0], got.cell_models()[0])
    assert (settings.base_url, settings.service, settings.service_args, settings.seed) == \
        ("http://127.0.0.1:9/v1", "a.b:C", {"api_key": "env:OPENAI_API_KEY"}, 3)
