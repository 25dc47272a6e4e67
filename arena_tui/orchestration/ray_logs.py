"""Where Ray's log lines go: our log file (`arena-tui.log` beside the database), with this
package's Ray lines, never the user's terminal (Ray's own stderr handler, and the raylet's
messages to the driver that a background thread prints on stdout, included)."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

LOG_FORMAT = "%(asctime)s | %(levelname)-8s | %(name)s - %(message)s"
log = logging.getLogger("arena_tui.ray")
_log_file: Path | None = None


def log_to(path: Path | None) -> None:
    """Where Ray's and this module's log lines go (the CLI: `arena-tui.log` beside the database).

    Unset: beside the default database, as the TUI's log."""
    global _log_file
    _log_file = path


def route_ray_logs() -> Path | None:
    """Ray logs through the stdlib logger "ray" with a stderr handler it adds when imported
    (start-up INFO, auth and SIGTERM-handler warnings, a killed worker's error): those lines go
    to our log file instead, with ours. Returns the file (None: it could not be opened)."""
    from arena_tui.spine import paths  # deferred: only the Ray path needs the default db location

    wanted = _log_file or paths.log_path(paths.db_path())
    path: Path | None = wanted
    handlers: list[logging.Handler] = []
    try:
        wanted.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(wanted, encoding="utf-8")
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handlers.append(handler)
    except OSError:
        path = None
    for name in ("ray", log.name):
        lg = logging.getLogger(name)
        for h in list(lg.handlers):
            lg.removeHandler(h)
            h.close()
        for h in handlers:
            lg.addHandler(h)
        if not handlers:
            lg.addHandler(logging.NullHandler())
        lg.setLevel(logging.INFO)
        lg.propagate = False  # never Python's last-resort stderr handler
    # (ray.init keeps the "ray" logger's handlers when it configures logging, and clears them when
    # told not to: so it is called with configure_logging on and our format)
    with contextlib.suppress(Exception):  # (private: without it, those lines stay on the terminal)
        import ray._private.worker as driver  # deferred: ray is the optional `ray` extra

        # the raylet's error messages to this driver (a killed worker's "A worker died…") are
        # printed on stdout by a background thread, past any logger: ours instead
        driver.print_to_stdstream = _log_stdstream
    return path


def _log_stdstream(data: dict[str, Any], ignore_prefix: bool = False) -> None:
    for line in data.get("lines", ()):
        log.warning("(%s) %s", data.get("pid", "ray"), line)
