"""Bad benchmark input refused at load, by file, turn and field, before anything runs: JSON's
non-numbers (NaN, ±Infinity, a number past a double) anywhere in tools.json, turns.jsonl or a Hub
row's JSON string; tool schema keywords some provider cannot take (`$ref`, `oneOf`, …); and a WAV
that is a symlink loop or a link to nothing said as such, not "missing"."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from arena_tui.cli import main
from benchmarks import portable_tools, strict_json
from benchmarks.loader import BenchmarkError, load_folder

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A writable copy of the demo benchmark."""
    folder = tmp_path / "data" / "demo_copy"
    shutil.copytree(DEMO, folder)
    meta = json.loads((folder / "benchmark.json").read_text())
    (folder / "benchmark.json").write_text(json.dumps({**meta, "name": "demo_copy"}))
    return folder


def rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "turns.jsonl").read_text().splitlines() if line.strip()]


def write_rows(folder: Path, rows_: list[dict]) -> None:
    (folder / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_))  # NaN written as NaN


def problems(folder: Path) -> list[str]:
    with pytest.raises(BenchmarkError) as e:
        load_folder(folder)
    return [str(p) for p in e.value.problems]


def first_call_turn(rows_: list[dict]) -> dict:
    return next(r for r in rows_ if r.get("required_function_call"))


def test_strict_json_marks_every_non_number_where_it_sits() -> None:
    data = strict_json.loads('{"a": [1, NaN, {"name": "x", "b": -Infinity}], "c": 1e999, "d": 1.5, "e": Infinity}')
    assert list(strict_json.not_json(data)) == [("a[1]", "NaN"), ("a[2] (x).b", "-Infinity"), ("c", "1e999"),
                                                ("e", "Infinity")]
    assert data["d"] == 1.5 and list(strict_json.not_json(strict_json.loads('{"ok": [0.5, null]}'))) == []


@pytest.mark.parametrize("value,text", [(float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity")])
def test_a_non_number_in_an_expected_calls_arguments_is_refused_by_turn_and_field(bench: Path, value, text) -> None:
    rs = rows(bench)
    turn = first_call_turn(rs)
    rfc = turn["required_function_call"]
    call = rfc[0] if isinstance(rfc, list) else rfc
    arg = next(iter(call["args"]))
    call["args"][arg] = value
    write_rows(bench, rs)
    field = "required_function_call" + ("[0] (" + call["name"] + ")" if isinstance(rfc, list) else "") + f".args.{arg}"
    got = problems(bench)
    assert got == [f"demo_copy: {bench / 'turns.jsonl'}:{rs.index(turn) + 1}: turn {turn['turn_index']}: "
                   f"field '{field}': {strict_json.message(text)}"], got


def test_a_non_number_in_a_tool_result_and_a_huge_number_are_refused(bench: Path) -> None:
    rs = rows(bench)
    turn = first_call_turn(rs)
    turn["function_call_response"] = {"price": float("nan")}
    write_rows(bench, rs)
    lines = (bench / "turns.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"turn_index": 0', '"turn_index": 0, "extra_number": 1e999')
    (bench / "turns.jsonl").write_text("\n".join(lines) + "\n")
    got = problems(bench)
    assert any("turn 0: field 'extra_number': 1e999 is not JSON" in p for p in got), got
    assert any(f"turn {turn['turn_index']}: field 'function_call_response.price': NaN is not JSON" in p for p in got), got


def test_a_non_number_in_tools_json_is_refused_by_tool_and_field(bench: Path) -> None:
    tools = json.loads((bench / "tools.json").read_text())
    name = tools[1]["name"]
    prop = next(iter(tools[1]["parameters"]["properties"]))
    tools[1]["parameters"]["properties"][prop]["maximum"] = float("inf")
    (bench / "tools.json").write_text(json.dumps(tools))
    got = problems(bench)
    assert got == [f"demo_copy: {bench / 'tools.json'}: field 'tools[1] ({name}).parameters.properties.{prop}.maximum': "
                   f"{strict_json.message('Infinity')}"], got


def test_a_hub_rows_json_string_with_nan_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "hub_bench"
    folder.mkdir()
    for name in ("tools.json", "system_prompt.txt"):
        shutil.copy(DEMO / name, folder / name)
    demo = rows(DEMO)
    call = first_call_turn(demo)
    hub = []
    for r in demo:
        row = {"turn_id": r["turn_index"], "input_text": r["input"], "golden_text": r["golden_text"],
               "required_function_call": json.dumps(r.get("required_function_call")),
               "categories": ",".join(r.get("categories", []))}
        if r is call:
            row["function_call_response"] = '{"ok": NaN}'
        hub.append(row)
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in hub))
    got = problems(folder)
    assert any(f"turn {call['turn_index']}: field 'function_call_response.ok': NaN is not JSON" in p for p in got), got


@pytest.mark.parametrize("schema,keyword", [
    ({"$ref": "#/$defs/day"}, "$ref"),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "oneOf"),
    ({"type": "string", "const": "today"}, "const"),
    ({"type": "array", "items": {"type": "string", "allOf": [{"minLength": 1}]}}, "allOf"),
])
def test_a_schema_keyword_some_provider_cannot_take_is_refused_by_name(bench: Path, schema, keyword) -> None:
    tools = json.loads((bench / "tools.json").read_text())
    name = tools[0]["name"]
    prop = next(iter(tools[0]["parameters"]["properties"]))
    tools[0]["parameters"]["properties"][prop] = schema
    tools[0]["parameters"]["$defs"] = {"day": {"type": "string"}}
    (bench / "tools.json").write_text(json.dumps(tools))
    got = problems(bench)
    at = f"tools[0] ({name}).parameters.properties.{prop}" + (".items" if keyword == "allOf" else "") + f".{keyword}"
    assert f"demo_copy: {bench / 'tools.json'}: field '{at}': {portable_tools.message(keyword)}" in got, got
    assert "not taken by every provider" in portable_tools.message(keyword)


def test_what_pipecat_adapts_for_gemini_still_loads(bench: Path) -> None:
    tools = json.loads((bench / "tools.json").read_text())
    prop = next(iter(tools[0]["parameters"]["properties"]))
    tools[0]["parameters"]["properties"][prop].update({"additionalProperties": False, "x-note": "ours"})
    tools[0]["parameters"]["additionalProperties"] = False
    (bench / "tools.json").write_text(json.dumps(tools))
    assert load_folder(bench).tools[0].parameters["properties"][prop]["x-note"] == "ours"


def test_the_portable_keywords_are_the_gemini_clients_own() -> None:
    """`KEYWORDS` is what google-genai's Schema takes (its JSON spellings), less what is not JSON
    Schema (`ref`, `defs`: Gemini's own names) and what Pipecat drops for it (additionalProperties)."""
    from google.genai import types

    fields = {f.alias or name for name, f in types.Schema.model_fields.items()}
    assert portable_tools.KEYWORDS == fields - {"ref", "defs", "additionalProperties"}
    assert portable_tools.DROPPED == {"additionalProperties"}


@pytest.mark.parametrize("kind", ["loop", "dangling", "folder"])
def test_a_wav_that_is_a_symlink_loop_or_leads_nowhere_is_said_as_such(bench: Path, kind: str) -> None:
    wav = bench / "audio" / "turn_001.wav"
    wav.unlink()
    if kind == "loop":
        wav.symlink_to("turn_001b.wav")
        (bench / "audio" / "turn_001b.wav").symlink_to("turn_001.wav")
        said = "WAV is a symlink loop"
    elif kind == "dangling":
        wav.symlink_to("nowhere.wav")
        said = "WAV is a symlink to nothing (nowhere.wav does not exist)"
    else:
        wav.mkdir()
        said = "WAV is a folder, not a file"
    got = problems(bench)  # the demo's audio is synthesised: a plain missing WAV would be "synthesise it"
    assert got == [f"demo_copy: {bench / 'turns.jsonl'}:2: turn 1: field 'audio_file': {said}" + got[0].split(said)[1]], got
    assert str(wav) in got[0] and "WAV missing" not in got[0]


def test_a_wav_longer_than_a_turn_may_take_says_both_spans_as_every_span_reads(bench: Path) -> None:
    """The limit and the WAV's length read as every surface shows a span (`spine.times.duration_text`)."""
    from arena_tui.spine.audio import write_wav

    write_wav(bench / "audio" / "turn_001.wav", np.full(24_000 * 3, 3000, dtype=np.int16), 24_000)
    with pytest.raises(BenchmarkError) as e:
        load_folder(bench, max_turn_audio=2.0)
    (problem,) = [str(p) for p in e.value.problems if p.turn == 1]
    assert problem.endswith("turn_001.wav: 00:03 long, more than the 00:02 one turn may take (ARENA_TUI_MAX_TURN_AUDIO_S)")


def test_a_plain_missing_wav_of_synthesised_audio_is_still_to_synthesise(bench: Path) -> None:
    (bench / "audio" / "turn_001.wav").unlink()
    bench_ = load_folder(bench)
    assert not bench_.has_audio(bench_.turn(1))


def test_run_refuses_it_in_one_line_recording_nothing(bench: Path, tmp_path: Path, capsys) -> None:
    tools = json.loads((bench / "tools.json").read_text())
    tools[0]["parameters"]["properties"][next(iter(tools[0]["parameters"]["properties"]))] = {"$ref": "#/x"}
    (bench / "tools.json").write_text(json.dumps(tools))
    db = tmp_path / "x.db"
    assert main(["--db", str(db), "run", "demo_copy", "--data", str(bench.parent), "--model", "gemini-native-audio",
                 "--fake", "--headless", "--judge", "none"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena-tui: demo_copy: ") and "'$ref' is not taken" in err[0], err
    if db.exists():  # refused before anything was recorded
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'runs'").fetchone()[0] in (0, 1)
            assert not con.execute("SELECT name FROM sqlite_master WHERE name = 'runs'").fetchall() or \
                con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
