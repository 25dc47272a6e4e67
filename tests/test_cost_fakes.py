"""Every fake's run has a cost built from the usage its wire sent: one alias per provider (as the
contract test picks them), the priced twins of the unpriced ones, and every cascade example, each
run against its fake through the real Pipecat service, the engine and a real store. What each
service reports arrives as `usage` events of the kind its real service sends (tokens split by
modality where the API splits them, an STT's seconds, a TTS's characters, a connected session's
seconds), is stored (`Store.usage`), and the run's cost is a dollar figure with its prices' date,
or "price unknown" naming what had none: never $0 for something no price covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_tui.compare.stored import load_runs
from arena_tui.cost import UNKNOWN, load_prices, run_estimate
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners.base import get_runner, known_models
from runners.catalog import CASCADE_EXAMPLES
from tests.provider_runs import quiet_loguru, record_run

#: the token modalities each realtime API reports apart (Pipecat keeps them; Nova's and Voice Live's through our service)
SPLITS_AUDIO = {"sim", "gpt-4o-mini-realtime", "gpt-realtime-2.1", "gemini-3.1-flash", "gemini-native-audio", "nova-2-sonic",
                "nova-sonic", "vertex-gemini-live", "azure-gpt-realtime", "azure-voice-live"}
BILLED_BY_TIME = {"grok", "ultravox"}  # xAI's and Ultravox's realtime APIs: per minute connected
#: the first alias of Gemini Live and Nova has no price; gpt-realtime-2.1 is priced, and a live model's
#: client backend reports its own usage (not the live model's)
PRICED_TWINS = ["gemini-native-audio", "nova-sonic", "gpt-realtime-2.1", "gpt-live-1+gpt-4.1-mini"]
#: what a run of these is billed by that no shipped entry prices: "price unknown", named (docs/cost.md)
UNPRICED = {"azure-gpt-realtime": "azure-openai/gpt-realtime", "azure-voice-live": "azure-voice-live/gpt-4o-mini",
            "inworld": "inworld/openai/gpt-4.1-mini", "vertex-gemini-live": "gemini-live-2.5-flash-native-audio"}


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


def _aliases() -> list[str]:
    seen: dict[str, str] = {}
    for alias in known_models():
        seen.setdefault(type(get_runner(alias)).__name__, alias)
    return sorted({*seen.values(), *PRICED_TWINS})


@pytest.mark.parametrize("alias", [*_aliases(), *CASCADE_EXAMPLES])
async def test_every_fake_run_has_a_cost_from_the_usage_its_wire_sent(alias: str, demo, tmp_path: Path) -> None:
    runner = get_runner(alias)
    async with await Store.open(tmp_path / "arena.db") as store:
        run = await record_run(demo, RunSettings(model=alias, fake=True, fake_timing="instant", speed=8.0, turns=[0, 5]),
                               runner, store)
        usage = [e.usage for e in run.kinds("usage")]
        assert usage == await store.usage(run.run_id), "every report is stored as it came"
        (stored,) = await load_runs(store, [run.run_id])
    llm = [u for u in usage if u.service == "llm"]
    if alias in BILLED_BY_TIME and alias == "ultravox":
        assert not llm  # its socket says nothing of usage: the connected time is what it bills
    else:
        assert llm and all(u.prompt_tokens > 0 and u.total_tokens >= u.prompt_tokens for u in llm), [
            (e.turn_index, e.result.status, e.result.assistant_text[:40], [c.name for c in e.result.tool_calls]) for e in run.kinds("turn_ended")]
        assert any(u.completion_tokens > 0 for u in llm), llm
        assert {u.model for u in llm} == {billed_model(runner, alias)} or alias.startswith("cascade:")
    if alias in SPLITS_AUDIO:  # the user's speech in, the model's speech out, as audio tokens
        assert any(u.input_audio_tokens > 0 for u in llm) and any(u.output_audio_tokens > 0 for u in llm), llm
        assert all(u.output_audio_tokens <= u.completion_tokens for u in llm)
    if alias.startswith("cascade:"):  # Pipecat's STT seconds and TTS characters, each its own service's
        assert sum(u.audio_seconds for u in usage if u.service == "stt") > 1.0
        assert sum(u.characters for u in usage if u.service == "tts") >= len(demo.turns[0].golden_text) // 2
    if runner.mode == "audio":
        sessions = [u for u in usage if u.service == "session"]
        assert sessions and all(u.session_seconds > 0 for u in sessions), usage
        assert {u.model for u in sessions} == {scoped(runner, runner.resolve_model(alias))}
    if alias in UNPRICED:
        assert stored.cost.unknown == (UNPRICED[alias],) and stored.cost.text() == f"{UNKNOWN}: {UNPRICED[alias]}"

    cost = stored.cost
    assert cost.reports == len(usage) > 0
    if alias.startswith("local:"):  # a server of the user's own bills nobody: a known $0, said so
        assert cost.known and cost.usd == 0 and cost.text() == "$0 (served locally: no bill)", cost.text()
    elif cost.known:
        assert cost.usd > 0 and cost.text().startswith("$") and "estimate, prices of 20" in cost.text(), cost.text()
        assert cost.per_pass(stored.tally.strict[0] or 1) is not None or not stored.tally.strict[0]
    else:  # what no price covers is named, and the figure is no dollar amount
        assert cost.text().startswith(f"{UNKNOWN}: ") and cost.value is None and "$" not in cost.short(), cost.text()
        assert all(name for name in cost.unknown)
    # the same figure the price table gives directly: one module prices, every surface shows it
    assert run_estimate(alias, usage, load_prices()) == cost


def scoped(runner, model: str) -> str:
    """A model id as its provider's usage reports name it: a reseller's under its price list."""
    return f"{runner.price_scope}/{model}" if runner.price_scope else model


def billed_model(runner, alias: str) -> str:
    """The model an alias's LLM usage reports name: its backend's for a model that delegates (each
    is billed at its own price), else its own, under its provider's price list."""
    maker = runner.call_maker(RunSettings(model=alias, fake=True))
    return scoped(runner, maker[1] if maker is not None and maker[0] == "back" else runner.resolve_model(alias))


def test_the_shipped_table_prices_the_fakes_it_names() -> None:
    """The fakes of every alias the table has an entry for come out priced (and the others named)."""
    table = load_prices()
    priced = {a for a in _aliases() if table.find(a, get_runner(a).resolve_model(a)) is not None}
    assert {"sim", "gpt-4o-mini-realtime", "gpt-realtime-2.1", "gemini-native-audio", "nova-sonic", "grok", "ultravox",
            "gpt-live-1", "gpt-4.1", "claude-haiku-4-5", "gemini-2.5-flash", "bedrock-nova-lite"} <= priced
    for alias, named in UNPRICED.items():  # no public price found (docs/cost.md): never another's list price
        runner = get_runner(alias)
        assert table.find(scoped(runner, runner.resolve_model(alias)), alias) is None, alias
        assert named == scoped(runner, runner.resolve_model(alias))


def _sent(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[dict]:
    """What the fake's `cls.name` put on the wire, kept as it went (the fake itself runs unchanged)."""
    sent: list[dict] = []
    made = getattr(cls, name)

    def keep(self, *args, **kwargs):
        out = made(self, *args, **kwargs)
        sent.append(out)
        return out

    monkeypatch.setattr(cls, name, keep)
    return sent


def _openai(u: dict) -> tuple[int, ...]:
    given, made = u["input_token_details"], u["output_token_details"]
    cached = given.get("cached_tokens_details") or {}
    return (u["input_tokens"], u["output_tokens"], given["audio_tokens"], made["audio_tokens"], given["cached_tokens"],
            cached.get("audio_tokens", 0))


def _gemini(u: dict) -> tuple[int, ...]:
    def audio(details: list[dict]) -> int:
        return sum(d["tokenCount"] for d in details if d["modality"] == "AUDIO")
    return (u["promptTokenCount"], u["responseTokenCount"], audio(u["promptTokensDetails"]),
            audio(u["responseTokensDetails"]), 0, 0)


def _vertex(u: dict) -> tuple[int, ...]:  # Vertex's names for the response's tokens
    return _gemini({**u, "responseTokenCount": u["candidatesTokenCount"], "responseTokensDetails": u["candidatesTokensDetails"]})


def _totals(u: dict) -> tuple[int, ...]:  # Inworld's LLM tokens: no split
    return (u["input_tokens"], u["output_tokens"], 0, 0, 0, 0)


def _responses(u: dict) -> tuple[int, ...]:  # the Responses API's, a hosted backend's
    return (u["input_tokens"], u["output_tokens"], 0, 0, u["input_tokens_details"]["cached_tokens"], 0)


def _nova(u: dict) -> tuple[int, ...]:
    d = u["details"]["delta"]
    given, made = d["input"], d["output"]
    return (given["speechTokens"] + given["textTokens"], made["speechTokens"] + made["textTokens"], given["speechTokens"],
            made["speechTokens"], 0, 0)


WIRES = ["sim", "gemini-native-audio", "nova-sonic", "vertex-gemini-live", "azure-gpt-realtime", "azure-voice-live", "inworld",
         "gpt-live-1"]


@pytest.mark.parametrize("alias", WIRES)
async def test_the_usage_recorded_is_the_usage_the_fake_sent(alias: str, demo, tmp_path: Path, monkeypatch) -> None:
    """Each report the engine records is one the fake's wire carried, number for number, through
    the one usage path (Pipecat's usage metrics, or our service's where Pipecat drops the audio
    share): nothing made up between the socket and the store. gpt-live-1's are its hosted
    backend's (`response.completed` of each delegated Responses request)."""
    from runners.providers.azure_voice_live import fake as voice_live
    from runners.providers.gemini_live import fake as gemini_live
    from runners.providers.gemini_vertex import fake as gemini_vertex
    from runners.providers.inworld_realtime import fake as inworld
    from runners.providers.nova_sonic import fake as nova_sonic
    from runners.providers.openai_live import responses_fake
    from runners.simulator import replies

    where, read = {"sim": ((replies.Replies, "_usage"), _openai), "gemini-native-audio": ((gemini_live._Session, "usage"), _gemini),
                   "nova-sonic": ((nova_sonic.FakeDuplexStream, "usage"), _nova),
                   "vertex-gemini-live": ((gemini_vertex._VertexSession, "usage"), _vertex),
                   "azure-gpt-realtime": ((replies.Replies, "_usage"), _openai),
                   "azure-voice-live": ((voice_live._Session, "usage"), _openai), "inworld": ((inworld._Session, "usage"), _totals),
                   "gpt-live-1": ((responses_fake.ResponsesFake, "_usage"), _responses)}[alias]  # fmt: skip
    sent = _sent(monkeypatch, *where)
    run = await record_run(demo, RunSettings(model=alias, fake=True, fake_timing="instant", speed=8.0, turns=[0, 5]),
                           get_runner(alias), tmp_path / "arena.db")
    got = [(u.prompt_tokens, u.completion_tokens, u.input_audio_tokens, u.output_audio_tokens, u.cache_read_input_tokens,
            u.cache_read_input_audio_tokens) for e in run.kinds("usage") if (u := e.usage).service == "llm"]
    assert got and got == [read(u) for u in sent]


async def test_a_judged_fake_run_costs_the_models_tokens_and_apart_the_judges(demo, tmp_path: Path) -> None:
    """A simulator run judged live by the OpenAI judge against its local fake (every turn, then the
    whole run): the model's cost from the simulator's `response.done` usage, the judge's from the
    usage of every chat completion the judge's fake answered, each priced by its own model."""
    import asyncio

    from arena_tui.judge.limits import RetryPolicy
    from arena_tui.judge.openai_judge import OpenAIJudge
    from arena_tui.judge.worker import JudgeWorker
    from tests.fakes.http_base import approx_tokens
    from tests.fakes.openai_chat import FakeOpenAI

    server = FakeOpenAI().start()
    backend = OpenAIJudge("gpt-5-mini", base_url=server.base_url, api_key="sk-test")
    fast = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.02)
    judging: dict = {}

    def judge(bus) -> None:
        judging["task"] = JudgeWorker(demo, backend, bus, "j", policy=fast, run_policy=fast).start()

    try:
        async with await Store.open(tmp_path / "arena.db") as store:
            await record_run(demo, RunSettings(model="sim", fake=True, fake_timing="instant", speed=8.0, turns=[0, 1]),
                             get_runner("sim"), store, before=judge, run_id="j")
            await asyncio.wait_for(judging["task"], 60)
            await store.flush()
            (run,) = await load_runs(store, ["j"])
    finally:
        await backend.aclose()
        server.stop()
    sent = [approx_tokens("".join(f"<{m['role']}>{m['content']}" for m in r["messages"])) for r in server.chat_requests]
    assert len(sent) == 3 and run.judge_usage["openai:gpt-5-mini"].input_tokens == sum(sent)
    assert run.cost.known and run.judge_cost.known and run.cost.usd > 0 and run.judge_cost.usd > 0
    assert run.judge_cost.dates == (load_prices().find("gpt-5-mini").date,) != run.cost.dates
    assert run.cost == run_estimate("sim", run.usage, load_prices())  # the judge's tokens are not the model's
