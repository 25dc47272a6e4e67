"""Campaigns as data: the spec, the recorded cells and campaigns the screens read, benchmark snapshots.

Running them (the coordinator and its executors) is `arena_tui.orchestration`.
"""
