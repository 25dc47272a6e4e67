"""What a row is called where rows are shown together: the one rule every surface names rows by
(the leaderboard and its chart, the runs list, the campaign screen, search lines, gap lines, the report).

A row's name is its model and its label parts: what produced its numbers (`simulator`, `heuristic
judge`, its judge) and how its input differed (`spine.source.variant_labels`: `telephony`,
`effort=high`, `speech: person1`, `faults: …`). Shown together (`label_rows`):
- the parts every row has alike are said once, in a header (`Labels.header`: `all rows: simulator ·
  heuristic judge`), never on each row;
- the rest, what tells the rows apart, follow the model, most telling first: condition, effort,
  speaker, source, judge, then the other kinds by how many values they take among the rows;
- a label too long for its width drops whole parts from the least telling end and names the kinds it
  dropped (`sim [telephony, effort=high] +1: faults`). A part is never cut mid-word, and never dropped
  when it is a condition, effort, speaker, source (a simulator, a protocol fake, an imported
  run: numbers no real service produced) or judge, or when it is what tells this row from another
  (the first kind, most telling first, in which two rows of one model differ): rows whose whole names
  differ have labels that differ at every width. The model is always there.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from .conditions import ConditionError, parse_condition

#: kinds never dropped from a label, in the order they lead it: how the input differed, what produced
#: the numbers when no real service did (`source`: a simulator's scores are no model's), who judged them
ESSENTIAL = ("condition", "effort", "speaker", "source", "judge")
#: parts that say what produced a row's numbers (`spine.source.source_label`, an imported run's label)
SOURCES = ("simulator", "protocol fake", "imported")
SEP = ", "  # between a row's parts, inside its brackets
HEADER_SEP = " · "  # between the shared parts of a header


def kind_of(part: str) -> str:
    """What a label part says, for ranking it and naming it when dropped: `condition` (an acoustic
    condition's spec), `effort`, `speaker`, `judge` (`heuristic judge`, `not judged`, `judge X`),
    `source` (`simulator`, `protocol fake`, `imported`), else the name before `: ` or `=` (`faults`,
    `service`), else the part itself (`manual commit`)."""
    if part.endswith((" judge", "judged")) or part.startswith("judge "):
        return "judge"
    if part in SOURCES:
        return "source"
    try:
        parse_condition(part)
        return "condition"
    except ConditionError:
        pass
    for sep in (": ", "="):
        name, found, _ = part.partition(sep)
        if found and name:
            return {"speech": "speaker"}.get(name, name)
    return part


MODEL_KEPT = 8  # letters of a model's name a label keeps at least when it is cut (`cut_name`)
MODEL_WHOLE = 16  # a model's name this short is cut only where nothing else gives way (`Label.narrowest`)


def cut_name(name: str, width: int) -> str:
    """`gemini-2.5-fl…view-12-2025`: a name in `width` cells (at least `MODEL_KEPT`), its start and
    end kept, the middle said by `…`."""
    width = max(width, min(len(name), MODEL_KEPT))
    if len(name) <= width:
        return name
    head = width // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def dropped_note(parts: Sequence[str], short: bool = False) -> str:
    """`+2: faults, service`: how many parts a label left out and of which kinds ('' for none);
    `short`: `+2` alone, where even the kinds do not fit."""
    if not parts:
        return ""
    return f"+{len(parts)}" + ("" if short else ": " + ", ".join(dict.fromkeys(kind_of(p) for p in parts)))


@dataclass(frozen=True)
class Label:
    """One row's name among the rows shown with it: its model, then the parts that tell it apart."""

    model: str
    parts: tuple[str, ...]  # most telling first (module docstring)
    fixed: frozenset[int] = frozenset()  # indices into `parts` never dropped
    enclose: str = "[]"  # what the parts are put in: `sim [telephony]`; a run's listing says `sim [SIM] (telephony)`

    def keep(self, width: int | None = None, used: int = 0) -> list[int]:
        """The indices of the parts kept in a label of at most `width` cells (`used`: taken by what goes
        before the parts): droppable parts go from the least telling end until it fits."""
        keep = list(range(len(self.parts)))
        droppable = [i for i in reversed(keep) if i not in self.fixed]
        while width is not None and used + len(self._parts_text(keep)) > width and droppable:
            keep.remove(droppable.pop(0))
        return keep

    def dropped(self, width: int | None = None, used: int = 0) -> tuple[str, ...]:
        """The parts a label of `width` cells leaves out (`keep`)."""
        keep = self.keep(width, used)
        return tuple(p for i, p in enumerate(self.parts) if i not in keep)

    def _parts_text(self, keep: list[int], short: bool = False) -> str:
        shown = [self.parts[i] for i in keep]
        text = f"{self.enclose[0]}{SEP.join(shown)}{self.enclose[1]}" if shown else ""
        note = dropped_note([p for i, p in enumerate(self.parts) if i not in keep], short)
        return f"{text} {note}" if text and note else text or note

    def parts_text(self, width: int | None = None, used: int = 0) -> str:
        """`[telephony, effort=high] +1: faults` in `width` cells when it can (the fixed parts may not:
        they are kept whatever the width; the dropped kinds go from the note last: `+1`), '' when
        nothing tells the row apart."""
        keep = self.keep(width, used)
        text = self._parts_text(keep)
        if width is not None and used + len(text) > width and len(keep) < len(self.parts):
            return self._parts_text(keep, short=True)
        return text

    def text(self, width: int | None = None) -> str:
        """`sim [telephony, effort=high] +1: faults`: the model, then `parts_text` in what is left."""
        tail = self.parts_text(width, len(self.model) + 1)
        return f"{self.model} {tail}" if tail else self.model

    def fit(self, width: int) -> str:
        """`text(width)`, and when even that is too long, the model's name cut in its middle
        (`cut_name`: its start and its end stay, where a version or a date tells models apart),
        never a part that tells the row apart."""
        whole = self.text(width)
        if len(whole) <= width:
            return whole
        least = self.parts_text(0)  # what tells it apart, the rest named in short: the model gives way
        return " ".join(t for t in (cut_name(self.model, width - (len(least) + 1 if least else 0)), least) if t)

    @property
    def least(self) -> int:
        """The fewest cells `parts_text` takes (every droppable part dropped, named in short)."""
        return len(self.parts_text(0))

    @property
    def narrowest(self) -> int:
        """The cells a one-line label (`fit`) should have: `least`, after a model's name cut no shorter
        than `MODEL_WHOLE` (a surface with less room cuts it more)."""
        return min(len(self.model), MODEL_WHOLE) + (self.least + 1 if self.least else 0)


@dataclass(frozen=True)
class Labels:
    """The names of rows shown together (`label_rows`): what they share, and each row's `Label`."""

    shared: tuple[str, ...]
    rows: tuple[Label, ...]

    def header(self, width: int | None = None, lines: int = 1, noun: str = "rows", lead: str | None = None) -> str:
        """`all rows: simulator · heuristic judge` (`lead`: instead of `all rows`) in at most `lines`
        lines of `width` cells: whole parts dropped from the end, named (`+1: faults`); '' when the
        rows share nothing."""
        if not self.shared:
            return ""
        for k in range(len(self.shared), -1, -1):
            kept = HEADER_SEP.join(self.shared[:k])
            note = dropped_note(self.shared[k:])
            text = f"{lead or f'all {noun}'}: " + " ".join(t for t in (kept, note) if t)
            if width is None or len(textwrap.wrap(text, max(width, 1))) <= lines:
                return text
        return text

    def __getitem__(self, index: int) -> Label:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)


def label_rows(rows: Sequence[tuple[str, Sequence[str]]], share: bool = True, enclose: str = "[]") -> Labels:
    """Each row's `Label` (rows given as (model, label parts), in display order) and the parts they
    all share (module docstring). One row shares nothing: its label says all (`share=False`: nothing
    goes to a header, for a surface that has none). `enclose`: the brackets the parts are put in."""
    first = list(dict.fromkeys(rows[0][1])) if rows else []
    shared = tuple(p for p in first if all(p in parts for _, parts in rows[1:])) if share and len(rows) > 1 else ()
    own = [[p for p in dict.fromkeys(parts) if p not in shared] for _, parts in rows]
    values: list[dict[str, tuple[str, ...]]] = []
    for parts in own:
        by_kind: dict[str, tuple[str, ...]] = {}
        for p in parts:
            by_kind[kind_of(p)] = (*by_kind.get(kind_of(p), ()), p)
        values.append(by_kind)
    kinds = list(dict.fromkeys(k for v in values for k in v))
    distinct = {k: len({v.get(k, ()) for v in values}) for k in kinds}
    ranked = sorted(kinds, key=lambda k: (ESSENTIAL.index(k) if k in ESSENTIAL else len(ESSENTIAL), -distinct[k],
                                          kinds.index(k)))
    needed = _telling(rows, values, ranked)
    out = []
    for i, ((model, _), by_kind) in enumerate(zip(rows, values, strict=True)):
        shown = tuple(p for k in ranked for p in by_kind.get(k, ()))
        keep = {k for k in ranked if k in ESSENTIAL or k in needed[i]}
        out.append(Label(model, shown, frozenset(j for j, p in enumerate(shown) if kind_of(p) in keep), enclose))
    return Labels(shared, tuple(out))


def _telling(rows: Sequence[tuple[str, Sequence[str]]], values: list[dict[str, tuple[str, ...]]],
             ranked: list[str]) -> list[set[str]]:
    """Per row, the kinds that tell it from another row of its model: rows are split by model, then
    by each kind in rank order; a kind that splits a row's group is what tells those rows apart (the
    first kind, most telling first, in which they differ). Linear in rows × kinds."""
    needed: list[set[str]] = [set() for _ in rows]
    groups: dict[str, list[int]] = {}
    for i, (model, _) in enumerate(rows):
        groups.setdefault(model, []).append(i)
    current = list(groups.values())
    for kind in ranked:
        split: list[list[int]] = []
        for group in current:
            by_value: dict[tuple[str, ...], list[int]] = {}
            for i in group:
                by_value.setdefault(values[i].get(kind, ()), []).append(i)
            if len(by_value) > 1:
                for i in group:
                    needed[i].add(kind)
            split += by_value.values()
        current = split
    return needed
