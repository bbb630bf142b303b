"""Calling the learner's code from a grader, and the verdict a grader returns.

Introduced with the exercises (``exercises/``, which follow Chapters 1–8); every grader in
:mod:`workbook.grading` uses it.

A starter's functions raise ``NotImplementedError`` until they are written, and a half-written
one may raise anything. A grader must turn both into the one kind of failure it reports — an
``AssertionError`` whose message says which function and what happened — so the learner reads a
sentence about their code, not a traceback into the grader. The original exception stays chained
for anyone who wants the traceback.

An exercise asks the learner to write an idea, not to call the package's implementation of it:
:func:`refuse_borrowed` reads the learner's code for the package's own function (or the chapter's
one-liner) and says so in one sentence.
"""
from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Callable, Iterator, Mapping


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


def _unwrapped(obj: object) -> object:
    """The function behind a bound method, a ``functools.partial`` or a decorator's ``__wrapped__``."""
    for _ in range(10):  # wrappers of wrappers, a few deep at most
        inner = getattr(obj, "__func__", None) or getattr(obj, "func", None) or getattr(obj, "__wrapped__", None)
        if inner is None or not callable(inner):
            return obj
        obj = inner
    return obj


def _code_names(code: types.CodeType) -> set[str]:
    """Every global, attribute and imported name a code object (and the functions defined in it) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _referenced(fn: object) -> Iterator[object]:
    """What the learner's ``fn`` uses: the objects its code names, followed into the learner's own helpers.

    A helper is the learner's when it shares ``fn``'s globals (a notebook's other cells): its code is read
    too, and so are the methods of the learner's classes. The package's functions are not entered — only
    named — so a shortcut is found wherever in the learner's code it is called.
    """
    root = _unwrapped(fn)
    shared = getattr(root, "__globals__", None)
    seen: set[int] = set()
    todo: list[object] = [fn]
    while todo:
        raw = todo.pop()
        if inspect.ismethod(raw):
            todo.append(type(raw.__self__))  # NameTable(ids).name: the object's class names the shortcut
        obj = _unwrapped(raw)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, type):
            yield from (b for b in obj.__mro__[1:] if b is not object)
            todo += [v for v in vars(obj).values() if getattr(_unwrapped(v), "__globals__", None) is shared]
            continue
        if not isinstance(obj, types.FunctionType):
            todo.append(type(obj))  # an object of the package's (a NameTable built once): its class names it
            continue
        if obj is not root and obj.__globals__ is not shared:
            continue
        names = _code_names(obj.__code__)
        found = [obj.__globals__[n] for n in names if n in obj.__globals__]
        found += [sys.modules[n] for n in names if n in sys.modules]  # `import x.y` inside the function
        found += [cell.cell_contents for cell in obj.__closure__ or () if _filled(cell)]
        found += list(obj.__defaults__ or ())
        modules = [m for m in found if isinstance(m, types.ModuleType)]
        visited = {id(m) for m in modules}
        while modules:  # harness.retrieval.hybrid.rrf: follow attribute names through modules
            module = modules.pop()
            for n in names:
                attr = getattr(module, n, None)
                if isinstance(attr, types.ModuleType) and id(attr) not in visited:
                    visited.add(id(attr))
                    modules.append(attr)
                if attr is not None:
                    found.append(attr)
        todo += [f for f in found if not isinstance(f, types.ModuleType)]


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure variable not yet assigned
        return False
    return True


def refuse_borrowed(name: str, fn: object, forbidden: Mapping[object, str], task: str) -> None:
    """AssertionError when the learner's ``fn`` is, calls or builds on one of ``forbidden``.

    ``forbidden`` maps an object (a function or a class of the package, or a grader's own reference) to
    how a learner would name it; ``task`` says what the exercise asks them to write instead. The check
    reads the learner's code (names it refers to, its own helpers and classes), so a wrapper around the
    package's function is found as well as the function itself. It cannot see through ``eval`` or
    ``getattr`` with a computed name; it is there to say "write it yourself", not to police.
    """
    for used in _referenced(fn):
        for banned, said in forbidden.items():
            if used is banned or (isinstance(used, type) and isinstance(banned, type) and issubclass(used, banned)):
                raise AssertionError(f"{name} uses {said}, which is the answer already written: {task}")


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
