"""The subcommands: one module each (`add_arguments(parser)`, `run(args) -> int`), registered
here by name, help line, module and (optionally) a longer description, in `--help`'s order.

`--help` reads this table only: no command module is imported until its command runs (or its own
`--help` is asked for), so a command module imports what its command needs at its top.
Adding a command = its module, and its line here (tests/test_cli_registry.py fails until both agree).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    module: str  # under arena_tui.commands
    description: str = ""  # what `arena-tui <name> --help` says above its options (default: `help`)


COMMANDS: tuple[Command, ...] = (
    Command("ui", "open the live monitor on the runs list (the default when no command is given)", "ui"),
    Command("demo", "run the demo benchmark against the local simulator in the monitor (no keys, no network)", "demo"),
    Command("run", "run a benchmark against a model (use --model sim for the offline simulator)", "run",
            "Run BENCH (a name found under --data, or a benchmark folder) against MODEL and record "
            "every event, turn and audio track to the database. --model sim runs against the built-in "
            "simulator (no key, no network); scores from it are labelled as simulated."),
    Command("resume", "continue an interrupted run at its first unfinished turn (same run id)", "resume",
            "Continue RUN (interrupted by a quit, a kill or a lost worker) at its first planned turn "
            "without a finished row, in a new session given the finished turns' history. The run keeps "
            "its id, config and benchmark; the resumed turns are judged like the first ones (the judge "
            "the run was judged with, unless --judge says otherwise)."),
    Command("campaign", "run a matrix of benchmarks × models × repeats as one resumable campaign; list and show "
            "campaigns", "campaign"),
    Command("benchmarks", "list benchmarks and what is available locally (turns, audio n/N, source); show one; or import",
            "benchmarks"),
    Command("runs", "list recorded runs (id, benchmark, model, status, progress, strict pass, started, duration, turns "
            "counted apart)", "runs"),
    Command("models", "list model aliases, their provider and whether each is ready (answers), has its key set, or "
            "needs something", "models"),
    Command("fetch", "download benchmarks from Hugging Face (honours HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN)", "fetch"),
    Command("weights", "the local cascade parts' weights (whisper, piper, kokoro): where they are; --fetch downloads "
            "them", "weights"),
    Command("synthesize", "write turn_NNN.wav for turns lacking audio (espeak offline, or OpenAI tts-1)", "synthesize"),
    Command("judge", "re-judge a recorded run as a whole (or one turn with --turn) and print its scores", "judge"),
    Command("review", "record a person's verdict on a turn (it wins over the judge's until withdrawn), or --withdraw it",
            "review"),
    Command("search", "find turns across runs by what was said, answered, reasoned or caused (--run, --dimension, "
            "--cause narrow it)", "search"),
    Command("export", "export a recorded run as runs/<benchmark>/<ts>_<model>_<id>/ (transcript, audio, judge files)",
            "export"),
    Command("import", "import a reference run directory (transcript.jsonl, runtime.json, conversation.wav, judge files)",
            "import_run"),
    Command("report", "compare runs: run_results/model_summary/metric_summary CSVs, summary.md, report.html", "report",
            "Write a comparison report of stored runs into DIR. Each target is a campaign id (all its runs), "
            "a run id (or a unique prefix of either), a benchmark name (all its runs) or `all`. Runs still "
            "recording are skipped."),
    Command("simulate", "serve the offline OpenAI-Realtime simulator for a benchmark on 127.0.0.1", "simulate",
            "Serve a local websocket that speaks the OpenAI Realtime protocol, driven by BENCH: it "
            "recognises each turn from its audio, answers with the golden answer and the expected "
            "tool calls, and misbehaves on cue (--faults). Stop with Ctrl-C."),
    Command("db", "the run database: path, info (sizes and counts), vacuum", "db"),
    Command("version", "print versions of arena-tui, Pipecat, Textual and the provider SDKs", "version"),
)
