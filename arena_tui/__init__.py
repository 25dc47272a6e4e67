"""arena-tui: a terminal live-run monitor for the Audio Arena voice-agent benchmarks."""

__version__ = "0.1.0"
