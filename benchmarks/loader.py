"""Read a benchmark folder into a `Benchmark`, reporting every problem at once.

Two layouts are accepted: ours/the shared copy (`benchmark.json`, `turns.jsonl`, `tools.json`,
`system_prompt.txt`, `knowledge_base.txt`, `audio/turn_NNN.wav`) and the Hugging Face datasets'
(`metadata.jsonl` rows `file_name, turn_id, speaker, input_text, golden_text,
required_function_call, function_call_response, categories, subcategory, scoring_dimensions`
with JSON-in-string and comma-joined values, `audio/` TTS and `real_audio/<speaker>/` human
recordings; older revisions keep the rows as a JSON array in `benchmark/turns.json`). Files a
Hub snapshot lacks (tools, prompt) can come from a companion folder of the same benchmark.

A user hand-writes these files, so nothing stops at the first mistake: each one becomes a
`Problem` naming file, line, turn and field, and all of a benchmark's problems are raised
together in one `BenchmarkError`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, Iterable

from platformdirs import user_data_dir
from pydantic import BaseModel, ValidationError

from arena_tui.spine import audio

from arena_tui.spine.benchmark import Benchmark, BenchmarkMeta, Tool, Turn
from arena_tui.spine.source import TTS

from . import duplex_cues, file_state, portable_tools, strict_json

# Limits that keep a bad file from costing unbounded time or memory (a user's benchmark is input).
MAX_LINE_BYTES = 1 << 20  # one turns.jsonl record; the shared ones are under 3 kB
MAX_TEXT_BYTES = 16 << 20  # tools.json, system prompt, knowledge base, a JSON array of turns
DEFAULT_MAX_TURN_AUDIO_S = 300.0  # one user turn's WAV; env ARENA_TUI_MAX_TURN_AUDIO_S overrides
SILENT_DBFS = -60.0  # a WAV whose loudest 50 ms block stays below this holds no speech

# Category -> extra dimensions, as the shared benchmark.json files map them; used when a Hub
# snapshot has no benchmark.json.
DEFAULT_CATEGORY_DIMENSIONS: dict[str, list[str]] = {
    "long_range_memory": ["state_tracking"],
    "cross_turn_reasoning": ["state_tracking"],
    "cancellation_flow": ["state_tracking"],
    "implicit_correction": ["state_tracking"],
    "error_recovery": ["state_tracking"],
    "ambiguous_entity": ["ambiguity_handling"],
}

SOURCES_FILE = "audio/sources.json"
REAL_AUDIO = "real_audio"  # human recordings: real_audio/<speaker>/turn_NNN.wav
_SUBDIRS = ("", "benchmark", "data")  # where a Hub snapshot may keep the text files


def audio_overlay_root() -> Path:
    """Audio made for read-only benchmark folders: env ARENA_TUI_AUDIO_DIR, else the user data dir."""
    raw = os.environ.get("ARENA_TUI_AUDIO_DIR")
    return Path(raw).expanduser() if raw else Path(user_data_dir("arena-tui")) / "audio"


def audio_overlay_dir(name: str) -> Path:
    return audio_overlay_root() / name


def max_turn_audio_s() -> float:
    """The longest WAV one turn may have: env ARENA_TUI_MAX_TURN_AUDIO_S, else 5 minutes."""
    raw = os.environ.get("ARENA_TUI_MAX_TURN_AUDIO_S")
    if not raw:
        return DEFAULT_MAX_TURN_AUDIO_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ValueError(f"ARENA_TUI_MAX_TURN_AUDIO_S must be a positive number of seconds, got {raw!r}")
    return value


class Problem(BaseModel):
    """One thing wrong with a benchmark's data, located as precisely as we can."""

    benchmark: str
    path: Path | None = None
    line: int | None = None
    turn: int | None = None
    field: str | None = None
    message: str

    def __str__(self) -> str:
        parts = [self.benchmark]
        if self.path is not None:
            parts.append(f"{self.path}:{self.line}" if self.line is not None else str(self.path))
        if self.turn is not None:
            parts.append(f"turn {self.turn}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + f": {self.message}"


class BenchmarkError(Exception):
    """Every problem found in one benchmark (never just the first)."""

    def __init__(self, benchmark: str, problems: list[Problem]) -> None:
        self.benchmark = benchmark
        self.problems = problems
        n = len(problems)
        if n == 1:  # one line: the problem names the benchmark itself
            super().__init__(str(problems[0]))
            return
        lines = [f"benchmark {benchmark}: {n} problems"] + [f"  {p}" for p in problems]
        super().__init__("\n".join(lines))


def looks_like_benchmark(folder: Path) -> bool:
    return any((folder / f).is_file() for f in ("turns.jsonl", "metadata.jsonl", "benchmark.json",
                                                "benchmark/turns.json"))


class _Reader:
    """Collects problems while reading one benchmark folder."""

    def __init__(self, folder: Path, name: str, companions: Iterable[Path]) -> None:
        self.folder = folder
        self.name = name
        self.companions = [c for c in companions if c.is_dir()]
        self.problems: list[Problem] = []
        self.meta_declared = False  # benchmark.json read: categories/dimensions are checked against it

    def add(self, message: str, path: Path | None = None, line: int | None = None,
            turn: int | None = None, field: str | None = None) -> None:
        self.problems.append(Problem(benchmark=self.name, path=path, line=line, turn=turn,
                                     field=field, message=message))

    def find(self, filename: str) -> Path | None:
        for base in [self.folder, *self.companions]:
            for sub in _SUBDIRS:
                p = base / sub / filename if sub else base / filename
                if p.is_file():
                    return p
        return None

    def read_text(self, path: Path) -> str | None:
        try:
            size = path.stat().st_size
            if size > MAX_TEXT_BYTES:
                self.add(f"{_size(size)} is more than the {_size(MAX_TEXT_BYTES)} a benchmark file may hold", path)
                return None
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            self.add(f"not UTF-8 text ({e.reason} at byte {e.start})", path)
        except OSError as e:
            self.add(f"cannot read: {e.strerror or e}", path)
        return None

    def read_json(self, path: Path, items: str = "") -> Any:
        """The file's JSON, or None (each problem reported); `items` names a top-level array's
        elements in a problem's field (`tools[2] (book_repair).parameters…`)."""
        text = self.read_text(path)
        if text is None:
            return None
        try:
            data = strict_json.loads(text)
        except json.JSONDecodeError as e:
            self.add(f"bad JSON: {e.msg} (column {e.colno})", path, line=e.lineno)
            return None
        return None if self.not_json(data, path, field=items if isinstance(data, list) else "") else data

    def not_json(self, data: Any, path: Path, line: int | None = None, turn: int | None = None,
                 field: str = "") -> bool:
        """Report every NaN / Infinity in `data` (`strict_json`), each by its field under `field`;
        whether there was one."""
        bad = list(strict_json.not_json(data, field))
        for where, text in bad:
            self.add(strict_json.message(text), path, line, turn, where or None)
        return bool(bad)

    def validation(self, err: ValidationError, path: Path, line: int | None = None,
                   turn: int | None = None, prefix: str = "") -> None:
        seen: set[str] = set()
        for e in err.errors():
            field = _loc(e["loc"], prefix)
            top = field.split(".")[0].split("[")[0]
            if top == "required_function_call" or top.endswith("].required_function_call"):
                if top in seen:
                    continue  # one message for the whole union, not one per member
                seen.add(top)
                if e["type"] != "missing":
                    self.add("must be null, an object {name, args[, flexible_args]} or a list of them"
                             f" ({_detail(e)})", path, line, turn, top)
                    continue
            self.add(_message(e), path, line, turn, field)


def _loc(loc: tuple[Any, ...], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and ("[" in part or part in ("ExpectedCall",)):
            continue  # union member tags are noise to a user
        else:
            out += f".{part}" if out else str(part)
    return out


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"


def _message(e: dict[str, Any]) -> str:
    if e["type"] == "missing":
        return "missing (required)"
    if e["type"] == "extra_forbidden":
        return "unknown field (typo?)"
    if e["type"] == "value_error" and "error" in e.get("ctx", {}):
        return f"{e['ctx']['error']}{_got(e)}"
    return f"{e['msg'][0].lower()}{e['msg'][1:]}{_got(e)}"


def _detail(e: dict[str, Any]) -> str:
    return f"{_loc(e['loc'])}: {_message(e)}"


def _got(e: dict[str, Any]) -> str:
    if "input" not in e or isinstance(e["input"], dict):
        return ""
    v = e["input"]
    shown = json.dumps(v) if not isinstance(v, (list, tuple)) else f"a list of {len(v)}"
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f", got {type(v).__name__} {shown}"


def _split_list(value: Any) -> Any:
    """Hub rows join lists with ', '; ours are JSON lists."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [] if value is None else value


def _json_value(r: _Reader, value: Any, path: Path, line: int, turn: Any, field: str) -> Any:
    """Hub rows carry calls/responses as JSON strings."""
    if not isinstance(value, str):
        return value
    s = value.strip()
    if s in ("", "null", "None"):
        return None
    try:
        value = strict_json.loads(s)
    except json.JSONDecodeError as e:
        r.add(f"not valid JSON in string: {e.msg}", path, line, turn if isinstance(turn, int) else None, field)
        return None
    return None if r.not_json(value, path, line, turn if isinstance(turn, int) else None, field) else value


def _hub_row(r: _Reader, row: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """A Hub metadata row in our turns.jsonl shape (unknown Hub columns are dropped)."""
    turn = row.get("turn_id", row.get("turn_index"))
    out: dict[str, Any] = {"turn_index": turn}
    for ours, theirs in (("input", "input_text"), ("golden_text", "golden_text")):
        if theirs in row or ours in row:
            out[ours] = row.get(theirs, row.get(ours))
    for f in ("required_function_call", "function_call_response"):
        if f in row:
            out[f] = _json_value(r, row[f], path, line, turn, f)
    out["categories"] = _split_list(row.get("categories"))
    dims = _split_list(row.get("scoring_dimensions", row.get("dimensions")))
    if dims:
        out["dimensions"] = dims
    if row.get("flexible_args") is not None:
        out["flexible_args"] = _split_list(row["flexible_args"])
    for f in ("tool_use_guidance", "subcategory"):
        if row.get(f) is not None:
            out[f] = row[f]
    if row.get("audio_file"):
        out["audio_file"] = row["audio_file"]
    return out


def _lines(r: _Reader, path: Path) -> Iterable[tuple[int, str]]:
    """(line number, text) of a JSON Lines file; a line over MAX_LINE_BYTES is reported and
    skipped without ever being held in memory whole."""
    try:
        with open(path, "rb") as f:
            no = 0
            while raw := f.readline(MAX_LINE_BYTES + 1):
                no += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    size = len(raw)
                    while (more := f.readline(1 << 20)) and not more.endswith(b"\n"):
                        size += len(more)
                    size += len(more)
                    r.add(f"line is {_size(size)}, more than the {_size(MAX_LINE_BYTES)} one turn may take",
                          path, no)
                    continue
                try:
                    yield no, raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    r.add(f"not UTF-8 text ({e.reason} at column {e.start + 1})", path, no)
    except OSError as e:
        r.add(f"cannot read: {e.strerror or e}", path)


def _read_rows(r: _Reader, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, row) per turn record; a JSON array file (old Hub layout) counts items as lines."""
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix == ".json":
        text = r.read_text(path)
        if text is None:
            return []
        try:
            data = strict_json.loads(text)
        except json.JSONDecodeError as e:
            r.add(f"bad JSON: {e.msg} (column {e.colno})", path, e.lineno)
            return []
        if not isinstance(data, list):
            r.add(f"expected a JSON array of turns, got {type(data).__name__}", path)
            return []
        items = list(enumerate(data, 1))
    else:
        items = []
        for no, raw in _lines(r, path):
            if not raw.strip():
                continue
            try:
                items.append((no, strict_json.loads(raw)))
            except json.JSONDecodeError as e:
                r.add(f"bad JSON line: {e.msg} (column {e.colno})", path, no)
    for no, obj in items:
        if not isinstance(obj, dict):
            r.add(f"expected a JSON object per turn, got {type(obj).__name__}", path, no)
            continue
        ti = obj.get("turn_index", obj.get("turn_id"))
        if r.not_json(obj, path, no, ti if isinstance(ti, int) and not isinstance(ti, bool) else None):
            continue  # reported by field; the turn is not read (as a line that is not JSON)
        rows.append((no, obj))
    return rows


def _expected_dims(meta: BenchmarkMeta, categories: list[str]) -> list[str]:
    dims = list(meta.core_dimensions)
    for c in categories:
        for d in meta.category_dimensions.get(c, []):
            if d not in dims:
                dims.append(d)
    return dims


def _turns(r: _Reader, meta: BenchmarkMeta,
           speaker: str | None) -> tuple[list[Turn], dict[int, str], Path | None, dict[int, int]]:
    """Validated turns, turn -> audio source (Hub layout), the file they came from and turn -> line."""
    native = r.folder / "turns.jsonl"
    hub = r.folder / "metadata.jsonl"
    old_hub = r.folder / "benchmark" / "turns.json"
    path = next((p for p in (native, hub, old_hub) if p.is_file()), None)
    if path is None:
        found = r.find("turns.jsonl")  # a companion may carry the turns too
        if found is None:
            r.add("no turns: expected turns.jsonl (or a Hub metadata.jsonl)", r.folder / "turns.jsonl")
            return [], {}, None, {}
        path = found
    is_hub = path.name != "turns.jsonl"
    before_read = len(r.problems)
    rows = _read_rows(r, path)
    if not rows and len(r.problems) == before_read:
        r.add("no turns in the file (a benchmark needs at least one)", path)
    sources: dict[int, str] = {}
    if is_hub:
        rows, sources = _merge_speakers(r, rows, path, speaker)
    turns: list[Turn] = []
    seen: dict[int, int] = {}
    for no, row in rows:
        if is_hub:
            row = _hub_row(r, row, path, no)
        ti = row.get("turn_index")
        tnum = ti if isinstance(ti, int) and not isinstance(ti, bool) else None
        before = len(r.problems)
        try:
            turn = Turn.model_validate(row)
        except ValidationError as e:
            r.validation(e, path, no, tnum)
            continue
        if len(r.problems) > before:
            continue
        if turn.turn_index in seen:
            r.add(f"duplicate turn_index (also on line {seen[turn.turn_index]})", path, no, turn.turn_index,
                  "turn_index")
            continue
        seen[turn.turn_index] = no
        if "dimensions" not in row:
            turn = turn.model_copy(update={"dimensions": _expected_dims(meta, turn.categories)})
        _check_turn(r, meta, turn, path, no)
        turns.append(turn)
    turns.sort(key=lambda t: t.turn_index)
    if turns and len(r.problems) == before_read:
        gaps = sorted(set(range(turns[-1].turn_index + 1)) - set(seen))
        if gaps:
            shown = ", ".join(map(str, gaps[:10])) + (f" … ({len(gaps)} in all)" if len(gaps) > 10 else "")
            r.add(f"turn indices must run 0..{len(turns) - 1} without gaps; missing {shown}", path, None, None,
                  "turn_index")
    return turns, sources, path, seen


def _merge_speakers(r: _Reader, rows: list[tuple[int, dict[str, Any]]], path: Path,
                    speaker: str | None) -> tuple[list[tuple[int, dict[str, Any]]], dict[int, str]]:
    """Hub metadata has one row per (turn, recording); keep one row per turn and pick its audio."""
    by_turn: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    order: list[Any] = []
    for no, row in rows:
        key = row.get("turn_id", row.get("turn_index"))
        if key not in by_turn:
            order.append(key)
        by_turn.setdefault(key, []).append((no, row))
    out: list[tuple[int, dict[str, Any]]] = []
    sources: dict[int, str] = {}
    for key in order:
        group = by_turn[key]
        no, first = group[0]
        files = {str(row.get("speaker") or _speaker_of(row.get("file_name", ""))): row.get("file_name")
                 for _, row in group if row.get("file_name")}
        row = dict(first)
        chosen: str | None = None
        if speaker is not None and speaker != TTS:
            chosen = files.get(speaker)
            if chosen is None:
                r.add(f"no recording by speaker '{speaker}' (have: {', '.join(sorted(files)) or 'none'})",
                      path, no, key if isinstance(key, int) else None, "speaker")
        elif row.get("audio_file"):
            chosen = row["audio_file"]
        elif TTS in files:
            chosen = files[TTS]
        elif isinstance(key, int) and (r.folder / f"audio/turn_{key:03d}.wav").is_file():
            chosen = f"audio/turn_{key:03d}.wav"
        elif files and speaker is None:  # asked for TTS (`tts`), a human recording never stands in
            chosen = files[sorted(files)[0]]
        if chosen:
            row["audio_file"] = chosen
            if isinstance(key, int):
                spk = _speaker_of(chosen)
                sources[key] = "recorded" if spk == "tts" else f"human:{spk}"
        out.append((no, row))
    return out, sources


def _inside(folder: Path, rel: str) -> bool:
    """A path the data names stays in its folder: judged lexically (Hub snapshots are symlinks
    into the cache's blob store, so resolving would call every one of them outside)."""
    p = Path(rel)
    if p.is_absolute():
        p = Path(os.path.normpath(p))
        return p.is_relative_to(Path(os.path.normpath(folder.absolute())))
    parts = Path(os.path.normpath(p)).parts
    return bool(parts) and parts[0] != ".."


def _speaker_of(file_name: str) -> str:
    parts = file_name.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == REAL_AUDIO else TTS


def speaker_wav(speaker: str, turn_index: int) -> str:
    """Where a human speaker's recording of a turn sits in a benchmark folder (either layout)."""
    return f"{REAL_AUDIO}/{speaker}/turn_{turn_index:03d}.wav"


def speakers_in(folders: Iterable[Path]) -> list[str]:
    """The human speakers with recordings in these folders: `real_audio/<speaker>/` holding WAVs,
    or named by a Hub `metadata.jsonl` row."""
    found: set[str] = set()
    for folder in folders:
        root = folder / REAL_AUDIO
        if root.is_dir():
            found.update(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.wav")))
        meta = folder / "metadata.jsonl"
        if meta.is_file():
            try:
                lines = meta.read_text(encoding="utf-8").splitlines()
            except OSError:
                lines = []
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    spk = str(row.get("speaker") or _speaker_of(str(row.get("file_name") or "")))
                    if spk != TTS:
                        found.add(spk)
    return sorted(found)


def _speaker_turns(r: _Reader, bench: Benchmark, speaker: str, fallbacks: Iterable[Path],
                   lines: dict[int, int], turns_path: Path | None) -> tuple[Benchmark, dict[int, str]]:
    """Our layout (turns.jsonl) read for a human speaker: each turn's WAV is the speaker's
    `real_audio/<speaker>/turn_NNN.wav`, in the folder or in a folder holding its audio (the
    downloaded Hub snapshot); a turn without one is a problem (TTS never stands in)."""
    turns, sources, missing = [], {}, []
    places = [bench.root, *fallbacks] if bench.root is not None else list(fallbacks)
    for t in bench.turns:
        rel = speaker_wav(speaker, t.turn_index)
        place = next((p for p in places if (p / rel).is_file()), None)
        if place is None:
            missing.append(t)
        else:
            t = t.model_copy(update={"audio_file": rel if place == bench.root else str((place / rel).resolve())})
            sources[t.turn_index] = f"human:{speaker}"
        turns.append(t)
    if missing and len(missing) == len(bench.turns):  # none at all: one line, not one per turn
        have = speakers_in(places)
        r.add(f"no recordings by speaker '{speaker}' ({REAL_AUDIO}/{speaker}/turn_NNN.wav; speakers here: "
              f"{', '.join([TTS, *have])})", bench.root)
    else:
        for t in missing:
            r.add(f"no recording by speaker '{speaker}' ({speaker_wav(speaker, t.turn_index)})", turns_path,
                  lines.get(t.turn_index), t.turn_index, "speaker")
    return bench.model_copy(update={"turns": turns}), sources


def _check_turn(r: _Reader, meta: BenchmarkMeta, turn: Turn, path: Path, line: int) -> None:
    ti = turn.turn_index
    if turn.audio_file is not None and not _inside(r.folder, turn.audio_file):
        r.add(f"{turn.audio_file!r} is outside the benchmark folder (use a path relative to it, e.g. "
              f"audio/turn_{ti:03d}.wav)", path, line, ti, "audio_file")
    for field, message in duplex_cues.cue_problems(r.folder, turn, inside=_inside):
        r.add(message, path, line, ti, field)
    if not turn.input.strip():
        r.add("empty", path, line, ti, "input")
    if not turn.golden_text.strip():
        r.add("empty", path, line, ti, "golden_text")
    if r.meta_declared and meta.category_dimensions:
        for c in turn.categories:
            if c not in meta.category_dimensions:
                r.add(f"category '{c}' is not in benchmark.json category_dimensions", path, line, ti, "categories")
    want = _expected_dims(meta, turn.categories)
    if r.meta_declared and set(turn.dimensions) != set(want):
        r.add(f"{turn.dimensions} disagree with the categories (expected {want})", path, line, ti, "dimensions")
    rfc, resp = turn.required_function_call, turn.function_call_response
    if isinstance(rfc, list):
        if not rfc:
            r.add("empty list (use null for no call)", path, line, ti, "required_function_call")
        if isinstance(resp, list) and len(resp) != len(rfc):
            r.add(f"{len(resp)} responses for {len(rfc)} expected calls", path, line, ti, "function_call_response")


def _check_calls(r: _Reader, turns: list[Turn], tools: list[Tool], path: Path | None,
                 lines: dict[int, int]) -> None:
    """Expected calls must name a tool and use its parameters."""
    by_name = {t.name: t for t in tools}
    for turn in turns:
        for i, call in enumerate(turn.expected_calls):
            field = "required_function_call" + (f"[{i}]" if isinstance(turn.required_function_call, list) else "")
            tool = by_name.get(call.name)
            if tool is None:
                r.add(f"calls '{call.name}', which is not in tools.json", path, lines.get(turn.turn_index),
                      turn.turn_index, field + ".name")
                continue
            props = tool.parameters.get("properties") or {}
            if props:
                for arg in call.args:
                    if arg not in props:
                        r.add(f"argument '{arg}' is not a parameter of {call.name}", path,
                              lines.get(turn.turn_index), turn.turn_index, f"{field}.args.{arg}")
            for arg in call.flexible_args:
                if props and arg not in props:
                    r.add(f"flexible argument '{arg}' is not a parameter of {call.name}", path,
                          lines.get(turn.turn_index), turn.turn_index, f"{field}.flexible_args")


def _tools(r: _Reader) -> list[Tool]:
    path = r.find("tools.json")
    if path is None:
        r.add("missing (the tools the model is given: [{name, description, parameters}])", r.folder / "tools.json")
        return []
    data = r.read_json(path, items="tools")
    if data is None:
        return []
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]  # tolerate {"tools": [...]}
    if not isinstance(data, list):
        r.add(f"expected a JSON array of tools, got {type(data).__name__}", path)
        return []
    tools: list[Tool] = []
    for i, item in enumerate(data):
        if isinstance(item, dict) and item.get("type") == "function" and isinstance(item.get("function"), dict):
            item = item["function"]  # OpenAI chat-completions shape
        try:
            tool = Tool.model_validate(item)
        except ValidationError as e:
            label = f"tools[{i}]" + (f" ({item.get('name')})" if isinstance(item, dict) and item.get("name") else "")
            for err in e.errors():
                r.add(_message(err), path, None, None, _loc(err["loc"], label))
            continue
        where = f"tools[{i}] ({tool.name}).parameters"
        for at, keyword in portable_tools.unportable(tool.parameters):
            r.add(portable_tools.message(keyword), path, None, None, f"{where}.{at}.{keyword}")
        if _schema_problems(r, tool.parameters, path, where):
            pass
        elif tool.parameters.get("type") != "object":
            r.add(f"parameters must be a JSON Schema object (\"type\": \"object\"), got {tool.parameters.get('type')!r}",
                  path, None, None, f"tools[{i}] ({tool.name}).parameters.type")
        else:
            props = tool.parameters.get("properties", {})
            for req in tool.parameters.get("required", []):
                if req not in props:
                    r.add(f"required parameter '{req}' is not in properties", path, None, None, f"{where}.required")
        if any(t.name == tool.name for t in tools):
            r.add(f"duplicate tool name '{tool.name}'", path, None, None, f"tools[{i}].name")
            continue
        tools.append(tool)
    return tools


_JSON_TYPES = "array, boolean, integer, null, number, object, string"


def _schema_problems(r: _Reader, schema: dict[str, Any], path: Path, where: str) -> bool:
    """Check a tool's parameters against the JSON Schema metaschema (the draft its `$schema`
    names, else 2020-12); each error becomes a problem at its place in the schema."""
    import jsonschema  # deferred: jsonschema takes ~0.1 s to import: only when a benchmark is read

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(cls.META_SCHEMA).iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors:
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        if err.absolute_path and err.absolute_path[-1] == "type" and err.validator == "anyOf":
            msg = f"{json.dumps(err.instance)[:40]} is not a JSON Schema type ({_JSON_TYPES})"
        else:
            msg = err.message if len(err.message) <= 120 else err.message[:117] + "..."
        r.add(f"not valid JSON Schema: {msg}", path, None, None, where + loc)
    return bool(errors)


def _meta(r: _Reader, defaults: dict[str, Any] | None, is_hub: bool) -> BenchmarkMeta:
    path = r.find("benchmark.json")
    fallback = BenchmarkMeta(**{"name": r.name, **(defaults or {}),
                                "category_dimensions": DEFAULT_CATEGORY_DIMENSIONS})
    if path is None:
        if not is_hub:
            r.add("missing (name, description, turn_count, core_dimensions, category_dimensions)",
                  r.folder / "benchmark.json")
        return fallback
    data = r.read_json(path)
    if data is None:
        return fallback
    if not isinstance(data, dict):
        r.add(f"expected a JSON object, got {type(data).__name__}", path)
        return fallback
    try:
        meta = BenchmarkMeta.model_validate(data)
        r.meta_declared = True
        return meta
    except ValidationError as e:
        for err in e.errors():
            r.add(_message(err), path, None, None, _loc(err["loc"]))
        return fallback


def _sources(r: _Reader, turns: list[Turn]) -> dict[int, str]:
    path = r.folder / SOURCES_FILE
    if not path.is_file():
        return {}
    data = r.read_json(path)
    if not isinstance(data, dict):
        if data is not None:
            r.add(f"expected an object turn -> source, got {type(data).__name__}", path)
        return {}
    out: dict[int, str] = {}
    for k, v in data.items():
        try:
            out[int(k)] = str(v)
        except ValueError:
            r.add(f"key '{k}' is not a turn number", path)
    return out


def ships_audio(bench: Benchmark, synthesized: set[int]) -> bool:
    """Whether the benchmark comes with recordings of its own: a turn's recorded (not synthesised)
    WAV is there, a turn names a WAV other than the conventional `audio/turn_NNN.wav` (a Hub row:
    `real_audio/<speaker>/turn_NNN.wav`), or its `audio/` folder holds a WAV no turn plays. Then
    every turn's WAV must be there (a missing one is a broken copy or a wrong path: BROKEN). Only a
    benchmark that ships no audio at all (five of the six shared copies: no `audio/` folder,
    conventional names) is audio to synthesise (docs/benchmarks.md)."""
    present = {t.turn_index for t in bench.turns if bench.has_audio(t)}
    if present - synthesized:
        return True
    if any(t.audio_file is not None and not _conventional(t.audio_file, t.turn_index) for t in bench.turns
           if t.turn_index not in present):
        return True
    folder = bench.root / "audio" if bench.root is not None else None
    if folder is None or not folder.is_dir():
        return False
    played = {p.resolve() for t in bench.turns if (p := bench.audio_path(t)) is not None and t.turn_index in present}
    played |= {p.resolve() for t in bench.turns for c in t.duplex if (p := bench.cue_path(c)) is not None}
    return any(f.suffix.lower() == ".wav" and f.resolve() not in played for f in folder.iterdir())


def _conventional(audio_file: str, turn: int) -> bool:
    *folders, name = audio_file.split("/")
    return name == f"turn_{turn:03d}.wav" and (folders == ["audio"] or len(folders) == 2 and folders[0] == REAL_AUDIO)


def _check_audio(r: _Reader, bench: Benchmark, lines: dict[int, int], turns_path: Path | None,
                 require_audio: bool, synthesized: set[int], limit_s: float) -> None:
    """A WAV missing from a benchmark that ships audio (`ships_audio`) is a problem; one that ships
    none, or only synthesised audio so far, just means "synthesise the rest" (unless
    `require_audio`). A present WAV must be one `run` can use: readable, not longer than
    `limit_s`, not silent."""
    paths = {t.turn_index: bench.audio_path(t) for t in bench.turns}
    present = {t.turn_index for t in bench.turns if bench.has_audio(t)}
    strict = require_audio or ships_audio(bench, synthesized)
    outside = {t.turn_index for t in bench.turns if t.audio_file is not None and not _inside(r.folder, t.audio_file)}
    for i, p in paths.items():
        if i not in present:
            why = file_state.absent_reason(p) if p is not None else f"{file_state.MISSING}: {p}"
            if (strict or file_state.broken(why)) and i not in outside:  # (a path outside the folder is its own problem already)
                r.add(why, turns_path, lines.get(i), i, "audio_file")
            continue
        assert p is not None
        problem = _wav_problem(p, limit_s)
        if problem:
            r.add(f"{p}: {problem}", turns_path, lines.get(i), i, "audio_file")
    for t in bench.turns:  # its duplex cues' WAVs, by the same rules
        for field, message in duplex_cues.cue_audio_problems(bench, t, strict=strict, inside=_inside,
                                                             wav_problem=lambda p: _wav_problem(p, limit_s)):
            r.add(message, turns_path, lines.get(t.turn_index), t.turn_index, field)


def _wav_problem(path: Path, limit_s: float) -> str | None:
    """Why a turn's WAV cannot be run (the same rules `run` applies), or None; cached per file version."""
    try:
        st = path.stat()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    return _wav_verdict(str(path), st.st_mtime_ns, st.st_size, limit_s)


@functools.lru_cache(maxsize=1024)
def _wav_verdict(path: str, mtime_ns: int, size: int, limit_s: float) -> str | None:
    try:
        fmt = audio.wav_info(path)  # the header only: length is known before any sample is read
        if fmt.duration_s > limit_s:
            return (f"{_clock(fmt.duration_s)} long, more than the {_clock(limit_s)} one turn may take "
                    "(ARENA_TUI_MAX_TURN_AUDIO_S)")
        loudest = audio.wav_loudest_dbfs(path)
    except audio.AudioError as e:
        return f"unusable WAV: {e.reason}"
    if loudest < SILENT_DBFS:
        return (f"silent (loudest {loudest:.0f} dBFS, below {SILENT_DBFS:.0f}): the model would be scored on a "
                "turn nobody spoke")
    return None


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def load_folder(folder: str | os.PathLike[str], *, name: str | None = None, source: str = "local",
                meta_defaults: dict[str, Any] | None = None, companion_dirs: Iterable[Path] = (),
                speaker: str | None = None, require_audio: bool = False,
                audio_fallbacks: Iterable[tuple[Path, str]] = (),
                max_turn_audio: float | None = None) -> Benchmark:
    """Load one benchmark folder (either layout); raises BenchmarkError listing every problem.

    Turns without a WAV in the folder take one from `audio_fallbacks` ((folder, source label),
    e.g. the downloaded Hub snapshot) and then from the synthesis overlay.

    Missing audio is a problem unless the benchmark ships no audio at all (`ships_audio`; or
    `require_audio`): that one loads and reports 0/N so it can be synthesised.
    `max_turn_audio` (seconds) defaults to `max_turn_audio_s()`.
    """
    folder = Path(folder).expanduser()
    bname = name or (meta_defaults or {}).get("name") or folder.name
    r = _Reader(folder, bname, companion_dirs)
    if not folder.is_dir():
        r.add("no such folder", folder)
        raise BenchmarkError(bname, r.problems)
    is_hub = not (folder / "turns.jsonl").is_file() and (
        (folder / "metadata.jsonl").is_file() or (folder / "benchmark" / "turns.json").is_file())
    meta = _meta(r, meta_defaults, is_hub)
    if name is None and meta.name:
        r.name = bname = meta.name
        for p in r.problems:
            p.benchmark = bname
    turns, hub_sources, turns_path, lines = _turns(r, meta, speaker)
    tools = _tools(r)
    if tools or not any(p.path and p.path.name == "tools.json" for p in r.problems):
        _check_calls(r, turns, tools, turns_path, lines)
    prompt_path = r.find("system_prompt.txt")
    prompt = ""
    if prompt_path is None:
        r.add("missing (the system instruction sent to the model)", folder / "system_prompt.txt")
    else:
        prompt = r.read_text(prompt_path) or ""
        if not prompt.strip() and not any(p.path == prompt_path for p in r.problems):
            r.add("empty", prompt_path)
    kb_path = r.find("knowledge_base.txt")
    kb = (r.read_text(kb_path) or "") if kb_path is not None else ""
    if turns and meta.turn_count is not None and meta.turn_count != len(turns) and not r.problems:
        r.add(f"turn_count is {meta.turn_count} but {len(turns)} turns were read",
              r.find("benchmark.json") or turns_path, None, None, "turn_count")
    bench = Benchmark(meta=meta, turns=turns, tools=tools, system_prompt=prompt, knowledge_base=kb,
                      root=folder, source=source)
    extra: dict[int, str] = {}
    fallbacks = list(audio_fallbacks)
    if speaker not in (None, TTS) and not is_hub:  # a human speaker: their recordings or a problem
        bench, extra = _speaker_turns(r, bench, str(speaker), [alt for alt, _ in fallbacks], lines, turns_path)
    else:
        for alt, label in [*fallbacks, (audio_overlay_dir(bname), "synth:unknown")]:
            bench, got = _apply_overlay(bench, alt, label)
            extra.update(got)
    sources = {**hub_sources, **_sources(r, turns), **extra}
    synthesized = {i for i, s in sources.items() if s.startswith("synth:")}
    try:
        limit_s = max_turn_audio if max_turn_audio is not None else max_turn_audio_s()
    except ValueError as e:
        r.add(str(e))
        raise BenchmarkError(bname, r.problems) from None
    _check_audio(r, bench, lines, turns_path, require_audio, synthesized, limit_s)
    for t in bench.turns:
        if bench.has_audio(t):
            sources.setdefault(t.turn_index, "recorded")
        else:
            sources.pop(t.turn_index, None)
    if r.problems:
        raise BenchmarkError(bname, r.problems)
    return bench.model_copy(update={"audio_source": sources})


def _apply_overlay(bench: Benchmark, overlay: Path, default: str = "synth:unknown") -> tuple[Benchmark, dict[int, str]]:
    """Turns without audio in the folder take it from another folder of the same layout: the
    Hugging Face snapshot of the benchmark, or the overlay synthesised for read-only folders."""
    if bench.root is None or not overlay.is_dir() or overlay.resolve() == bench.root.resolve():
        return bench, {}
    try:
        raw = json.loads((overlay / SOURCES_FILE).read_text())
        declared = raw if isinstance(raw, dict) else {}
    except (OSError, json.JSONDecodeError):
        declared = {}
    turns, sources = [], {}
    for t in bench.turns:
        rel = t.audio_file if t.audio_file and not os.path.isabs(t.audio_file) else f"audio/turn_{t.turn_index:03d}.wav"
        alt = overlay / rel
        if not bench.has_audio(t) and alt.is_file():
            t = t.model_copy(update={"audio_file": str(alt.resolve())})
            sources[t.turn_index] = str(declared.get(str(t.turn_index), default))
        t = duplex_cues.from_overlay(t, bench.root, overlay)
        turns.append(t)
    return bench.model_copy(update={"turns": turns}), sources
