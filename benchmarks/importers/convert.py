"""One benchmark of a Python layout written as our folder, and what was mapped, converted and left out.

Their turn dicts become `turns.jsonl` rows: `input`, `golden_text`, `required_function_call`,
`function_call_response`, `categories` (or a single `category`), `subcategory`, `flexible_args`
and `tool_use_guidance` keep their names; `turn_index` is the turn's place in the list;
`dimensions` are the turns file's CORE_DIMENSIONS plus, sorted, what CATEGORY_DIMENSIONS adds
for the turn's categories (the reference's `get_relevant_dimensions` rule; our three core ones
when the file has none, as in the original eval); `audio_file` is ours, `audio/turn_NNN.wav`,
filled from the config's audio folder (the original eval plays `audio_dir/turn_NNN.wav`, not the
stale paths its turns name). Anything else is left out and said. The folder is checked by the
loader before it takes its place: a problem other than audio refuses the benchmark, a WAV
missing is written and shows as BROKEN (never as audio to synthesise).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from arena_tui.spine.benchmark import CORE_DIMENSIONS

from ..loader import BenchmarkError, Problem, load_folder
from .confine import Folder
from .layouts import Source, find_benchmarks, read_benchmark
from .static import Unreadable
from .wavs import bring, extra_wavs, turn_wav

KEPT = ("input", "golden_text", "required_function_call", "function_call_response", "categories",
        "subcategory", "flexible_args", "tool_use_guidance")
READ = ("category", "dimensions", "scoring_dimensions", "audio_file", "turn_index")  # used, not copied
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
MARK = "imported_from"  # benchmark.json: written by an import (a later import may replace it)


class Refused(Exception):
    """A benchmark that cannot be imported; the message says why in one line (more lines: `details`)."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


@dataclass
class Imported:
    """What one import wrote, for the line that reports it."""

    name: str
    layout: str
    folder: Path
    turns: int
    tools: int
    audio: int  # turns whose WAV was there
    prompt_chars: int
    kb_chars: int | None
    mapped: list[str]
    left_out: list[str]
    converted: dict[str, list[int]] = field(default_factory=dict)  # the format they came in -> turns
    as_is: list[str] = field(default_factory=list)  # WAVs copied unread, and why
    extra: list[str] = field(default_factory=list)  # their WAVs no turn uses
    not_read: list[str] = field(default_factory=list)  # a WAV or speaker folder left unread, and why (a link out, a FIFO)
    speakers: dict[str, int] = field(default_factory=dict)  # human speaker -> turns recorded
    audio_problems: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        audio = f"audio {self.audio}/{self.turns}"
        n_conv = sum(len(t) for t in self.converted.values())
        if n_conv:
            audio += f" ({n_conv} converted to 24 kHz mono)"
        parts = [f"{self.turns} turns", f"{self.tools} tools", audio]
        parts += [f"{spk} {n}/{self.turns}" for spk, n in self.speakers.items()]
        parts.append(f"prompt {self.prompt_chars:,} chars")
        parts.append(f"KB {self.kb_chars:,} chars" if self.kb_chars is not None else "no KB")
        text = f"{self.name} ({self.layout}): {', '.join(parts)}; mapped {', '.join(self.mapped)}"
        if self.left_out:
            text += f"; left out: {'; '.join(self.left_out)}"
        if self.extra:
            shown = ", ".join(self.extra[:6]) + (f" … ({len(self.extra)} in all)" if len(self.extra) > 6 else "")
            text += f"; extra WAVs not imported: {shown}"
        return f"{text} → {self.folder}"

    def notices(self) -> list[str]:
        out = [f"notice: {self.name}: turn{'s' if len(t) > 1 else ''} {_turns(t)}: {fmt} converted to 24 kHz mono PCM16"
               for fmt, t in self.converted.items()]
        return out + [f"notice: {self.name}: {x}" for x in self.as_is] + \
            [f"notice: {self.name}: not read: {x}" for x in self.not_read]


def _turns(indices: list[int]) -> str:
    return ", ".join(map(str, indices[:10])) + (f" … ({len(indices)} in all)" if len(indices) > 10 else "")


@dataclass
class Rows:
    """A layout's turns as ours: the rows, benchmark.json's dimensions, what was mapped and left out."""

    rows: list[dict[str, Any]]
    core: list[str]
    categories: dict[str, Any]
    mapped: list[str]
    left_out: list[str]


def turn_rows(src: Source) -> Rows:
    """Our turns.jsonl rows from the layout's turn dicts (see the module docstring for the mapping)."""
    core = list(src.core_dimensions or CORE_DIMENSIONS)
    cats = {str(k): list(v) if isinstance(v, list) else v for k, v in (src.category_dimensions or {}).items()}
    rows: list[dict[str, Any]] = []
    mapped: list[str] = []
    left: Counter[str] = Counter()
    stale_audio: list[str] = []
    added: list[str] = []
    for i, turn in enumerate(src.turns):
        if not isinstance(turn, dict):
            raise Refused(f"{src.name}: not imported: {src.turns_file}: turns[{i}] is a {type(turn).__name__}, "
                          "not a dict")
        row: dict[str, Any] = {"turn_index": i}
        for key in KEPT:
            if key in turn:
                row[key] = turn[key]
                if key not in mapped:
                    mapped.append(key)
        if "categories" not in turn and isinstance(turn.get("category"), str):
            row["categories"] = [turn["category"]]
            if "category → categories" not in mapped:
                mapped.append("category → categories")
        listed = row.get("categories")
        categories: list[Any] = listed if isinstance(listed, list) else []
        for c in categories:
            if isinstance(c, str) and cats and c not in cats:
                cats[c] = []
                added.append(c)
        own = turn.get("dimensions", turn.get("scoring_dimensions"))
        if isinstance(own, list):
            row["dimensions"] = own
        else:
            extra = sorted({d for c in categories if isinstance(c, str) for d in cats.get(c) or [] if d not in core})
            row["dimensions"] = core + extra
        row["audio_file"] = f"audio/{turn_wav(i)}"
        theirs = turn.get("audio_file")
        if theirs is not None and theirs != row["audio_file"]:
            stale_audio.append(str(theirs))
        if "turn_index" in turn and turn["turn_index"] != i:
            left["turn_index"] += 1
        for key in turn:
            if key not in KEPT and key not in READ:
                left[str(key)] += 1
        rows.append(row)
    why = {"turn_index": ": the place in the list is used"}
    notes = [f"field '{k}' ({n} turn{'s' if n != 1 else ''}{why.get(k, '')})" for k, n in left.items()]
    if stale_audio:
        notes.append(f"audio_file of {len(stale_audio)} turns (theirs, e.g. {stale_audio[0]}; the WAVs are the "
                     "config's audio folder's turn_NNN.wav)")
    if added:
        notes.append(f"categories {', '.join(sorted(set(added)))} are not in CATEGORY_DIMENSIONS: kept with no extra "
                     "dimension")
    if src.core_dimensions is None:
        mapped.append(f"dimensions: {', '.join(core)} (no CORE_DIMENSIONS)")
    else:
        mapped.append("dimensions from CORE_DIMENSIONS + CATEGORY_DIMENSIONS")
    return Rows(rows, core, cats, mapped, notes)


def write(src: Source, out_dir: Path, limit_s: float) -> Imported:
    """Write `src` as `out_dir/<name>/`, replacing an earlier import of it; Refused says why not."""
    if not _NAME.fullmatch(src.name) or src.name in (".", ".."):
        raise Refused(f"{src.folder.name}: not imported: its name {src.name!r} cannot be a folder name")
    final = out_dir / src.name
    if final.exists() and not _was_imported(final):
        raise Refused(f"{src.name}: not imported: {final} exists and was not written by an import (move it, or "
                      "choose another --out)")
    conv = turn_rows(src)
    rows, left_out = conv.rows, list(conv.left_out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".import-{src.name}-", dir=out_dir))
    try:
        meta = {"name": src.name, "description": src.description, **({"hf_repo": src.hf_repo} if src.hf_repo else {}),
                "turn_count": len(rows), "core_dimensions": conv.core, "category_dimensions": conv.categories,
                MARK: {"layout": src.layout, "path": str(src.folder)}}
        _text(tmp / "benchmark.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        _text(tmp / "turns.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        _text(tmp / "tools.json", json.dumps([t.spec for t in src.tools], indent=2, ensure_ascii=False) + "\n")
        _text(tmp / "system_prompt.txt", src.system_prompt)
        if src.knowledge_base is not None:
            _text(tmp / "knowledge_base.txt", src.knowledge_base)
        else:
            left_out.append("no data/knowledge_base.txt: the judge gets no knowledge base")
        done = Imported(name=src.name, layout=src.layout, folder=final, turns=len(rows), tools=len(src.tools),
                        audio=0, prompt_chars=len(src.system_prompt),
                        kb_chars=len(src.knowledge_base) if src.knowledge_base is not None else None,
                        mapped=conv.mapped, left_out=left_out + src.left_out)
        done.audio = _audio(src, src.audio_dir, tmp / "audio", len(rows), limit_s, done, "")
        if src.real_audio_dir is not None and src.real_audio_dir.is_dir():
            given = Folder(src.root)
            for spk in sorted(d for d in src.real_audio_dir.iterdir() if d.is_dir()):
                if not given.inside(spk):  # a speaker folder linked out of the given folder: not even listed
                    done.not_read.append(given.outside(spk))
                    continue
                n = _audio(src, spk, tmp / "real_audio" / spk.name, len(rows), limit_s, done, f"real_audio/{spk.name}/")
                if n:
                    done.speakers[spk.name] = n
        done.audio_problems = _check(tmp, src.name)
        _replace(tmp, final)
        return done
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _audio(src: Source, folder: Path, dest: Path, turns: int, limit_s: float, done: Imported, label: str) -> int:
    """Bring each turn's `turn_NNN.wav` of `folder`; the count brought. A file leading out of the
    given folder (a link) or that is no regular file (a FIFO would block the read) is not read,
    and said (`not_read`)."""
    brought = 0
    given = Folder(src.root)
    for i in range(turns):
        wav = folder / turn_wav(i)
        if not os.path.lexists(wav):
            continue
        if (why := given.problem(wav)) is not None:
            done.not_read.append(why)
            continue
        got = bring(wav, dest / turn_wav(i), limit_s)
        brought += 1
        if got.converted:
            done.converted.setdefault(f"{label}{got.converted}" if label else got.converted, []).append(i)
        if got.problem:
            done.as_is.append(f"{label}{turn_wav(i)}: {got.problem} (copied as it is)")
    done.extra += [f"{label}{x}" for x in extra_wavs(folder, turns)]
    return brought


def _check(folder: Path, name: str) -> list[Problem]:
    """The loader's verdict on the folder written: audio problems are returned (the benchmark is
    written and listed BROKEN), any other refuses it."""
    try:
        load_folder(folder, name=name, source="imported")
    except BenchmarkError as e:
        other = [p for p in e.problems if p.field != "audio_file"]
        if other:
            shown = [str(p).replace(str(folder), name) for p in other]
            raise Refused(f"{name}: not imported: {len(other)} problem{'s' if len(other) != 1 else ''} in what "
                          "its files say", shown) from None
        return list(e.problems)
    return []


def _was_imported(folder: Path) -> bool:
    try:
        meta = json.loads((folder / "benchmark.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and MARK in meta


def _replace(tmp: Path, final: Path) -> None:
    """`tmp` becomes `final`; an earlier import there is removed only once the new one is in place."""
    old = None
    if final.exists():
        old = final.with_name(f".replaced-{final.name}-{os.getpid()}")
        os.replace(final, old)
    os.replace(tmp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def import_all(path: Path, out_dir: Path, limit_s: float) -> Iterator[Imported | Refused]:
    """Each benchmark of the layout at `path` written under `out_dir`, one result each in order
    (one refused does not stop the others); LayoutError when `path` holds none."""
    names: set[str] = set()
    for folder in find_benchmarks(path):
        try:
            src = read_benchmark(folder, path)
            if src.name in names:
                raise Refused(f"{folder.name}: not imported: its name {src.name!r} is another benchmark's here")
            names.add(src.name)
            yield write(src, out_dir, limit_s)
        except Unreadable as e:
            yield Refused(f"{folder.name}: not imported: {e}")
        except Refused as e:
            yield e
        except OSError as e:  # a full disk, no permission, a file in the way (what was half written is gone)
            yield Refused(f"{folder.name}: not imported: {e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
