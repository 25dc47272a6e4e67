"""A process-wide memo that computes each key once, however many threads ask at the same time.

`functools.lru_cache` does not: runs starting together (a campaign worker's sessions, a test's
eight) each miss and each compute, in threads that then share the GIL with every paced input of
the process. Here the first caller computes while the others wait (off the GIL), then all share
the one result.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class Once[**P, R]:
    """`fn` memoised on its (hashable) arguments, the newest `maxsize` results kept."""

    def __init__(self, fn: Callable[P, R], maxsize: int) -> None:
        self._fn, self._maxsize = fn, maxsize
        self._results: OrderedDict[Hashable, R] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        key = (args, tuple(sorted(kwargs.items())))
        with self._guard:
            if key in self._results:
                self._results.move_to_end(key)
                return self._results[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one computes; the others wait for it here
            with self._guard:
                if key in self._results:
                    return self._results[key]
            try:
                result = self._fn(*args, **kwargs)
            except BaseException:
                with self._guard:
                    self._locks.pop(key, None)  # a waiter tries again itself
                raise
            with self._guard:
                self._results[key] = result
                while len(self._results) > self._maxsize:
                    self._results.popitem(last=False)
                self._locks.pop(key, None)
            return result

    def __len__(self) -> int:
        """How many results are kept now (at most `maxsize`)."""
        with self._guard:
            return len(self._results)

    def cache_clear(self) -> None:
        with self._guard:
            self._results.clear()


def once(maxsize: int) -> Callable[[Callable[P, R]], Once[P, R]]:
    """Decorator form of `Once`."""
    return lambda fn: Once(fn, maxsize)
