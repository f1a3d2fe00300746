"""The construct the compiler is working on, so that an internal error (E9001) points at it
rather than at line 1, column 1.

Checker, code generator and task verifier note each statement and expression as they enter it;
nothing restores the previous one on the way out, so after an exception the last construct
noted is the innermost one being processed.  A context variable keeps threads apart.
"""

from __future__ import annotations

from contextvars import ContextVar

from envdsl.util.source import Span

_CURRENT: ContextVar[Span | None] = ContextVar("envdsl_construct", default=None)


def note(span: Span) -> None:
    _CURRENT.set(span)


def current() -> Span | None:
    return _CURRENT.get()


def clear() -> None:
    _CURRENT.set(None)
