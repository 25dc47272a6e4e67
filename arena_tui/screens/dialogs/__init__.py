"""The app's modal dialogs, one module each: confirm, category (the turn filter), new run, play
(a turn's audio), export (a stored run). Each is an `ArenaDialog` (`screens/base.py`)."""
