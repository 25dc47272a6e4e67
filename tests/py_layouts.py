"""Small trees in the original eval's and the reference harness's Python layouts, written by a test
from our demo benchmark (its turns, tools, prompt, knowledge base and WAVs), never from their repos.

- `original_eval(root)`: kwindla/aiewf-eval's shape: `benchmarks/_shared/{turns,tools}.py` and
  `audio/turn_NNN.wav` (one of them 16 kHz stereo, one extra take), `benchmarks/<name>/config.py`
  importing them, `prompts/system.py` joining its strings around the knowledge base file.
- `reference(root)`: Design-Arena/audio-agent-bench's: `benchmarks/<name>/{config,system,tools,turns}.py`
  with CORE_DIMENSIONS / CATEGORY_DIMENSIONS in turns.py and its own `audio/` (optional).
"""

from __future__ import annotations

import json
import pprint
import shutil
from pathlib import Path

import numpy as np

from arena_tui.spine import audio

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo"
KB_MARK = "KNOWLEDGE BASE"


def demo_rows() -> list[dict]:
    return [json.loads(line) for line in (DEMO / "turns.jsonl").read_text().splitlines() if line.strip()]


def demo_prompt_parts() -> tuple[str, str, str]:
    """(what comes before the knowledge base, the knowledge base file, what comes after) of the demo's prompt."""
    prompt = (DEMO / "system_prompt.txt").read_text()
    kb = (DEMO / "knowledge_base.txt").read_text()
    at = prompt.index(kb.strip())
    return prompt[:at], kb, prompt[at + len(kb.strip()):]


def tools_py() -> str:
    """The demo's tools as Pipecat FunctionSchema calls in a ToolsSchema, as both layouts write them."""
    tools = json.loads((DEMO / "tools.json").read_text())
    out = ["from pipecat.adapters.schemas.function_schema import FunctionSchema",
           "from pipecat.adapters.schemas.tools_schema import ToolsSchema", ""]
    for t in tools:
        p = t["parameters"]
        out += [f"# {t['name']}", f"{t['name']}_function = FunctionSchema(", f"    name={t['name']!r},",
                f"    description={t['description']!r},", f"    properties={pprint.pformat(p['properties'], indent=4)},",
                f"    required={p.get('required', [])!r},", ")", ""]
    names = ", ".join(f"{t['name']}_function" for t in tools)
    out.append(f"ToolsSchemaForTest = ToolsSchema(\n    standard_tools=[{names}]\n)\n")
    return "\n".join(out)


def system_py(kb_path: str) -> str:
    """A system.py like theirs: literal strings (the tail an f-string without expressions) joined
    around a function that reads the knowledge base."""
    before, _, after = demo_prompt_parts()
    literal_braces = after.replace("{", "{{").replace("}", "}}")
    return "\n".join([
        '"""System instruction."""', "from pathlib import Path", "",
        f"_PREAMBLE = {before!r}", "", f"_TOOLS_SECTION = f{literal_braces!r}", "", "",
        "def _load_knowledge_base() -> str:", '    """Load the knowledge base from the data directory."""',
        f"    data_dir = {kb_path}", '    kb_path = data_dir / "knowledge_base.txt"',
        '    return kb_path.read_text(encoding="utf-8")', "", "",
        "system_instruction = _PREAMBLE + _load_knowledge_base() + _TOOLS_SECTION", ""])


CONFIG = '''"""Configuration."""
from pathlib import Path

{imports}


class BenchmarkConfig:
    """Configuration for the benchmark (the method is never read: its f-string has expressions)."""

    name = {name!r}
    description = ("A test benchmark "
                   "in their layout")
{extra}
    turns = turns
    tools_schema = ToolsSchemaForTest
    system_instruction = system_instruction
{audio}

    @classmethod
    def get_audio_path(cls, turn_index: int) -> Path:
        return cls.audio_dir / f"turn_{{turn_index:03d}}.wav"
'''


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_wav_as(src: Path, dst: Path, rate: int, channels: int) -> None:
    """`src` re-encoded at `rate` with `channels` (the same speech)."""
    pcm = audio.load_pcm16(src, rate)
    audio.write_wav(dst, np.repeat(pcm[:, None], channels, axis=1) if channels > 1 else pcm, rate, channels)


def original_eval(root: Path, name: str = "aiwf_demo", *, stereo_16k: tuple[int, ...] = (1,),
                  extra_take: bool = True) -> Path:
    """The original eval's layout under `root` (returned): stale `audio_file` paths in the turns,
    the real WAVs in `_shared/audio/`."""
    shared = root / "benchmarks" / "_shared"
    keep = ("input", "golden_text", "required_function_call", "function_call_response")
    turns = [{**{k: r[k] for k in keep if k in r}, "audio_file": f"turns_audio/turn_{r['turn_index']:03d}.wav"}
             for r in demo_rows()]
    _write(root / "benchmarks" / "__init__.py", '"""Benchmarks."""\n')
    _write(shared / "__init__.py", "from .turns import turns\nfrom .tools import ToolsSchemaForTest\n\n"
           '__all__ = ["turns", "ToolsSchemaForTest"]\n')
    _write(shared / "turns.py", f"turns = {pprint.pformat(turns, width=100)}\n")
    _write(shared / "tools.py", tools_py())
    (shared / "audio").mkdir(parents=True, exist_ok=True)
    for r in demo_rows():
        src, dst = DEMO / r["audio_file"], shared / "audio" / f"turn_{r['turn_index']:03d}.wav"
        if r["turn_index"] in stereo_16k:
            write_wav_as(src, dst, 16_000, 2)
        else:
            shutil.copyfile(src, dst)
    if extra_take:
        shutil.copyfile(DEMO / "audio" / "turn_001.wav", shared / "audio" / "turn_001-short-yes.wav")
    bench = root / "benchmarks" / name
    _write(bench / "__init__.py", "from .config import BenchmarkConfig\n")
    _write(bench / "config.py", CONFIG.format(
        imports="from benchmarks._shared import turns, ToolsSchemaForTest\nfrom .prompts.system import system_instruction",
        name=name, extra="", audio='\n    audio_dir = Path(__file__).parent.parent / "_shared" / "audio"'))
    _write(bench / "prompts" / "__init__.py", "from .system import system_instruction\n")
    _write(bench / "prompts" / "system.py", system_py('Path(__file__).parent.parent / "data"'))
    (bench / "data").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DEMO / "knowledge_base.txt", bench / "data" / "knowledge_base.txt")
    return root


def reference(root: Path, name: str = "bike_bench", *, with_audio: bool = False, speaker: str | None = None) -> Path:
    """The reference harness's layout under `root` (returned): categories and the dimension maps in turns.py."""
    bench = root / "benchmarks" / name
    meta = json.loads((DEMO / "benchmark.json").read_text())
    drop = ("turn_index", "dimensions")
    turns = [{k: v for k, v in r.items() if k not in drop} for r in demo_rows()]
    _write(root / "benchmarks" / "__init__.py", '"""Benchmarks."""\n')
    _write(bench / "__init__.py", "from .config import BenchmarkConfig\n")
    _write(bench / "turns.py", '"""Turns."""\n\n' + f"turns = {pprint.pformat(turns, width=100)}\n\n"
           f"CORE_DIMENSIONS = {meta['core_dimensions']!r}\n\nCATEGORY_DIMENSIONS = {meta['category_dimensions']!r}\n\n\n"
           "def get_relevant_dimensions(turn: dict) -> list[str]:\n    dims = list(CORE_DIMENSIONS)\n"
           "    extra = set()\n    for cat in turn.get('categories', []):\n"
           "        extra.update(CATEGORY_DIMENSIONS.get(cat, []))\n    return dims + sorted(extra)\n")
    _write(bench / "tools.py", tools_py())
    _write(bench / "system.py", system_py('Path(__file__).parent / "data"'))
    _write(bench / "config.py", CONFIG.format(
        imports="from .turns import turns\nfrom .tools import ToolsSchemaForTest\nfrom .system import system_instruction",
        name=name, extra='    hf_repo = "someone/bike-bench"\n',
        audio='\n    _benchmark_dir = Path(__file__).parent\n    audio_dir = _benchmark_dir / "audio"\n'
              '    real_audio_dir = _benchmark_dir / "real_audio"'))
    (bench / "data").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DEMO / "knowledge_base.txt", bench / "data" / "knowledge_base.txt")
    for folder, wanted in (("audio", with_audio), (f"real_audio/{speaker}", speaker is not None)):
        if wanted:
            (bench / folder).mkdir(parents=True, exist_ok=True)
            for r in demo_rows():
                shutil.copyfile(DEMO / r["audio_file"], bench / folder / f"turn_{r['turn_index']:03d}.wav")
    return root
