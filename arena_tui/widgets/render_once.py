"""A Rich renderable that renders once per width.

Textual sizes a Static by rendering its content, then renders it again to draw it: for the turn
detail's tables (Rich lays each cell out, measures every column) that was paid twice on every
opening. The segments of the first rendering are kept and yielded again for the same width.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment


class RenderedOnce:
    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._key: tuple | None = None
        self._segments: list[Segment] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # what a rendering depends on here (a height limit does not change a table's lines)
        key = (options.max_width, options.min_width, options.justify, options.overflow, options.no_wrap,
               options.markup, options.highlight, options.legacy_windows, options.ascii_only, options.encoding)
        if key != self._key:
            self._segments = list(console.render(self.renderable, options))
            self._key = key
        yield from self._segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)
