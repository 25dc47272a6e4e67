"""Campaigns: many runs across workers, one coordinator owning the store and the UI."""
