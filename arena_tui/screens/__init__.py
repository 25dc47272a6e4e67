"""Screens of the app: runs list, live/replayed run, turn detail, help and dialogs."""
