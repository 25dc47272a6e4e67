"""Read a benchmark folder into a `Benchmark`, reporting every problem at once.

Two layouts are accepted: ours/the shared copy (`benchmark.json`, `turns.jsonl`, `tools.json`,
`system_prompt.txt`, `knowledge_base.txt`, `audio/turn_NNN.wav`) and the Hugging Face datasets'
(`hub_layout.py`: `metadata.jsonl`, `audio/` TTS and `real_audio/<speaker>/` human recordings).
Files a Hub snapshot lacks (tools, prompt) can come from a companion folder of the same benchmark.

A user hand-writes these files, so nothing stops at the first mistake: each one becomes a
`Problem` naming file, line, turn and field, and all of a benchmark's problems are raised
together in one `BenchmarkError` (`problems.py`). The parts, one module each: reading.py (bounded
reads, problems collected), hub_layout.py, speakers.py, tools_file.py, audio_checks.py (which
audio a benchmark ships, each WAV's verdict), overlay.py (audio from a snapshot or synthesised).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from arena_tui.spine.benchmark import Benchmark, BenchmarkMeta, Turn
from arena_tui.spine.source import TTS

from . import duplex_cues
from .audio_checks import check_audio, max_turn_audio_s
from .hub_layout import hub_row, merge_speakers
from .overlay import apply_overlay, audio_overlay_dir, declared_sources
from .problems import BenchmarkError, Problem, error_text, loc
from .reading import Reader, inside, read_rows
from .speakers import speaker_turns
from .tools_file import check_calls, read_tools

__all__ = ["BenchmarkError", "Problem", "load_folder", "looks_like_benchmark"]

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


def looks_like_benchmark(folder: Path) -> bool:
    return any((folder / f).is_file() for f in ("turns.jsonl", "metadata.jsonl", "benchmark.json",
                                                "benchmark/turns.json"))


def _expected_dims(meta: BenchmarkMeta, categories: list[str]) -> list[str]:
    dims = list(meta.core_dimensions)
    for c in categories:
        for d in meta.category_dimensions.get(c, []):
            if d not in dims:
                dims.append(d)
    return dims


def _turns(r: Reader, meta: BenchmarkMeta,
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
    rows = read_rows(r, path)
    if not rows and len(r.problems) == before_read:
        r.add("no turns in the file (a benchmark needs at least one)", path)
    sources: dict[int, str] = {}
    if is_hub:
        rows, sources = merge_speakers(r, rows, path, speaker)
    turns: list[Turn] = []
    seen: dict[int, int] = {}
    for no, row in rows:
        if is_hub:
            row = hub_row(r, row, path, no)
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


def _check_turn(r: Reader, meta: BenchmarkMeta, turn: Turn, path: Path, line: int) -> None:
    ti = turn.turn_index
    if turn.audio_file is not None and not inside(r.folder, turn.audio_file):
        r.add(f"{turn.audio_file!r} is outside the benchmark folder (use a path relative to it, e.g. "
              f"audio/turn_{ti:03d}.wav)", path, line, ti, "audio_file")
    for field, message in duplex_cues.cue_problems(r.folder, turn, inside=inside):
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


def _meta(r: Reader, defaults: dict[str, Any] | None, is_hub: bool) -> BenchmarkMeta:
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
            r.add(error_text(err), path, None, None, loc(err["loc"]))
        return fallback


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
    r = Reader(folder, bname, companion_dirs)
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
    tools = read_tools(r)
    if tools or not any(p.path and p.path.name == "tools.json" for p in r.problems):
        check_calls(r, turns, tools, turns_path, lines)
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
        bench, extra = speaker_turns(r, bench, str(speaker), [alt for alt, _ in fallbacks], lines, turns_path)
    else:
        for alt, label in [*fallbacks, (audio_overlay_dir(bname), "synth:unknown")]:
            bench, got = apply_overlay(bench, alt, label)
            extra.update(got)
    sources = {**hub_sources, **declared_sources(r, turns), **extra}
    synthesized = {i for i, s in sources.items() if s.startswith("synth:")}
    try:
        limit_s = max_turn_audio if max_turn_audio is not None else max_turn_audio_s()
    except ValueError as e:
        r.add(str(e))
        raise BenchmarkError(bname, r.problems) from None
    check_audio(r, bench, lines, turns_path, require_audio, synthesized, limit_s)
    for t in bench.turns:
        if bench.has_audio(t):
            sources.setdefault(t.turn_index, "recorded")
        else:
            sources.pop(t.turn_index, None)
    if r.problems:
        raise BenchmarkError(bname, r.problems)
    return bench.model_copy(update={"audio_source": sources})
