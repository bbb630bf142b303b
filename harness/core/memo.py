"""A memo bounded by the bytes it holds, not by its number of entries.

Introduced in Chapter 2 with the tokenizer (:mod:`harness.core.text`), which re-reads the same tool texts for
every fresh catalog and the same queries for every sweep; :mod:`harness.core.tokens` counts tool definitions
the same way.

``functools.lru_cache(maxsize=100_000)`` bounds the number of texts, not their size: a proxy answering long
queries (up to 4,000 characters, each with hundreds of terms) grew by about 100 MB per 1,000 distinct ones.
:func:`bounded_by_bytes` keeps the most recently used results while their arguments and results fit in a
number of bytes; a result too big to keep alone is returned and not kept. It is thread-safe: the proxy
searches in one thread and builds indexes in another.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

R = TypeVar("R")


def approx_size(value: object) -> int:
    """Bytes ``value`` takes, counting what a tuple holds (the memos here hold strings, numbers and tuples of them)."""
    if isinstance(value, (tuple, frozenset)):
        return sys.getsizeof(value) + sum(approx_size(v) for v in value)
    return sys.getsizeof(value)


class BytesBoundedMemo(Generic[R]):
    """``fn`` with its results kept, least recently used dropped first, within ``max_bytes``."""

    def __init__(self, fn: Callable[..., R], max_bytes: int) -> None:
        self.fn, self.max_bytes = fn, max_bytes
        self.bytes = 0  # what the kept arguments and results take now
        self._kept: OrderedDict[tuple[Hashable, ...], tuple[R, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.__doc__, self.__wrapped__ = fn.__doc__, fn

    def __call__(self, *args: Hashable) -> R:
        with self._lock:
            hit = self._kept.get(args)
            if hit is not None:
                self._kept.move_to_end(args)
                return hit[0]
        result = self.fn(*args)
        size = approx_size(args) + approx_size(result)
        if size > self.max_bytes:
            return result
        with self._lock:
            if args not in self._kept:
                self._kept[args] = (result, size)
                self.bytes += size
                while self.bytes > self.max_bytes:
                    self.bytes -= self._kept.popitem(last=False)[1][1]
        return result

    def __len__(self) -> int:
        return len(self._kept)


def bounded_by_bytes(max_bytes: int) -> Callable[[Callable[..., R]], BytesBoundedMemo[R]]:
    """Decorate a function of positional, hashable arguments so its results are kept within ``max_bytes``."""
    def wrap(fn: Callable[..., R]) -> BytesBoundedMemo[R]:
        return BytesBoundedMemo(fn, max_bytes)
    return wrap
