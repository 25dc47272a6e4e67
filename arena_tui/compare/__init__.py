"""Comparing runs: statistics, leaderboard figures, turn-by-turn pairs, and report files."""
