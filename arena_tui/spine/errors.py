"""Error types every layer may raise or catch, so none has to import another's module for them."""

from __future__ import annotations


class CliError(Exception):
    """An error the user can act on: printed as one line, exit status 2, no traceback."""
