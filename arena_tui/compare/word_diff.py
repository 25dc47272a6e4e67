"""Two answers word by word: what each said that the other did not (difflib over words).

Words are compared without case and without the punctuation around them (`Booked,` is `booked`),
so a comma or a capital is no difference; each piece keeps the text and the spacing it had, so a
side reads as it was said. The compare screen styles the pieces (`widgets/pair_turn.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

Op = Literal["same", "gone", "new"]  # in both; only in A (B left it out); only in B (B added it)
_WORD = re.compile(r"\S+\s*")


@dataclass(frozen=True)
class Piece:
    text: str  # one or more words, with the spacing after each as in the answer
    op: Op


def _key(word: str) -> str:
    return word.strip().strip(".,;:!?\"'()[]{}…—–-").casefold() or word.strip()


def _pieces(words: list[str], op: Op) -> list[Piece]:
    return [Piece("".join(words), op)] if words else []


def word_diff(a: str, b: str) -> tuple[list[Piece], list[Piece]]:
    """A's pieces (`same`, or `gone`: not in B) and B's (`same`, or `new`: not in A), in order."""
    wa, wb = _WORD.findall(a.strip()), _WORD.findall(b.strip())
    ka, kb = [_key(w) for w in wa], [_key(w) for w in wb]
    left: list[Piece] = []
    right: list[Piece] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes():
        if tag == "equal":
            left += _pieces(wa[i1:i2], "same")
            right += _pieces(wb[j1:j2], "same")
            continue
        left += _pieces(wa[i1:i2], "gone")
        right += _pieces(wb[j1:j2], "new")
    return left, right


def shared(a: str, b: str) -> float | None:
    """The share of the two answers' words they have in common (1.0: the same words), None when
    both are empty."""
    ka, kb = [_key(w) for w in _WORD.findall(a)], [_key(w) for w in _WORD.findall(b)]
    if not ka and not kb:
        return None
    return SequenceMatcher(None, ka, kb, autojunk=False).ratio()
