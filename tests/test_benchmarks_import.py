"""`arena-tui benchmarks import`: the original eval's and the reference harness's Python layouts
(written here by tests/py_layouts.py, never taken from their repositories) become our folders,
read without running a line of them, and what comes out runs against the simulator."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine import audio
from benchmarks.importers.convert import Imported, Refused, import_all
from benchmarks.loader import load_folder
from benchmarks.registry import load_benchmark

from .py_layouts import DEMO, demo_prompt_parts, demo_rows, original_eval, reference

LIMIT_S = 300.0


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("arena-tui")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "turns.jsonl").read_text().splitlines()]


def test_original_layout_imports_and_runs_every_turn_against_the_simulator(tmp_path: Path, capsys) -> None:
    tree = original_eval(tmp_path / "aiewf", stereo_16k=(1, 4))
    out = tmp_path / "out"
    assert main(["benchmarks", "import", str(tree), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    line = next(ln for ln in said.splitlines() if ln.startswith("aiwf_demo "))
    assert "(original eval): 10 turns, 3 tools, audio 10/10 (2 converted to 24 kHz mono)" in line, line
    assert "left out: audio_file of 10 turns (theirs, e.g. turns_audio/turn_000.wav" in line, line
    assert "extra WAVs not imported: turn_001-short-yes.wav" in line and line.endswith(f"{out / 'aiwf_demo'}: ready")
    assert "notice: aiwf_demo: turns 1, 4: 16 kHz stereo converted to 24 kHz mono PCM16" in said, said

    folder = out / "aiwf_demo"
    meta = json.loads((folder / "benchmark.json").read_text())
    assert meta["name"] == "aiwf_demo" and meta["turn_count"] == 10 and meta["category_dimensions"] == {}
    assert meta["description"] == "A test benchmark in their layout" and meta["imported_from"]["layout"] == "original eval"
    ours = _rows(folder)
    for mine, theirs in zip(ours, demo_rows(), strict=True):
        for f in ("turn_index", "input", "golden_text", "required_function_call", "function_call_response"):
            assert mine.get(f) == theirs.get(f), (mine["turn_index"], f)
        assert mine["audio_file"] == theirs["audio_file"]  # ours, not their stale turns_audio/ path
        assert mine["dimensions"] == ["kb_grounding", "instruction_following", "tool_use_correct"]
        assert "categories" not in mine
    assert json.loads((folder / "tools.json").read_text()) == json.loads((DEMO / "tools.json").read_text())
    before, kb, after = demo_prompt_parts()
    assert (folder / "system_prompt.txt").read_text() == before + kb + after
    assert (folder / "knowledge_base.txt").read_text() == kb
    for i in (1, 4):  # converted: 24 kHz mono PCM16, the same length of speech
        fmt = audio.wav_info(folder / "audio" / f"turn_{i:03d}.wav")
        assert (fmt.sample_rate, fmt.channels, fmt.bits, fmt.is_float) == (24_000, 1, 16, False)
        assert fmt.duration_s == pytest.approx(audio.wav_info(DEMO / "audio" / f"turn_{i:03d}.wav").duration_s, abs=0.01)
    assert (folder / "audio" / "turn_000.wav").read_bytes() == (DEMO / "audio" / "turn_000.wav").read_bytes()
    assert not (folder / "audio" / "turn_001-short-yes.wav").exists()

    got = _cli("--db", str(tmp_path / "runs.db"), "run", "aiwf_demo", "--data", str(out), "--model", "sim",
               "--speed", "20", "--headless", "--judge", "none")
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr
    summary = next(ln for ln in got.stdout.splitlines() if ln.startswith("turns 10/10 done: "))
    counts = dict((s.split()[0], int(s.split()[1])) for s in summary.split(";")[0].removeprefix("turns 10/10 done: ").split(", "))
    assert set(counts) <= {"ok", "ended_session"} and sum(counts.values()) == 10, summary  # every turn answered


def test_reference_layout_maps_categories_dimensions_and_speakers(tmp_path: Path) -> None:
    tree = reference(tmp_path / "ref", speaker="person1")
    results = list(import_all(tree, tmp_path / "out", LIMIT_S))
    assert len(results) == 1 and isinstance(results[0], Imported), results
    done = results[0]
    folder = done.folder
    assert done.layout == "reference harness" and done.audio == 0 and done.speakers == {"person1": 10}
    assert "categories" in done.mapped and "dimensions from CORE_DIMENSIONS + CATEGORY_DIMENSIONS" in done.mapped
    assert _rows(folder) == demo_rows()  # field by field, the dimensions as their rule makes them
    meta = json.loads((folder / "benchmark.json").read_text())
    demo_meta = json.loads((DEMO / "benchmark.json").read_text())
    assert meta["category_dimensions"] == demo_meta["category_dimensions"] and meta["hf_repo"] == "someone/bike-bench"
    bench = load_folder(folder, speaker="person1")
    assert bench.audio_present() == 10  # their human speaker's recordings, in real_audio/person1/
    assert load_folder(folder).audio_present() == 0  # no TTS audio shipped: synthesise it (not BROKEN)


def test_an_import_without_out_is_found_by_name(tmp_path: Path, capsys) -> None:
    """The default folder is the user's benchmarks folder, where `benchmarks` and `run` look."""
    tree = reference(tmp_path / "ref", with_audio=True)
    assert main(["benchmarks", "import", str(tree / "benchmarks" / "bike_bench")]) == 0
    out = capsys.readouterr().out
    assert "bike_bench (reference harness): 10 turns, 3 tools, audio 10/10" in out
    assert out.splitlines()[-1] == "run one: arena-tui run bike_bench --model sim"
    assert Path(os.environ["ARENA_TUI_BENCHMARKS"], "bike_bench", "turns.jsonl").is_file()
    bench = load_benchmark("bike_bench")
    assert bench.source == "imported" and bench.audio_present() == 10
    assert main(["benchmarks"]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("bike_bench "))
    assert row.split()[1:4] == ["10", "10/10", "imported"] and row.endswith("ready"), row
    # imported again: the earlier import is replaced; a folder not made by an import never is
    assert main(["benchmarks", "import", str(tree)]) == 0
    capsys.readouterr()
    mine = Path(os.environ["ARENA_TUI_BENCHMARKS"]) / "hand_made"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    (tree / "benchmarks" / "bike_bench" / "config.py").write_text(
        (tree / "benchmarks" / "bike_bench" / "config.py").read_text().replace("'bike_bench'", "'hand_made'"))
    assert main(["benchmarks", "import", str(tree)]) == 2
    assert "was not written by an import" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


RAN = "ran.txt"  # what running any of the refused code would write

REFUSALS = [
    # (file under benchmarks/bike_bench edited, the edit, the line's expected fragments: first the file named)
    ("turns.py", lambda s: s + f"\nopen({RAN!r}, 'w').write('x')\nturns.append({{'input': 'x'}})\n",
     ["turns.py:", "cannot read turns", "turns is changed by `turns.append("]),
    ("turns.py", lambda s: s.replace("turns = [", "def load():\n    import json\n    open(" + repr(RAN) + ", 'w')\n"
                                     "    return json.load(open('t.json'))\n\n\nturns = load()\n_unused = ["),
     ["turns.py:", "cannot read load()", "its body does more than bind names and return (`import json`)"]),
    ("system.py", lambda s: s.replace('_PREAMBLE = ', 'import os\n_PREAMBLE = os.environ["PROMPT"] + '),
     ["system.py:", "cannot read _PREAMBLE", "`os.environ['PROMPT']` is subscript code, not a literal"]),
    ("system.py", lambda s: s.replace('_TOOLS_SECTION = f', 'VERSION = 2\n_TOOLS_SECTION = f"v{VERSION}" + f'),
     ["system.py:", "cannot read _TOOLS_SECTION", "is an f-string with an expression"]),
    ("system.py", lambda s: s.replace('data_dir = Path(__file__).parent / "data"',
                                      'data_dir = Path(__file__).parent.parent.parent.parent / "etc"'),
     ["system.py:", "cannot read _load_knowledge_base()", "outside"]),
    ("tools.py", lambda s: s.replace("standard_tools=[", "standard_tools=[helper, ") + "\n\ndef helper(x):\n    return x\n",
     ["tools.py:", "cannot read helper", "helper is a function, not a value"]),
    ("tools.py", lambda s: s.replace("required=['date']", "required=REQUIRED"),
     ["tools.py:", "cannot read check_repair_slots_function", "REQUIRED is not defined in this file"]),
    ("config.py", lambda s: s.replace("    turns = turns", "    turns = sorted(turns)"),
     ["config.py:", "cannot read BenchmarkConfig.turns", "calls sorted"]),
    ("turns.py", lambda s: s + "\nturns = [\n", ["turns.py:", "cannot read the file: not Python ('[' was never closed)"]),
    # bounded time and memory: names doubling names (2^43 characters; 2^30 nested lists) are refused early,
    # named by what was asked for
    ("system.py", lambda s: s.replace("_PREAMBLE = ", "D0 = 'xxxxxxxx'\n" + "".join(
        f"D{i} = D{i - 1} + D{i - 1}\n" for i in range(1, 41)) + "_PREAMBLE = D40 + "),
     ["config.py:", "cannot read BenchmarkConfig.system_instruction", "more than 200,000 expressions"]),
    ("system.py", lambda s: s.replace("_PREAMBLE = ", f"D0 = {'x' * (1 << 20)!r}\n" + "".join(
        f"D{i} = D{i - 1} + D{i - 1}\n" for i in range(1, 6)) + "_PREAMBLE = D5 + "),
     ["system.py:", "cannot read D5", "grows to 33,554,432 characters, more than 16,777,216"]),
    ("turns.py", lambda s: s.replace("turns = [", "L0 = [", 1) + "".join(f"\nL{i} = [L{i - 1}, L{i - 1}]"
                                                                         for i in range(1, 31)) + "\nturns = L30\n",
     ["config.py:", "cannot read BenchmarkConfig.turns", "more than 200,000 expressions"]),
]


@pytest.mark.parametrize("case", range(len(REFUSALS)))
def test_what_cannot_be_read_is_refused_by_name_and_never_run(tmp_path: Path, case: int) -> None:
    file, edit, fragments = REFUSALS[case]
    tree = reference(tmp_path / "ref")
    path = tree / "benchmarks" / "bike_bench" / file
    path.write_text(edit(path.read_text()))
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        results = list(import_all(tree, tmp_path / "out", LIMIT_S))
    finally:
        os.chdir(cwd)
    assert len(results) == 1 and isinstance(results[0], Refused), results
    message = str(results[0])
    assert "\n" not in message and message.startswith("bike_bench: not imported: benchmarks/bike_bench/"), message
    assert all(f in message for f in fragments), message
    assert re.search(rf"{re.escape(fragments[0])}\d+: ", message), message  # the file and the line
    assert not (tmp_path / RAN).exists() and not any(tmp_path.rglob(RAN))  # nothing of theirs ran
    assert not (tmp_path / "out" / "bike_bench").exists()


def test_a_prompt_of_many_pieces_is_read(tmp_path: Path) -> None:
    """`a + b + …` is read without a level of recursion per piece (their prompts join a few; 3,000 here)."""
    tree = reference(tmp_path / "ref")
    system = tree / "benchmarks" / "bike_bench" / "system.py"
    system.write_text(system.read_text() + "\nsystem_instruction = " + " + ".join(["'ab'"] * 3000) + "\n")
    done = list(import_all(tree, tmp_path / "out", LIMIT_S))[0]
    assert isinstance(done, Imported), done
    assert (done.folder / "system_prompt.txt").read_text() == "ab" * 3000


def test_a_valid_expression_deeper_than_the_parser_follows_is_said_so_never_not_python(tmp_path: Path) -> None:
    """Issue 41 item 9: `a + a + …` 12,000 times is Python, nested deeper than this Python's parser follows
    (it raises RecursionError); it was refused as "not Python (RecursionError)"."""
    tree = reference(tmp_path / "ref")
    turns = tree / "benchmarks" / "bike_bench" / "turns.py"
    turns.write_text(turns.read_text() + "\nDEEP = " + " + ".join(["'a'"] * 12_000) + "\n")
    [refused] = list(import_all(tree, tmp_path / "out", LIMIT_S))
    assert isinstance(refused, Refused), refused
    assert str(refused) == ("bike_bench: not imported: benchmarks/bike_bench/turns.py: cannot read the file: "
                            "an expression in it is nested too deep to read"), str(refused)


def test_a_refusal_is_one_line_and_the_others_still_import(tmp_path: Path) -> None:
    tree = reference(tmp_path / "ref", with_audio=True)
    reference(tree, "broken_bench")
    system = tree / "benchmarks" / "broken_bench" / "system.py"
    system.write_text(system.read_text().replace("system_instruction = _PREAMBLE", "system_instruction = str(1) + _PREAMBLE"))
    got = _cli("benchmarks", "import", str(tree), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    errors = got.stderr.strip().splitlines()
    assert len(errors) == 2, got.stderr
    assert re.fullmatch(r"error: broken_bench: not imported: benchmarks/broken_bench/system\.py:\d+: cannot read "
                        r"system_instruction without running it: `str\(1\)` calls str, which is not a function of "
                        r"this tree", errors[0]), errors[0]
    assert errors[1] == "arena-tui: benchmarks import: 1 of 2 not imported (said above)"
    assert "bike_bench (reference harness): 10 turns" in got.stdout and (tmp_path / "out" / "bike_bench").is_dir()


def test_a_missing_wav_is_imported_broken_never_synthesize(tmp_path: Path, capsys) -> None:
    tree = original_eval(tmp_path / "aiewf")
    (tree / "benchmarks" / "_shared" / "audio" / "turn_003.wav").unlink()
    out = tmp_path / "out"
    assert main(["benchmarks", "import", str(tree), "--out", str(out)]) == 2
    said = capsys.readouterr()
    assert "audio 9/10" in said.out and "aiwf_demo: BROKEN: 1 problem" in said.out, said.out
    assert "turn 3: field 'audio_file': WAV missing" in said.err and "synthesize" not in said.out + said.err
    assert "1 imported BROKEN" in said.err.splitlines()[-1]
    assert main(["benchmarks", "--data", str(out)]) == 2
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("aiwf_demo "))
    assert "BROKEN" in row and "synthesize" not in row, row


def test_import_says_what_is_wrong_with_its_arguments(tmp_path: Path, capsys) -> None:
    assert main(["benchmarks", "import"]) == 2
    assert "give the PATH" in capsys.readouterr().err
    assert main(["benchmarks", "import", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["benchmarks", "import", str(tmp_path)]) == 2
    assert "no benchmark found (expected benchmarks/<name>/config.py" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("")
    reference(tmp_path / "ref")
    assert main(["benchmarks", "import", str(tmp_path / "ref"), "--out", str(tmp_path / "a_file" / "x")]) == 2
    assert f"error: bike_bench: not imported: Not a directory: {tmp_path / 'a_file' / 'x'}" in capsys.readouterr().err
    assert main(["benchmarks", "demo_bench", "--out", str(tmp_path)]) == 2
    assert "are for `benchmarks import PATH" in capsys.readouterr().err


def test_turn_fields_are_mapped_and_the_rest_said(tmp_path: Path) -> None:
    """A single `category`, a category the map lacks, a field we have no place for, a stray turn_index."""
    from benchmarks.importers.convert import turn_rows
    from benchmarks.importers.layouts import REFERENCE, Source

    turns = [{"input": "a", "golden_text": "b", "category": "ambiguous_entity", "speaker_note": "x"},
             {"input": "c", "golden_text": "d", "categories": ["basic_qa", "made_up"], "turn_index": 7,
              "speaker_note": "y", "tool_use_guidance": "call nothing"}]
    src = Source(name="t", folder=tmp_path, root=tmp_path, layout=REFERENCE, turns=turns, tools=[], system_prompt="p",
                 knowledge_base=None, audio_dir=tmp_path, real_audio_dir=None, core_dimensions=["kb_grounding"],
                 category_dimensions={"ambiguous_entity": ["ambiguity_handling"], "basic_qa": []}, turns_file="turns.py")
    got = turn_rows(src)
    assert [r["turn_index"] for r in got.rows] == [0, 1]
    assert got.rows[0]["categories"] == ["ambiguous_entity"]
    assert got.rows[0]["dimensions"] == ["kb_grounding", "ambiguity_handling"]
    assert got.rows[1]["dimensions"] == ["kb_grounding"] and got.rows[1]["tool_use_guidance"] == "call nothing"
    assert "speaker_note" not in got.rows[0] and got.categories["made_up"] == []
    assert "category → categories" in got.mapped
    assert "field 'speaker_note' (2 turns)" in got.left_out
    assert "field 'turn_index' (1 turn: the place in the list is used)" in got.left_out
    assert any("made_up are not in CATEGORY_DIMENSIONS" in x for x in got.left_out), got.left_out
