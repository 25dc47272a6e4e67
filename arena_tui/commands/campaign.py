"""`arena-tui campaign run|resume|list|show`: a matrix of ordinary runs, preflighted, resumable.

`run` takes flags or a TOML spec (flags override it); re-running the same spec continues the
campaign recorded with it. `resume ID` continues a recorded campaign. Progress is one line per
cell event (started, lost and resumed, complete), and one saying how far it got whenever nothing
else was said for 10 s; SIGTERM, SIGHUP and ctrl+c stop it with its workers (exit 128 + the
signal). `show` prints the matrix with each cell's
status judged from its stored turn rows, its pass rate and (when a cell has one) its cost and its
judge's, estimates by `arena_tui.cost` as `runs` prints them, then the gaps between its rows (its
models, conditions, efforts: `compare.gap`, as the report's pairwise.csv says them). Neither `show` nor `list` calls a
cell running or queued when the process that was running it is gone (records.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from arena_tui.campaign import records
from arena_tui.campaign.spec import CampaignSpec, SpecError, build_spec, listify, load_toml, spec_values
from arena_tui.compare.columns import cost_text
from arena_tui.compare.costs import cost_note
from arena_tui.compare.pairwise import family_note, strict_lines
from arena_tui.cost import Estimate
from arena_tui.orchestration.executor import Executor, NoWorkers
from arena_tui.orchestration.logs import quiet_logs
from arena_tui.orchestration.orchestrator import CampaignBlocked, run_campaign
from arena_tui.orchestration.provider_caps import plan_text, resolve
from arena_tui.spine import paths
from arena_tui.spine.bus import EventBus
from arena_tui.spine.errors import CliError
from arena_tui.spine.flags import positive_int
from arena_tui.spine.option_flags import add_option_flags, chosen, offered
from arena_tui.spine.source import ALL_SPEAKERS
from arena_tui.spine.times import when_text
from arena_tui.stop_signals import StopSignals
from arena_tui.store import Store, StoreError
from arena_tui.timing import speed_text
from arena_tui.verdicts import STRICT
from arena_tui.widgets.dimensions import HEURISTIC_MARK, cell_strict
from benchmarks.loader import BenchmarkError
from benchmarks.registry import speakers

from ..orchestration.live import choose_judge
from .ids import resolve_campaign_id


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="run a campaign from flags or a TOML spec file")
    run.add_argument("spec", nargs="?", help="TOML spec file (flags given override its values)")
    run.add_argument("--bench", help="benchmarks, comma-separated")
    run.add_argument("--model", help="model aliases, comma-separated")
    run.add_argument("--repeats", type=int, help="runs per benchmark × model (default 1)")
    run.add_argument("--concurrency", type=int, help="sessions per worker at most (default: 2 at 1×, fewer at higher speeds; a busy "
                     "worker is given fewer, and slower new runs: see `pace:` notices)")
    run.add_argument("--judge", help="judge each run live: auto (default: openai or bedrock if its key is set, else "
                     "heuristic), openai, bedrock, heuristic, none (judge later with `arena-tui judge`)")
    add_option_flags(run, "campaign")  # its run options: keys, axes, where its runs connect (spine.settings.OPTIONS)
    run.add_argument("--executor", choices=["local", "ray"], help="where runs execute (default local)")
    run.add_argument("--ray-address", help="Ray cluster address (default: start a local one)")
    run.add_argument("--provider-cap", action="append", metavar="NAME=N", help="the most sessions open at once against a "
                     "provider (its name or a model alias; repeatable), across every worker: your account's limit, over "
                     "the catalog's (`campaign show` says the caps)")
    run.add_argument("--workers", type=positive_int, help="local worker processes (default: as many as keep pace at this speed: up to 4 per core at 1×)")
    run.add_argument("--id", dest="campaign_id", help="campaign id (default: the one with this spec, else new)")
    run.add_argument("--skip-unrunnable", action="store_true", help="record unrunnable cells as skipped and run the rest")
    res = sub.add_parser("resume", help="continue a recorded campaign: skip complete runs, resume interrupted ones in place")
    res.add_argument("campaign_id", help="campaign id or a unique prefix of one (see `campaign list`)")
    res.add_argument("--skip-unrunnable", action="store_true", help="record unrunnable cells as skipped")
    sub.add_parser("list", help="recorded campaigns with their progress")
    show = sub.add_parser("show", help="a campaign's matrix: status, turns and pass rate per cell")
    show.add_argument("campaign_id", help="campaign id or a unique prefix of one (see `campaign list`)")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    try:
        # only `campaign run` records into a new database; list, show and resume read what is there
        store = await Store.open(paths.db_path(args.db), create=args.campaign_command == "run")
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        action = args.campaign_command
        if action in ("show", "resume"):
            args.campaign_id = await resolve_campaign_id(store, args.campaign_id)
        if action in ("list", "show"):
            # as `runs`: a 'running' run whose recorder is gone (kill -9) is interrupted, not running
            await store.mark_interrupted_stale()
        if action == "list":
            return await _list(store, paths.data_dir(args.data))
        if action == "show":
            return await _show(store, args.campaign_id, paths.data_dir(args.data))

        quiet_logs(False, paths.log_path(store.path))  # before any engine import: Pipecat greets on import
        return await _run(store, args)
    finally:
        await store.close()


def spec_from_args(args: argparse.Namespace) -> CampaignSpec:
    try:
        file_values = load_toml(Path(args.spec)) if args.spec else {}
        flags = {"benchmarks": args.bench, "models": args.model, "repeats": args.repeats,
                 "concurrency": args.concurrency, "judge": args.judge, "executor": args.executor,
                 "ray_address": args.ray_address, "workers": args.workers, "provider_caps": args.provider_cap,
                 **spec_values(chosen(args, "campaign"))}
        file_values, flags = _all_speakers(file_values, flags, args)
        spec = build_spec(_connection(file_values, args), flags)
        resolve(spec.models, spec.provider_caps)  # a cap on a provider the catalog does not know: said now
        return spec
    except (SpecError, ValueError) as e:
        raise CliError(str(e)) from None


def _connection(file_values: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The spec's run settings with where its runs connect, as typed (a spec file never says it)."""
    typed = {o.field: o.parse(value) for o in offered("campaign") if o.applies("connection")
             and (value := getattr(args, o.key, None)) is not None}
    typed = {k: v for k, v in typed.items() if v}
    return {**file_values, "extra": {**file_values.get("extra", {}), **typed}} if typed else file_values


def _all_speakers(file_values: dict[str, Any], flags: dict[str, Any], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """`all` among the speakers (flag or file): tts and every human speaker any of the campaign's
    benchmarks has recordings of (a benchmark without one of them gets that cell skipped, named)."""

    asked = flags["speakers"] if flags.get("speakers") is not None else file_values.get("speakers")
    names = listify(asked, "--speaker") if asked is not None else ()
    if ALL_SPEAKERS not in names:
        return file_values, flags
    benches = flags["benchmarks"] if flags.get("benchmarks") is not None else file_values.get("benchmarks", ())
    found: list[str] = []
    for bench in listify(benches, "--bench") if benches else ():
        try:
            found += [s for s in speakers(bench, paths.data_dir(args.data)) if s not in found]
        except BenchmarkError as e:
            raise CliError(str(e)) from None
    resolved = [*(s for s in names if s != ALL_SPEAKERS and s not in found), *found]
    return file_values, {**flags, "speakers": ",".join(resolved)}


async def _run(store: Store, args: argparse.Namespace) -> int:
    campaign_id: str | None = getattr(args, "campaign_id", None)
    if args.campaign_command == "resume":
        spec = await records.load_spec(store, campaign_id) if campaign_id is not None else None
        if spec is None:
            raise CliError(f"{store.path}: no campaign {campaign_id} (see `arena-tui campaign list`)")
    else:
        spec = spec_from_args(args)
    judge = choose_judge(argparse.Namespace(judge=spec.judge))
    judge.check()
    print(f"campaign judge: {judge.label}", flush=True)
    bus = EventBus()
    recording = store.start_recording(bus)

    def notice(line: str) -> None:
        print(f"campaign: {line}", flush=True)

    def started(executor: Executor) -> None:  # an executor may say where its start-up time went (Ray does)
        report = getattr(executor, "startup_report", None)
        if report is not None:
            notice(report())

    if spec.executor == "ray":  # Ray's own log lines go to our log file, not this terminal
        from arena_tui.orchestration.ray_logs import log_to  # deferred: imports no Ray; only for --executor ray

        log_to(paths.log_path(store.path))
    with StopSignals() as stops:  # SIGTERM, SIGHUP, ctrl+c: workers stopped, runs recorded interrupted
        try:
            result = await run_campaign(store, bus, spec, campaign_id=campaign_id, data_dir=paths.data_dir(args.data),
                                        skip_unrunnable=args.skip_unrunnable, notice=notice, judge=judge.make,
                                        on_executor=started)
        except CampaignBlocked as e:
            for p in e.problems:
                print(f"arena-tui: {p}", file=sys.stderr)
            raise CliError(f"campaign not started: {len(e.problems)} problem(s) above "
                           "(fix them, or pass --skip-unrunnable to run the rest)") from None
        except NoWorkers as e:
            for p in e.problems:
                print(f"arena-tui: {p}", file=sys.stderr)
            raise CliError(f"campaign not started: no worker can start ({len(e.problems)} problem(s) above; "
                           "docs/campaigns.md says what each Ray node needs)") from None
        except asyncio.CancelledError:
            if stops.received is None:
                raise
            result = None
        finally:
            stops.disarm()  # the campaign is over: a signal now must not cut the store's last flush short
            bus.close()
            await recording
    if result is None:
        return await _stopped(store, spec, campaign_id, stops)
    cells = await records.cells(store, result.campaign_id)
    done = sum(c.status == "done" for c in cells)
    print(f"campaign {result.campaign_id}: {done}/{len(cells)} cells complete ({result.already} already), "
          f"{len(result.skipped)} skipped, {len(result.incomplete)} incomplete; "
          f"see `arena-tui campaign show {result.campaign_id}`")
    return 0 if not result.incomplete else 1


async def _stopped(store: Store, spec: CampaignSpec, campaign_id: str | None, stops: StopSignals) -> int:
    """A campaign stopped by a signal: where it stands, how to go on, and 128 + the signal."""
    campaign_id = campaign_id or await records.find_by_spec(store, spec)
    name = stops.received.name if stops.received is not None else "a signal"
    if campaign_id is None:
        print(f"campaign stopped by {name} before it started")
    else:
        cells = await records.cells(store, campaign_id)
        done = sum(c.status == "done" for c in cells)
        print(f"campaign {campaign_id} stopped by {name}: {done}/{len(cells)} cells complete, its runs recorded "
              f"interrupted; go on with `arena-tui campaign resume {campaign_id}`")
    return stops.exit_status()


async def _show(store: Store, campaign_id: str, data: Path | None) -> int:
    view = await records.campaign_view(store, campaign_id, data, gaps=True)
    if view is None:
        raise CliError(f"{store.path}: no campaign {campaign_id} (see `arena-tui campaign list`)")
    spec = view.spec
    variants = "".join(f", {label}" for label in spec.variants)
    caps = plan_text(spec.models, spec.provider_caps)
    print(f"campaign {campaign_id}: {view.summary} repeat(s), speed {speed_text(spec.speed)}{variants}, executor {spec.executor}"
          f"{f', {caps}' if caps else ''}: {view.count('complete')}/{len(view.cells)} complete" + (f"; {view.pace}" if view.pace else ""))
    # each cell's cost and, apart, its judge's, when a cell has one (`runs`' columns and note)
    note = cost_note([e for c in view.cells for e in (c.cost, c.judge_cost)])
    header = ("cell", "run", "status", "turns", STRICT, *(("cost", "judge cost") if note else ()), "reason")
    lines = [(c.cell.label, c.run_id or "-", c.state, c.progress, cell_strict(c).plain,
              *((cost_text(c.cost, c.strict[0]), cost_text(c.judge_cost, judge=True)) if note else ()), c.reason)
             for c in view.cells]
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(len(header))]
    for r in [header, *lines]:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    if any(c.total and c.tally.heuristic for c in view.cells):
        print(f"{HEURISTIC_MARK}: judged by the offline heuristic judge (not an LLM)")
    if note:
        print(note)
        if (spent := sum((c.cost for c in view.cells if c.cost.reports), Estimate())).unknown:
            print(spent.text())  # what no price covers, named once (a cell says only "price unknown")
    if gap_lines := strict_lines(view.gaps):
        print(f"gaps between its rows, strict pass, paired ({family_note(view.gaps)}):")
        for line in gap_lines:
            print(f"  {line}")
    print(f"its report: arena-tui report {campaign_id} DIR (pairwise.csv: every dimension)")
    return 0


async def _list(store: Store, data: Path | None) -> int:
    views = await records.campaign_views(store, data)
    if not views:
        print("no campaigns recorded (start one with `arena-tui campaign run`)")
        return 0
    for v in views:
        active = v.count(*records.ACTIVE)
        print(f"{v.campaign_id}  {when_text(v.created_at)}  {v.shape}  {v.count('complete')}/{len(v.cells)} complete"
              + (f", {active} queued or running" if active else "") + (f"; {v.pace}" if v.pace else ""))
    return 0
