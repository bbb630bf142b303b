"""Calling the learner's code from a grader, and the verdict a grader returns.

Introduced with the exercises (``exercises/``, which follow Chapters 1–8); every grader in
:mod:`workbook.grading` uses it.

A starter's functions raise ``NotImplementedError`` until they are written, and a half-written
one may raise anything. A grader must turn both into the one kind of failure it reports — an
``AssertionError`` whose message says which function and what happened — so the learner reads a
sentence about their code, not a traceback into the grader. The original exception stays chained
for anyone who wants the traceback.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable


class Passed(str):
    """A grader's ✓ line; shown without quotes when it is the last value of a notebook cell."""

    def __repr__(self) -> str:
        return str(self)


def _failure(name: str, exc: Exception) -> AssertionError:
    if isinstance(exc, NotImplementedError):
        said = f" ({exc})" if str(exc) else ""
        return AssertionError(f"{name}() is not written yet: it still raises NotImplementedError{said}; "
                              "fill in the cell marked # YOUR CODE HERE.")
    return AssertionError(f"{name}() raised {type(exc).__name__}: {exc}")


def call(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:  # Any: the learner's function, its arguments forwarded unchanged; callers check the result
    """``fn(*args, **kwargs)``; any exception it raises becomes an AssertionError naming ``name``."""
    if not callable(fn):
        raise AssertionError(f"{name} should be a function, got {type(fn).__name__}.")
    try:
        result = fn(*args, **kwargs)
    except AssertionError:
        raise
    except Exception as exc:
        raise _failure(name, exc) from exc
    if inspect.isawaitable(result):
        raise AssertionError(f"{name}() is async here; this exercise needs a plain function (def, not async def).")
    return result


async def acall(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:  # Any: as call's
    """Like :func:`call`, for a function that may be async (its result is awaited)."""
    if not callable(fn):
        raise AssertionError(f"{name} should be a function, got {type(fn).__name__}.")
    try:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
    except AssertionError:
        raise
    except Exception as exc:
        raise _failure(name, exc) from exc
    return result
