"""Benchmarks as data: the six shared ones, broken copies, the Hub layout, our demo, the CLI listing."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from arena_tui.spine import audio
from arena_tui.cli import main
from benchmarks.loader import BenchmarkError, load_folder
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import ExpectedCall
from benchmarks.registry import KNOWN, available_benchmarks, canonical_name, hf_repo_for, named_benchmarks

from .hf_fake import hub_rows_from_shared

SIX = {"conversation_bench": (75, 9), "appointment_bench": (25, 4), "assistant_bench": (31, 7),
       "event_bench": (29, 6), "grocery_bench": (30, 5), "product_bench": (31, 6)}


def _copy(shared: Path, name: str, dest: Path) -> Path:
    """A writable copy of a shared benchmark (the shared folder is read-only)."""
    out = dest / name
    shutil.copytree(shared / name, out)
    for p in [out, *out.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, rows: list) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


@pytest.mark.parametrize("name", list(SIX))
def test_the_six_load_with_every_field(shared_data: Path, name: str) -> None:
    bench = load_benchmark(name, shared_data)
    turns, tools = SIX[name]
    assert bench.name == name and bench.source == "local" and bench.root == shared_data / name
    assert len(bench.turns) == turns == bench.meta.turn_count == KNOWN[name].turns
    assert len(bench.tools) == tools and all(t.parameters["type"] == "object" for t in bench.tools)
    assert bench.meta.hf_repo == hf_repo_for(name)
    assert bench.system_prompt == (shared_data / name / "system_prompt.txt").read_text()
    assert bench.knowledge_base == (shared_data / name / "knowledge_base.txt").read_text()
    raw = _lines(shared_data / name / "turns.jsonl")
    assert [t.turn_index for t in bench.turns] == [r["turn_index"] for r in raw] == list(range(turns))
    for r, t in zip(raw, bench.turns):
        for key, value in r.items():
            got = getattr(t, key)
            if key == "required_function_call" and value is not None:
                got = ([c.model_dump(exclude_unset=True) for c in got] if isinstance(got, list)
                       else got.model_dump(exclude_unset=True))
            assert got == value, f"{name} turn {t.turn_index} field {key}"
    with_audio = name == "conversation_bench"
    assert all((bench.audio_path(t).is_file()) == with_audio for t in bench.turns)
    assert bench.audio_source == ({t.turn_index: "recorded" for t in bench.turns} if with_audio else {})


def test_list_shaped_calls_and_responses(shared_data: Path) -> None:
    t = load_benchmark("conversation_bench", shared_data).turn(35)
    assert isinstance(t.required_function_call, list) and len(t.expected_calls) == len(t.expected_responses) >= 2
    assert all(isinstance(c, ExpectedCall) for c in t.expected_calls)


def test_broken_copy_reports_one_clear_error_per_problem(shared_data: Path, tmp_path: Path, capsys) -> None:
    folder = _copy(shared_data, "conversation_bench", tmp_path)
    rows = (folder / "turns.jsonl").read_text().splitlines()
    rows[3] = rows[3][:-10]  # bad JSON line (turn 3)
    r5 = json.loads(rows[5])
    del r5["golden_text"]  # missing field
    rows[5] = json.dumps(r5)
    r7 = json.loads(rows[7])
    r7["categories"] = "basic_qa"  # wrong type
    rows[7] = json.dumps(r7)
    (folder / "turns.jsonl").write_text("\n".join(rows) + "\n")
    (folder / "audio" / "turn_009.wav").unlink()  # missing WAV
    with pytest.raises(BenchmarkError) as err:
        load_folder(folder)
    problems = err.value.problems
    assert len(problems) == 4, [str(p) for p in problems]
    by_line = {p.line: p for p in problems}
    assert by_line[4].turn is None and "bad JSON line" in by_line[4].message and by_line[4].path == folder / "turns.jsonl"
    assert (by_line[6].turn, by_line[6].field, by_line[6].message) == (5, "golden_text", "missing (required)")
    assert (by_line[8].turn, by_line[8].field) == (7, "categories") and "valid list" in by_line[8].message
    assert (by_line[10].turn, by_line[10].field) == (9, "audio_file") and "turn_009.wav" in by_line[10].message
    assert all(p.benchmark == "conversation_bench" for p in problems)

    # the CLI: one line per problem on stderr, exit status 2, no traceback
    assert main(["benchmarks", "--data", str(tmp_path)]) == 2
    out = capsys.readouterr()
    errors = [line for line in out.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 4 and "Traceback" not in out.err
    assert "turns.jsonl:6: turn 5: field 'golden_text': missing (required)" in out.err
    assert "BROKEN: 4 problems" in out.out


def test_bad_tools_json_and_cross_file_checks(shared_data: Path, tmp_path: Path) -> None:
    folder = _copy(shared_data, "appointment_bench", tmp_path)
    tools = json.loads((folder / "tools.json").read_text())
    del tools[1]["name"]  # a tool without a name: its calls now name an unknown tool
    tools[2]["parameters"] = {"type": "array"}
    (folder / "tools.json").write_text(json.dumps(tools))
    rows = _lines(folder / "turns.jsonl")
    rows[0]["golden_txt"] = "typo"  # unknown field
    rows[1]["dimensions"] = ["kb_grounding"]  # disagrees with its categories
    _write_lines(folder / "turns.jsonl", rows)
    with pytest.raises(BenchmarkError) as err:
        load_folder(folder)
    text = [str(p) for p in err.value.problems]
    assert any("tools.json: field 'tools[1].name': missing (required)" in t for t in text)
    assert any("parameters must be a JSON Schema object" in t for t in text)
    assert any("turn 0: field 'golden_txt': unknown field (typo?)" in t for t in text)
    assert any("turn 1: field 'dimensions'" in t and "state_tracking" in t for t in text)
    assert any("which is not in tools.json" in t for t in text)

    (folder / "tools.json").write_text('[{"name": "x",}]')
    with pytest.raises(BenchmarkError, match=r"tools.json:1: bad JSON"):
        load_folder(folder)


def test_missing_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "turns.jsonl").write_text('{"turn_index": 0, "input": "hi", "golden_text": "hello"}\n')
    with pytest.raises(BenchmarkError) as err:
        load_folder(tmp_path / "mine")
    names = {p.path.name for p in err.value.problems}
    assert names == {"benchmark.json", "tools.json", "system_prompt.txt"}


def test_hub_layout_metadata_jsonl(shared_data: Path, tmp_path: Path) -> None:
    """The Hub's encoding: JSON-in-string calls, comma-joined lists, one row per speaker."""
    folder = tmp_path / "snapshot"
    (folder / "audio").mkdir(parents=True)
    src = shared_data / "event_bench"
    _write_lines(folder / "metadata.jsonl", hub_rows_from_shared(src))
    for f in ("tools.json", "system_prompt.txt", "knowledge_base.txt"):
        shutil.copy(src / f, folder / f)
    bench = load_folder(folder, name="event_bench", source="huggingface", meta_defaults={"turn_count": 29})
    ours = load_benchmark("event_bench", shared_data)
    assert [t.model_dump(exclude={"audio_file"}) for t in bench.turns] == \
        [t.model_dump(exclude={"audio_file"}) for t in ours.turns]
    assert bench.meta.category_dimensions["ambiguous_entity"] == ["ambiguity_handling"]

    # the older Hub layout: the same rows as one JSON array in benchmark/turns.json
    old = tmp_path / "old"
    (old / "benchmark").mkdir(parents=True)
    (old / "benchmark" / "turns.json").write_text(json.dumps(hub_rows_from_shared(src, speakers=("p1",))))
    for f in ("tools.json", "system_prompt.txt"):
        shutil.copy(src / f, old / "benchmark" / f)
    assert len(load_folder(old, name="event_bench").turns) == 29

    # a bad JSON string inside a Hub row is located like any other problem
    rows = hub_rows_from_shared(src, speakers=("p1",))
    rows[1]["required_function_call"] = '{"name": "search_venues", "args": '
    _write_lines(folder / "metadata.jsonl", rows)
    with pytest.raises(BenchmarkError, match=r"metadata.jsonl:2: turn 1: field 'required_function_call': not valid JSON"):
        load_folder(folder, name="event_bench")


def test_demo_bench_is_built_in_with_audio() -> None:
    bench = load_benchmark("demo_bench")
    assert bench.source == "builtin" and len(bench.turns) == 10 and 2 <= len(bench.tools) <= 3
    cats = {c for t in bench.turns for c in t.categories}
    assert {"basic_qa", "tool_use", "long_range_memory", "implicit_correction", "ambiguous_entity"} <= cats
    assert any(isinstance(t.required_function_call, list) for t in bench.turns)
    assert any(t.flexible_args or any(c.flexible_args for c in t.expected_calls) for t in bench.turns)
    assert any(isinstance(t.function_call_response, dict) and t.function_call_response.get("status") == "error"
               for t in bench.turns)
    assert bench.knowledge_base.strip() in bench.system_prompt and 1000 <= len(bench.knowledge_base) <= 2200
    for t in bench.turns:
        assert "state_tracking" in t.dimensions or not {"long_range_memory", "implicit_correction",
                                                        "error_recovery"} & set(t.categories)
        assert len(t.golden_text) < 200
        path = bench.audio_path(t)
        frames, fmt = audio.read_wav(path)
        assert (fmt.sample_rate, fmt.channels, fmt.bits, fmt.is_float) == (24_000, 1, 16, False)
        pcm = audio.load_pcm16(path)
        assert 0.5 < len(pcm) / 24_000 < 10 and audio.rms_dbfs(pcm) > -40
        assert bench.audio_source[t.turn_index] == "synth:espeak"


def test_cli_lists_the_six_with_turn_counts(shared_data: Path, capsys) -> None:
    assert main(["benchmarks", "--data", str(shared_data)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out[1:] if line.strip() and not line.startswith("(")}
    for name, (turns, _) in SIX.items():
        assert rows[name][1] == str(turns) and rows[name][3] == "local"
    assert rows["conversation_bench"][2] == "75/75" and rows["grocery_bench"][2] == "0/30"
    assert rows["demo_bench"][1:4] == ["10", "10/10", "(10"]


def test_own_benchmark_folder_is_listed_and_loaded_by_name(shared_data: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copytree(Path(__file__).resolve().parent.parent / "benchmarks" / "demo", data / "bike_shop")
    meta = json.loads((data / "bike_shop" / "benchmark.json").read_text())
    (data / "bike_shop" / "benchmark.json").write_text(json.dumps({**meta, "name": "bike_shop"}))
    infos = {i.name: i for i in available_benchmarks(data)}
    assert infos["bike_shop"].turns == 10 and infos["bike_shop"].source == "local"
    assert infos["bike_shop"].audio_present == 10
    assert infos["conversation_bench"].source is None  # not in this --data, not downloaded
    assert load_benchmark("bike_shop", data).name == "bike_shop"
    with pytest.raises(BenchmarkError, match="not found .* run `arena-tui fetch grocery_bench`"):
        load_benchmark("grocery_bench", data)


def test_names() -> None:
    assert hf_repo_for("conversation_bench") == "arcada-labs/conversation-bench"
    assert canonical_name("arcada-labs/product-bench") == "product_bench"
    assert canonical_name("grocery-bench") == "grocery_bench"
    assert canonical_name("my-own") == "my-own"


def test_synthesized_partial_audio_is_not_broken(shared_data: Path, tmp_path: Path) -> None:
    folder = _copy(shared_data, "grocery_bench", tmp_path)
    (folder / "audio").mkdir()
    tone = (8000 * np.sin(np.arange(2400) * 2 * np.pi * 440 / 24_000)).astype(np.int16)  # silence is refused
    audio.write_wav(folder / "audio" / "turn_000.wav", tone, 24_000)
    (folder / "audio" / "sources.json").write_text('{"0": "synth:espeak"}')
    bench = load_folder(folder)
    assert bench.audio_source == {0: "synth:espeak"}
    (folder / "audio" / "sources.json").unlink()  # now it looks like a recorded set with 29 WAVs missing
    with pytest.raises(BenchmarkError) as err:
        load_folder(folder)
    assert len(err.value.problems) == 29


def test_all_means_the_six_hub_benchmarks() -> None:
    """One rule for `all` (fetch): alone and in any case; other names as `canonical_name` reads them."""
    assert named_benchmarks(["all"]) == named_benchmarks(["ALL"]) == list(KNOWN)
    assert named_benchmarks(["conversation-bench", "demo_bench"]) == ["conversation_bench", "demo_bench"]
    assert named_benchmarks(["all", "demo_bench"]) == ["all", "demo_bench"]  # not a list of its own: fetch refuses it
