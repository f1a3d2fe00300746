"""The one diagnostic model every stage produces and every renderer consumes."""

from __future__ import annotations

from dataclasses import field
from typing import Iterable

from envdsl.diagnostics.codes import Code, Severity
from envdsl.util.frozen_node import node, record
from envdsl.util.source import Span


@node
class Edit:
    span: Span
    replacement: str


@node
class Fix:
    """A machine-applicable repair: an LLM or an editor can apply the edits verbatim."""

    message: str
    edits: tuple[Edit, ...]


@node
class Diagnostic:
    code: Code
    message: str
    span: Span
    notes: tuple[str, ...] = ()
    help: str | None = None
    fixes: tuple[Fix, ...] = ()

    @property
    def severity(self) -> Severity:
        return self.code.severity

    @property
    def is_error(self) -> bool:
        return self.code.severity is Severity.ERROR


@record
class DiagnosticSink:
    """Collects diagnostics from all stages; stages keep going after errors.

    The same code at the same span is reported once: a stage that revisits a node (a default
    value type-checked for the schema and for an insert, say) must not repeat itself.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    _seen: set[tuple[str, str, int, int]] = field(default_factory=set)

    def report(
        self,
        code: Code,
        message: str,
        span: Span,
        *,
        help: str | None = None,
        notes: Iterable[str] = (),
        fixes: Iterable[Fix] = (),
    ) -> None:
        key = (code.code, span.file, span.start, span.end)
        if key in self._seen:
            return
        self._seen.add(key)
        self.diagnostics.append(Diagnostic(code, message, span, tuple(notes), help, tuple(fixes)))

    @property
    def error_count(self) -> int:
        return sum(1 for diagnostic in self.diagnostics if diagnostic.is_error)

    @property
    def has_errors(self) -> bool:
        return self.error_count > 0

    def sorted(self) -> list[Diagnostic]:
        return sorted(
            self.diagnostics, key=lambda d: (d.span.file, d.span.start, d.span.end, d.code.code)
        )
