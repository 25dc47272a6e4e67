"""The knowledge base as the judge reads it: what the assistant saw, and what only its tools reveal.

A benchmark's `knowledge_base.txt` is the full (oracle) KB; its system prompt is what the assistant
was given. A KB line the system prompt holds (stripped, verbatim) is prompt-visible; any other is
tool-only: the assistant could know it only by calling a lookup (grocery_bench's product catalogue,
whose index alone is in the prompt). Blank and separator lines (`---`, `|---|`) go with the line
before them. The judge gets the full KB once, its tool-only stretches marked, so it can hold a fact
against the assistant only where the assistant could have had it (docs/judging.md, "Knowledge base").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena_tui.spine.benchmark import Benchmark

TOOL_ONLY_OPEN = "[tool-only]"
TOOL_ONLY_CLOSE = "[/tool-only]"
_FILLER = re.compile(r"^[\s|:\-=*#]*$")  # blank lines, rules, table separators: no fact of their own


@dataclass(frozen=True)
class KnowledgeViews:
    """The KB split by what the assistant saw. `text` is the full KB with each tool-only stretch
    between `TOOL_ONLY_OPEN` and `TOOL_ONLY_CLOSE`; `hidden_lines` counts the tool-only lines."""

    text: str
    lines: int
    hidden_lines: int

    @property
    def all_visible(self) -> bool:
        return self.hidden_lines == 0


def knowledge_views(benchmark: Benchmark) -> KnowledgeViews:
    kb = benchmark.knowledge_base.strip()
    prompt = benchmark.system_prompt
    lines = kb.splitlines()
    hidden: list[bool] = []
    for line in lines:
        if _FILLER.match(line):
            hidden.append(hidden[-1] if hidden else False)
        else:
            hidden.append(line.strip() not in prompt)
    out: list[str] = []
    inside = False
    for line, tool_only in zip(lines, hidden):
        if tool_only != inside:
            out.append(TOOL_ONLY_OPEN if tool_only else TOOL_ONLY_CLOSE)
            inside = tool_only
        out.append(line)
    if inside:
        out.append(TOOL_ONLY_CLOSE)
    facts = [h for line, h in zip(lines, hidden) if not _FILLER.match(line)]
    return KnowledgeViews(text="\n".join(out), lines=len(facts), hidden_lines=sum(facts))


def knowledge_section(benchmark: Benchmark) -> str:
    """The KB part of the judge's prompt: the full KB once, what the assistant did not see marked."""
    views = knowledge_views(benchmark)
    if not views.text:
        return "# Knowledge base\n(none)\n"
    if views.all_visible:
        head = "# Knowledge base (all of it was in the assistant's prompt: prompt-visible and full KB are the same)"
    else:
        head = (
            f"# Knowledge base (full). {views.hidden_lines} of {views.lines} lines, between "
            f"{TOOL_ONLY_OPEN} and {TOOL_ONLY_CLOSE}, were NOT in the assistant's prompt: only its tools "
            "reveal them. The rest is the prompt-visible KB."
        )
    return f"{head}\n{views.text}\n"
