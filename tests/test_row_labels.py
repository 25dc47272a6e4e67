"""The one rule of row labels (`arena_tui.spine.labels`): what rows shown together share goes to a
header, what tells them apart follows the model (condition, effort, speaker, judge first) and is
never cut; a label too long drops whole parts from the least telling end and names them; rows whose
whole names differ read differently at every width."""

from __future__ import annotations

import itertools

from arena_tui.spine.labels import kind_of, label_rows
from arena_tui.spine.source import variant_labels

FAULTS = "faults: 0:barge_in,1:no_response,3:disconnect,4:truncated"


def campaign_rows() -> list[tuple[str, tuple[str, ...]]]:
    """The leaderboard rows of `--condition clean,telephony,noise=10 --effort low,high` (simulator,
    heuristic judge, injected faults): their parts as `spine.source.variant_labels` says them."""
    return [("sim", ("simulator", "heuristic judge",
                     *variant_labels({"condition": c, "effort": e, "faults": FAULTS[len("faults: "):]})))
            for c in ("clean", "telephony", "noise=10") for e in ("low", "high")]


def test_the_parts_every_row_shares_go_to_the_header_and_what_differs_stays_whole() -> None:
    labels = label_rows(campaign_rows())
    assert labels.shared == ("simulator", "heuristic judge", FAULTS)
    assert labels.header() == f"all rows: simulator · heuristic judge · {FAULTS}"
    assert labels.header(60) == "all rows: simulator · heuristic judge +1: faults"  # whole parts go, named
    assert [r.text() for r in labels.rows] == [
        "sim [effort=low]", "sim [effort=high]", "sim [telephony, effort=low]", "sim [telephony, effort=high]",
        "sim [noise=10, effort=low]", "sim [noise=10, effort=high]"]
    for width in (1, 10, 20, 80):  # a condition and an effort are never dropped nor cut
        assert len({r.text(width) for r in labels.rows}) == 6
        assert all("…" not in r.text(width) for r in labels.rows)


def test_a_label_drops_whole_parts_from_the_least_telling_end_and_names_them() -> None:
    rows = [("gpt-realtime", ("telephony", "speech: person1", "service: MyLLM", "faults: 1:no_response*")),
            ("sim", ("simulator",))]
    gpt = label_rows(rows).rows[0]
    assert gpt.text() == "gpt-realtime [telephony, speech: person1, service: MyLLM, faults: 1:no_response*]"
    assert gpt.text(68) == "gpt-realtime [telephony, speech: person1, service: MyLLM] +1: faults"
    assert gpt.text(67) == "gpt-realtime [telephony, speech: person1] +2: service, faults"
    assert gpt.text(30) == "gpt-realtime [telephony, speech: person1] +2"  # the kinds go last
    assert gpt.parts_text(0) == "[telephony, speech: person1] +2"  # condition and speaker are never dropped
    assert label_rows(rows).rows[1].text(3) == "sim [simulator]"  # the model always there, its source too


def test_what_tells_two_rows_of_one_model_apart_is_never_dropped() -> None:
    """Two rows differing only in a part that could go (their faults, a service) keep it; the model
    tells rows of two models apart, so their other parts may go."""
    rows = [("sim", ("simulator", "faults: 1:no_response")), ("sim", ("simulator", "faults: 2:empty_response")),
            ("sim", ("simulator",)), ("gpt-realtime", ("service: MyLLM",))]
    labels = label_rows(rows)
    assert labels.shared == ()
    narrow = [r.text(1) for r in labels.rows]
    assert narrow == ["sim [simulator, faults: 1:no_response]", "sim [simulator, faults: 2:empty_response]",
                      "sim [simulator]", "gpt-realtime +1"]  # (a simulator's rows say so: never dropped)


def test_labels_of_different_rows_differ_at_every_width() -> None:
    """Every set of distinct rows over conditions, efforts, speakers, judges and faults: pairwise
    different labels at every width."""
    parts = [("telephony", "noise=10"), ("effort=low", "effort=high"), ("speech: person1",),
             ("heuristic judge", "not judged"), ("faults: 1:no_response", "faults: 2:disconnect"), ("manual commit",)]
    options = [tuple(p for p in combo if p) for combo in itertools.product(*[(*ps, "") for ps in parts])]
    rows = [(model, combo) for model in ("sim", "gpt-realtime") for combo in options]
    labels = label_rows(rows)
    for width in (0, 12, 30, 60, None):
        shown = [r.text(width) for r in labels.rows]
        assert len(set(shown)) == len(rows), width


def test_a_label_part_says_its_kind() -> None:
    assert [kind_of(p) for p in ("telephony", "noise=5:babble", "loss=3", "effort=high", "speech: person2",
                                 "heuristic judge", "not judged", "judge openai:gpt-5.2 (arena-judge/3)",
                                 "faults: 1:x", "service: MyLLM", "simulator", "manual commit")] == [
        "condition", "condition", "condition", "effort", "speaker", "judge", "judge", "judge", "faults", "service",
        "source", "manual commit"]


def test_one_row_shares_nothing_and_a_listing_without_a_header_says_every_part() -> None:
    one = label_rows([("sim", ("simulator", "telephony"))])
    assert one.shared == () and one.rows[0].text() == "sim [telephony, simulator]"  # a condition first
    rows = [("sim", ("telephony",)), ("sim", ("telephony", "effort=high"))]
    assert label_rows(rows, share=False).rows[0].text() == "sim [telephony]"
    assert label_rows(rows).rows[0].text() == "sim" and label_rows(rows).header() == "all rows: telephony"
    assert label_rows(rows, enclose="()").rows[1].text() == "sim (effort=high)"
