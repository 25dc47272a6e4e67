"""Widgets of the run screens; each renders a `RunState` and nothing else."""
