"""Diagnostics: the code registry, the diagnostic model and its renderers."""

from envdsl.diagnostics.codes import REGISTRY, Code, Severity, Stage, lookup
from envdsl.diagnostics.diagnostic import Diagnostic, DiagnosticSink, Edit, Fix

__all__ = [
    "REGISTRY",
    "Code",
    "Diagnostic",
    "DiagnosticSink",
    "Edit",
    "Fix",
    "Severity",
    "Stage",
    "lookup",
]
