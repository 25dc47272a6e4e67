"""What a run cost: usage priced by one module (`arena_tui.cost`) from a dated price table, the
table overridden by `--prices FILE` or `ARENA_TUI_PRICES` and refused in one line when it is not
a price table, the figure the same on every surface (`arena-tui runs`, the report's CSVs and
tables, the leaderboard's columns, the run header), "price unknown" where no price covers a
report (never $0), the judge's cost apart."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from arena_tui import cli
from arena_tui.compare.columns import board_columns
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.stored import load_runs
from arena_tui.compare.tables import MODEL_SUMMARY
from arena_tui.cost import (
    ENV, NO_USAGE, UNKNOWN, Estimate, Price, PriceTable, buckets, judge_estimate, load_prices, money, price_report,
    run_estimate,
)
from arena_tui.run_view import RunState
from arena_tui.spine.bus import EventBus
from arena_tui.spine.errors import CliError
from arena_tui.spine.events import (
    DimensionScore, Judgement, RunEnded, RunStarted, TokenUsage, TurnEnded, TurnResult, Usage, UsageReported,
)
from arena_tui.store import Store
from arena_tui.store.schema import migrate
from arena_tui.widgets.run_header import cost_forms, header_text

REALTIME = Usage(model="gpt-realtime", prompt_tokens=908, completion_tokens=139, total_tokens=1047,
                 cache_read_input_tokens=896, input_audio_tokens=227, output_audio_tokens=115,
                 cache_read_input_audio_tokens=215)  # an OpenAI Realtime response.done, as Pipecat carries it
# gpt-realtime's prices per million (text in / cached / out, audio in / cached / out): 4 / 0.4 / 16, 32 / 0.4 / 64
REALTIME_USD = (681 * 0.4 + 215 * 0.4 + 12 * 32 + 24 * 16 + 115 * 64) / 1e6


def entry(alias: str = "m", **kw) -> Price:
    return Price(alias, kw.pop("date", "2026-01-02"), "test", **kw)


# --- the table -------------------------------------------------------------------------------


def test_the_shipped_table_is_dated_and_sourced_and_names_each_model_once() -> None:
    table = load_prices()
    assert table.override is None and len(table.entries) >= 20
    seen: dict[str, str] = {}
    for p in table.entries:
        assert date.fromisoformat(p.date) <= date(2027, 1, 1) and p.source.strip(), p
        assert p.tokens or p.minutes or p.characters is not None, p
        for name in p.names():
            assert seen.setdefault(name, p.alias) == p.alias, f"{name} priced by {seen[name]} and {p.alias}"


# --- what a report is billed as ----------------------------------------------------------------


def test_tokens_are_split_as_billed_whatever_the_provider_reports_gross_or_net() -> None:
    assert buckets(REALTIME) == {"text_in": 0, "cached_text_in": 681, "cache_write_in": 0, "audio_in": 12,
                                 "cached_audio_in": 215, "text_out": 24, "audio_out": 115}  # fmt: skip
    # OpenAI-compatible: prompt gross of the cache
    gross = Usage(prompt_tokens=1000, completion_tokens=20, total_tokens=1020, cache_read_input_tokens=800)
    # Anthropic, Bedrock: prompt net of the cache, the cache read and write beside it, total gross (Pipecat's rule)
    net = Usage(prompt_tokens=100, completion_tokens=20, total_tokens=970, cache_read_input_tokens=800,
                cache_creation_input_tokens=50)
    assert (buckets(gross)["text_in"], buckets(gross)["cached_text_in"]) == (200, 800)
    assert (buckets(net)["text_in"], buckets(net)["cached_text_in"], buckets(net)["cache_write_in"]) == (100, 800, 50)
    nova = Usage(prompt_tokens=300, completion_tokens=80, total_tokens=380, input_audio_tokens=250, output_audio_tokens=60)
    assert {k: v for k, v in buckets(nova).items() if v} == {"text_in": 50, "audio_in": 250, "text_out": 20, "audio_out": 60}


def test_a_report_is_priced_by_its_entry_or_named_unknown_never_zero() -> None:
    gpt = load_prices().find("gpt-realtime")
    assert price_report(REALTIME, gpt, "gpt-realtime") == Estimate(pytest.approx(REALTIME_USD), (), ("2026-12-07",), 1)
    none = price_report(REALTIME, None, "gpt-realtime")
    assert none.unknown == ("gpt-realtime",) and none.value is None and none.short() == UNKNOWN
    text_only = entry(tokens={"text_in": 1.0, "text_out": 2.0})
    audio = price_report(REALTIME, text_only, "m")  # audio tokens, no audio price: unknown, said which
    said = "m (audio input, cached audio input, audio output)"  # cached audio falls back to the audio price: none
    assert audio.unknown == (said,) and audio.text() == f"{UNKNOWN}: {said}"
    no_cache_price = price_report(Usage(prompt_tokens=1000, completion_tokens=0, total_tokens=1000,
                                        cache_read_input_tokens=1000), text_only, "m")
    assert no_cache_price.usd == pytest.approx(1000 / 1e6)  # cached at the input price: no discount taken
    by_minute = entry(minutes={"session": 0.05, "audio": 0.01}, characters=15.0)
    assert price_report(Usage(service="session", session_seconds=90), by_minute, "m").usd == pytest.approx(0.075)
    assert price_report(REALTIME, by_minute, "m").usd == 0 and price_report(REALTIME, by_minute, "m").known  # in the minutes
    assert price_report(Usage(service="stt", audio_seconds=120), by_minute, "m").usd == pytest.approx(0.02)
    assert price_report(Usage(service="tts", characters=2000), by_minute, "m").usd == pytest.approx(0.03)
    tokens_only = entry(tokens={"text_in": 1.0})
    assert price_report(Usage(service="stt", audio_seconds=1), tokens_only, "stt").unknown == ("stt (audio minutes)",)
    assert price_report(Usage(service="session", session_seconds=60), tokens_only, "m").usd == 0  # billed by tokens


def test_an_estimate_says_what_it_is() -> None:
    table = PriceTable((entry("a", tokens={"text_in": 1e6}, date="2025-01-01"), entry("b", tokens={"text_in": 1e6})))
    one = Usage(model="a", prompt_tokens=1, total_tokens=1)
    both = run_estimate("x", [one, one.model_copy(update={"model": "b"})], table)
    assert both.text() == "$2.00 (estimate, prices of 2025-01-01…2026-01-02)" and both.value == 2.0
    assert both.per_pass(4) == 0.5 and both.per_pass(0) is None and both.per_pass_text(0) == "no turn passed"
    assert run_estimate("x", [], table).text() == NO_USAGE and run_estimate("x", [], table).value is None
    mixed = run_estimate("x", [one, one.model_copy(update={"model": "c"})], table)
    assert mixed.text() == f"{UNKNOWN}: c" and mixed.value is None and mixed.per_pass(3) is None  # a part unknown: no total
    assert run_estimate("a", [one.model_copy(update={"model": ""})], table).known  # a report naming no model: the run's alias
    assert [money(v) for v in (0.0042, 0.1234, 12.345)] == ["$0.0042", "$0.123", "$12.35"]


def test_the_judge_is_priced_apart_by_its_model() -> None:
    table = load_prices()
    usage = {"openai:gpt-5-mini": TokenUsage(input_tokens=1000, cached_input_tokens=800, output_tokens=50),
             "heuristic": TokenUsage(), "human:ana": TokenUsage()}  # fmt: skip
    assert judge_estimate(usage, table).usd == pytest.approx((200 * 0.25 + 800 * 0.025 + 50 * 2.0) / 1e6)
    assert judge_estimate({"heuristic": TokenUsage()}, table).reports == 0  # no request was sent
    assert judge_estimate({"local:llama3.2": TokenUsage(input_tokens=9, output_tokens=1)}, table).text() == \
        "$0 (served locally: no bill)"
    assert judge_estimate({"openai:gpt-9": TokenUsage(input_tokens=9)}, table).unknown == ("gpt-9",)


def test_a_resellers_usage_is_priced_by_its_own_price_list_never_the_makers(tmp_path: Path) -> None:
    """An Azure run's usage names its model under Azure's price list (`azure-openai/gpt-realtime`:
    the engine's `price_scope`): OpenAI's list price of gpt-realtime never prices it. No public Azure
    figure is shipped, so it is "price unknown", named; the user's entry for the alias prices it."""
    azure = [REALTIME.model_copy(update={"model": "azure-openai/gpt-realtime"}),
             Usage(service="session", model="azure-openai/gpt-realtime", session_seconds=60)]
    shipped = run_estimate("azure-gpt-realtime", azure, load_prices())
    assert shipped.text() == f"{UNKNOWN}: azure-openai/gpt-realtime" and shipped.value is None and shipped.usd == 0
    own = load_prices(_table(tmp_path / "azure.json", {"azure-gpt-realtime": {"date": "2026-12-01", "source": "our Azure invoice",
                                                                              "per_million_tokens": {"text_in": 4, "audio_in": 32, "text_out": 16, "audio_out": 64}}}))
    assert run_estimate("azure-gpt-realtime", azure, own).value == pytest.approx((908 - 227 + 12 * 0) / 1e6 * 4 + 227 / 1e6 * 32
                                                                                 + 24 / 1e6 * 16 + 115 / 1e6 * 64)


def test_a_live_models_minutes_and_its_backends_tokens_are_priced_each_by_its_own() -> None:
    """gpt-live-1: the session by the minute ($0.05, billed per second), the hosted backend's tokens
    at its own model's price (gpt-5.4-mini), a client backend's at its (gpt-4.1-mini)."""
    table = load_prices()
    usage = [Usage(service="session", model="gpt-live-1", session_seconds=90),
             Usage(model="gpt-5.4-mini", prompt_tokens=1000, completion_tokens=100, total_tokens=1100),
             Usage(model="gpt-4.1-mini", prompt_tokens=2000, completion_tokens=50, total_tokens=2050)]
    est = run_estimate("gpt-live-1", usage, table)
    assert est.value == pytest.approx(90 / 60 * 0.05 + (1000 * 0.75 + 100 * 4.5) / 1e6 + (2000 * 0.4 + 50 * 1.6) / 1e6)
    assert est.dates == tuple(sorted({table.find(m).date for m in ("gpt-live-1", "gpt-5.4-mini", "gpt-4.1-mini")}))
    # a backend no entry prices is "price unknown", named: never free inside the live model's minutes
    unpriced = run_estimate("gpt-live-1", [usage[0], usage[1].model_copy(update={"model": "gpt-9-mini"})], table)
    assert unpriced.unknown == ("gpt-9-mini",) and unpriced.value is None
    realtime21 = REALTIME.model_copy(update={"model": "gpt-realtime-2.1"})  # gpt-realtime-2's prices: $24 text out
    assert run_estimate("gpt-realtime-2.1", [realtime21], table).value == pytest.approx(REALTIME_USD + 24 * (24 - 16) / 1e6)


# --- a price table of the user's ---------------------------------------------------------------


def _table(path: Path, prices: dict, **top) -> Path:
    path.write_text(json.dumps({"prices": prices, **top}), encoding="utf-8")
    return path


def test_a_users_table_replaces_entries_and_adds_others(tmp_path: Path, monkeypatch) -> None:
    own = _table(tmp_path / "mine.json", {
        "gpt-realtime": {"models": ["gpt-realtime"], "date": "2030-01-01", "source": "my contract",
                         "per_million_tokens": {"text_in": 1, "text_out": 1, "audio_in": 1, "audio_out": 1}},
        "gemini-3.1-flash": {"models": ["models/gemini-3.1-flash-live-preview"], "date": "2030-01-01", "source": "me",
                             "per_minute": {"session": 0.01}}})  # fmt: skip
    table = load_prices(own)
    assert table.override == str(own) and table.find("gpt-realtime").date == "2030-01-01"
    assert table.find("gemini-3.1-flash").minutes == {"session": 0.01} and table.find("gpt-4.1").date  # the rest kept
    monkeypatch.setenv(ENV, str(own))
    assert load_prices() == table  # the environment names the same file
    # unchanged file, same table; a changed one is read again
    own.write_text(own.read_text().replace("2030-01-01", "2031-01-01"), encoding="utf-8")
    import os

    os.utime(own, (1, 1))
    assert load_prices().find("gpt-realtime").date == "2031-01-01"


BAD = [
    ("{not json", "not JSON: line 1 column 2"),
    ("[]", "a price table is a JSON object"),
    ('{"prices": {}, "rates": 1}', "rates: unknown field"),
    ('{"prices": [], "currency": "USD"}', "prices: must be an object"),
    ('{"prices": {}, "currency": "EUR"}', "currency: only USD"),
    ('{"prices": {"m": 3}}', "prices.m: must be an object"),
    ('{"prices": {"m": {"source": "x", "per_minute": {"session": 1}}}}', "prices.m.date: must be the date"),
    ('{"prices": {"m": {"date": "1/2/2026", "source": "x", "per_minute": {"session": 1}}}}', "prices.m.date:"),
    ('{"prices": {"m": {"date": "2026-01-02", "per_minute": {"session": 1}}}}', "prices.m.source: must say where"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x"}}}', "prices.m: no price"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "per_million_tokens": {"text_in": "cheap"}}}}',
     "prices.m.per_million_tokens.text_in: must be a number of US dollars >= 0, not 'cheap'"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "per_million_tokens": {"text_in": -1}}}}',
     "prices.m.per_million_tokens.text_in: must be a number"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "per_million_tokens": {"video_in": 1}}}}',
     "prices.m.per_million_tokens.video_in: unknown price"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "per_minute": {"session": true}}}}',
     "prices.m.per_minute.session: must be a number"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "models": "m1", "per_minute": {"audio": 1}}}}',
     "prices.m.models: must be a list"),
    ('{"prices": {"m": {"date": "2026-01-02", "source": "x", "price": 1}}}', "prices.m.price: unknown field"),
]


@pytest.mark.parametrize(("text", "said"), BAD)
def test_a_bad_price_table_is_refused_in_one_line_naming_the_file_and_field(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(CliError, match=re.escape(f"{bad}: {said}")):
        load_prices(bad)
    db = str(tmp_path / "a.db")
    for argv, env in ((["--db", db, "--prices", str(bad), "runs"], None), (["--db", db, "runs"], str(bad))):
        if env:
            monkeypatch.setenv(ENV, env)
        assert cli.main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and err.startswith(f"arena-tui: {bad}: {said}"), err
    missing = tmp_path / "none.json"
    with pytest.raises(CliError, match=re.escape(f"{missing}: cannot read the price table")):
        load_prices(missing)


# --- the same figure on every surface ------------------------------------------------------------


def _events(run_id: str, model: str, usage: list[Usage], *, judge_tokens: int = 0) -> list:
    evs: list = [RunStarted(run_id=run_id, t_ms=0, benchmark="b", model=model, provider="openai", turn_indices=[0, 1],
                            config={"speed": 1.0})]  # fmt: skip
    for i in (0, 1):
        evs += [UsageReported(run_id=run_id, t_ms=100 * i + 50, turn_index=i, usage=u) for u in usage]
        evs.append(TurnEnded(run_id=run_id, t_ms=100 * i + 90, turn_index=i,
                             result=TurnResult(turn_index=i, status="ok", user_text="hi", assistant_text="hello")))
        evs.append(Judgement(run_id=run_id, t_ms=100 * i + 95, turn_index=i, judge="openai:gpt-5-mini",
                             scores={"instruction_following": DimensionScore(verdict="pass" if i == 0 else "fail")},
                             usage=TokenUsage(input_tokens=judge_tokens, output_tokens=judge_tokens // 10)))
    return [*evs, RunEnded(run_id=run_id, t_ms=500, status="completed")]


async def _record(db: Path, *runs: list) -> None:
    bus = EventBus()
    async with await Store.open(db) as store:
        task = store.start_recording(bus)
        for evs in runs:
            for e in evs:
                bus.publish(e)
        bus.close()
        await task


def test_runs_report_and_leaderboard_show_one_cost_and_the_judges_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    db = tmp_path / "a.db"
    asyncio.run(_record(db, _events("priced", "gpt-realtime", [REALTIME], judge_tokens=10_000),
                        _events("unpriced", "no-such-model", [REALTIME.model_copy(update={"model": "no-such-model"})]),
                        _events("old", "gpt-realtime", [])))  # fmt: skip

    async def read() -> dict:
        async with await Store.open(db) as store:
            assert await store.usage("priced") == [REALTIME, REALTIME] and await store.usage("old") == []
            assert await store.judge_usage("priced") == {
                "openai:gpt-5-mini": TokenUsage(input_tokens=20_000, output_tokens=2000)}
            return {r.run_id: r for r in await load_runs(store, ["priced", "unpriced", "old"])}

    runs = asyncio.run(read())
    usd, judge_usd = 2 * REALTIME_USD, (20_000 * 0.25 + 2000 * 2.0) / 1e6
    assert runs["priced"].cost.value == pytest.approx(usd) and runs["priced"].judge_cost.value == pytest.approx(judge_usd)
    assert runs["unpriced"].cost.text() == f"{UNKNOWN}: no-such-model" and runs["old"].cost.text() == NO_USAGE

    assert cli.main(["--db", str(db), "runs"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert f"{money(usd)} ({money(usd)}/pass)" in lines["priced"] and money(judge_usd) in lines["priced"]  # 1 of 2 passed
    assert UNKNOWN in lines["unpriced"] and "$" not in lines["unpriced"].split(UNKNOWN)[0].split("  ")[-1]
    assert lines["cost:"].startswith("cost: estimate, prices of 2025-08-07…2026-12-07")  # gpt-5-mini's and gpt-realtime's

    out = tmp_path / "report"
    assert cli.main(["--db", str(db), "report", "all", str(out)]) == 0
    rows = {r["run_id"]: r for r in csv.DictReader((out / "run_results.csv").open(encoding="utf-8"))}
    assert float(rows["priced"]["cost_usd"]) == pytest.approx(usd) and rows["priced"]["cost_note"] == "estimate, prices of 2026-12-07"
    assert float(rows["priced"]["cost_per_passed_turn_usd"]) == pytest.approx(usd)
    assert float(rows["priced"]["judge_cost_usd"]) == pytest.approx(judge_usd)
    assert int(rows["priced"]["usage_audio_out_tokens"]) == 230 and int(rows["priced"]["usage_cached_in_tokens"]) == 2 * 896
    assert rows["unpriced"]["cost_usd"] == "" and rows["unpriced"]["cost_note"] == f"{UNKNOWN}: no-such-model"
    assert rows["old"]["cost_usd"] == "" and rows["old"]["cost_note"] == NO_USAGE and rows["old"]["usage_text_in_tokens"] == ""
    summary = {r["model_name"]: r for r in csv.DictReader((out / "model_summary.csv").open(encoding="utf-8"))}
    assert summary["gpt-realtime"]["cost_usd_total"] == ""  # one of its runs recorded no usage: no total
    assert summary["gpt-realtime"]["cost_note"] == f"{NO_USAGE} for 1 of its runs"
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "cost (estimate)" in html and "judge cost (estimate)" in html and "estimate, prices of 2026-12-07" in html

    # runs --json: each run's cost and its judge's as numbers (None: not known) with their notes, as the CSV has them
    capsys.readouterr()
    assert cli.main(["--db", str(db), "runs", "--json"]) == 0
    listed = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    fields = ("cost_usd", "cost_per_passed_turn_usd", "cost_note", "judge_cost_usd", "judge_cost_note")
    for run_id, row in rows.items():
        assert {k: "" if listed[run_id][k] is None else str(listed[run_id][k]) for k in fields} == {k: row[k] for k in fields}
    assert listed["priced"]["cost_usd"] == pytest.approx(usd) and listed["priced"]["judge_cost_usd"] == pytest.approx(judge_usd)
    assert listed["unpriced"]["cost_usd"] is None and listed["unpriced"]["cost_note"] == f"{UNKNOWN}: no-such-model"
    assert listed["old"]["cost_usd"] is None and listed["old"]["cost_note"] == NO_USAGE and listed["old"]["turns_total"] == 2

    # the user's prices: the same surfaces, the new figure and its date
    own = _table(tmp_path / "mine.json", {"gpt-realtime": {"date": "2030-01-01", "source": "me", "per_million_tokens": {
        "text_in": 1, "cached_text_in": 1, "text_out": 1, "audio_in": 1, "cached_audio_in": 1, "audio_out": 1}}})
    assert cli.main(["--db", str(db), "--prices", str(own), "report", "priced", str(tmp_path / "mine")]) == 0
    mine = next(csv.DictReader((tmp_path / "mine" / "run_results.csv").open(encoding="utf-8")))
    assert float(mine["cost_usd"]) == pytest.approx(2 * 1047 / 1e6) and mine["cost_note"] == "estimate, prices of 2030-01-01"
    monkeypatch.setenv(ENV, str(own))
    capsys.readouterr()
    assert cli.main(["--db", str(db), "runs"]) == 0
    assert money(2 * 1047 / 1e6) in capsys.readouterr().out

    board = build_leaderboard(list(runs.values()))
    row = next(r for r in board.rows if r.model == "gpt-realtime")
    cols = {c.key: c for c in board_columns(board.dimensions, cost=True)}
    assert set(cols["cost"].csv) | set(cols["judge_cost"].csv) <= set(MODEL_SUMMARY)
    assert "cost" not in {c.key for c in board_columns(board.dimensions)}  # only where a row has a cost (`has_cost`)
    assert cols["cost"].figure(row).line == f"{NO_USAGE} for 1 of its runs" and cols["cost"].value(row) is None
    assert cols["judge_cost"].figure(row).line == f"{money(judge_usd)} (estimate, prices of 2025-08-07)"
    (alone,) = [r for r in build_leaderboard([runs["priced"]]).rows]
    assert cols["cost"].figure(alone).line == f"{money(usd)} [{money(usd)} per passed turn; estimate, prices of 2026-12-07]"
    assert cols["cost"].value(alone) == pytest.approx(usd)


def test_the_run_header_folds_usage_once_and_says_the_judges_apart() -> None:
    evs = _events("r", "gpt-realtime", [REALTIME], judge_tokens=10_000)
    state = RunState("r")
    state.apply_all(evs)
    state.apply_all(evs)  # the bus's, then the store's read back: counted once
    assert state.costs.model("gpt-realtime").value == pytest.approx(2 * REALTIME_USD)
    line = cost_forms(state)[0].plain
    cost = money(2 * REALTIME_USD)  # one of its two turns passed
    assert f"cost {cost} [{cost} per passed turn; estimate, prices of 2026-12-07]" in line
    assert f"judge cost {money((20_000 * 0.25 + 2000 * 2.0) / 1e6)}" in line
    assert f"cost {money(2 * REALTIME_USD)} est." in header_text(state, width=200).plain
    assert "cost" not in header_text(state, width=80).plain  # the first part a narrow header gives up


async def test_a_database_of_schema_10_gains_the_usage_table(tmp_path: Path) -> None:
    path = tmp_path / "v10.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), target=10)
    conn.close()
    await _record(path, _events("r", "gpt-realtime", [REALTIME]))
    async with await Store.open(path) as store:
        assert await store.usage("r") == [REALTIME, REALTIME]
        assert (await store.info()).schema_version == 11


async def test_the_runs_list_shows_each_runs_cost_and_its_judges_apart(tmp_path: Path) -> None:
    """The runs screen's cost column (last of the optional ones, offered when a run has a cost) and
    the line under it saying what the figures are; a run with no usage shows none."""
    from arena_tui.app import ArenaApp  # deferred: only this test opens the app
    from arena_tui.screens.runs import RunsScreen  # deferred: as above
    from tests.pilot import until

    db = tmp_path / "a.db"
    await _record(db, _events("priced", "gpt-realtime", [REALTIME], judge_tokens=10_000), _events("old", "gpt-realtime", []))
    app = ArenaApp(db)
    async with app.run_test(size=(200, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs")
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[-1] == "cost (est.)", labels
        cells = {str(key.value): str(table.get_row(key)[-1]) for key in table.rows}
        assert cells == {"priced": f"{money(2 * REALTIME_USD)} + judge {money((20_000 * 0.25 + 2000 * 2.0) / 1e6)}", "old": ""}
        legend = str(app.screen.query_one("#runs-legend").render())
        assert "cost: estimate, prices of 2025-08-07…2026-12-07" in legend


async def test_an_export_keeps_the_usage_and_its_import_the_cost(tmp_path: Path) -> None:
    """Export → import: the usage reports come back as they were (and the judge's tokens with the
    judgements), so the imported run costs what the original did; a bad usage field is named."""
    from arena_tui.interop import InteropError, export_run, import_run  # deferred: only these tests exchange runs

    await _record(tmp_path / "a.db", _events("r", "gpt-realtime", [REALTIME], judge_tokens=10_000))
    async with await Store.open(tmp_path / "a.db") as a:
        out = await export_run(a, "r", tmp_path / "exp")
        (original,) = await load_runs(a, ["r"])
    async with await Store.open(tmp_path / "b.db") as b:
        rid = await import_run(b, out)
        assert await b.usage(rid) == [REALTIME, REALTIME]
        (back,) = await load_runs(b, [rid])
        assert (back.cost, back.judge_cost) == (original.cost, original.judge_cost) and back.cost.known
    runtime = json.loads((out / "runtime.json").read_text(encoding="utf-8"))
    runtime["arena_tui"]["usage"][0]["usage"]["prompt_tokens"] = "many"
    (out / "runtime.json").write_text(json.dumps(runtime), encoding="utf-8")
    async with await Store.open(tmp_path / "c.db") as c:
        with pytest.raises(InteropError, match=r"runtime.json: field arena_tui.usage: Input should be a valid integer"):
            await import_run(c, out)


async def _priced_campaign(db: Path) -> None:
    """The three runs of the surfaces test as a campaign's cells (one cell without a run yet)."""
    from arena_tui.campaign import records  # deferred: only this test makes a campaign
    from arena_tui.campaign.spec import CampaignSpec, Cell  # deferred: as above

    await _record(db, _events("priced", "gpt-realtime", [REALTIME], judge_tokens=10_000),
                  _events("unpriced", "no-such-model", [REALTIME.model_copy(update={"model": "no-such-model"})]),
                  _events("old", "gpt-realtime", []))  # fmt: skip
    async with await Store.open(db) as store:
        await records.create(store, "camp", CampaignSpec(benchmarks=("b",), models=("gpt-realtime", "no-such-model"), repeats=2))
        for cell, run_id in ((Cell("b", "gpt-realtime", 1), "priced"), (Cell("b", "gpt-realtime", 2), "old"),
                             (Cell("b", "no-such-model", 1), "unpriced")):
            await records.set_cell(store, "camp", cell, status="done", run_id=run_id)
        await store.flush()


def test_campaign_show_says_each_cells_cost_and_its_judges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "a.db"
    asyncio.run(_priced_campaign(db))
    usd, judge_usd = 2 * REALTIME_USD, (20_000 * 0.25 + 2000 * 2.0) / 1e6
    assert cli.main(["--db", str(db), "campaign", "show", "camp"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(line for line in out if line.startswith("cell"))
    assert " cost " in header and " judge cost " in header
    cells = {line.split("  ")[0]: line for line in out if line.startswith("b × ")}
    assert f"{money(usd)} ({money(usd)}/pass)  {money(judge_usd)} (est.)" in cells["b × gpt-realtime #1"]
    assert re.search(rf"  {UNKNOWN} +-$", cells["b × no-such-model #1"]), cells  # no figure, never $0; no judge request
    assert "$" not in cells["b × gpt-realtime #2"] and "$" not in cells["b × no-such-model #2"]  # no usage, no run yet
    assert any(line.startswith("cost: estimate, prices of 2025-08-07…2026-12-07") for line in out)
    assert f"{UNKNOWN}: no-such-model" in out  # what no price covers, named once


async def test_the_compare_screen_and_a_campaigns_cells_show_what_each_cost(tmp_path: Path) -> None:
    """Compare: each side's cost and, apart, its judge's, with the line saying what the figures are;
    a campaign's matrix: a cost column (offered when a cell has one), the selected cell's in full."""
    from textual.widgets import DataTable, Static

    from arena_tui.app import ArenaApp  # deferred: only these tests open the app
    from arena_tui.screens.campaigns import CampaignScreen  # deferred: as above
    from arena_tui.screens.compare import CompareScreen  # deferred: as above
    from arena_tui.screens.runs import RunsScreen  # deferred: as above
    from tests.pilot import until

    db = tmp_path / "a.db"
    await _priced_campaign(db)
    usd, judge_usd = 2 * REALTIME_USD, (20_000 * 0.25 + 2000 * 2.0) / 1e6
    app = ArenaApp(db)
    async with app.run_test(size=(200, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CompareScreen(run_ids=("priced", "unpriced")))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        title = str(app.screen.query_one("#pair-title", Static).render())
        a, b = (line for line in title.splitlines() if line.startswith(("A: ", "B: ")))
        assert a.endswith(f"cost {money(usd)} ({money(usd)}/pass) · judge {money(judge_usd)} (est.)"), a
        assert b.endswith(f"cost {UNKNOWN}: no-such-model"), b
        assert "cost: estimate, prices of 2025-08-07…2026-12-07" in title
        await pilot.press("escape")

        app.push_screen(CampaignScreen("camp"))
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
        await pilot.pause(0.2)
        table = app.screen.query_one("#cells", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert "cost (est.)" in labels, labels
        column = labels.index("cost (est.)")
        cost = {str(k.value): str(table.get_row(k)[column]) for k in table.rows}
        assert cost["b\x1fgpt-realtime\x1f1"] == f"{money(usd)} + judge {money(judge_usd)}"
        assert cost["b\x1fno-such-model\x1f1"] == UNKNOWN and cost["b\x1fno-such-model\x1f2"] == ""
        assert "cost: estimate, prices of" in str(app.screen.query_one("#cells-legend", Static).render())
        detail = str(app.screen.query_one("#cell-detail", Static).render())  # the first cell, selected
        assert f"cost {money(usd)} ({money(usd)}/pass) · judge {money(judge_usd)} (est.)" in detail, detail
