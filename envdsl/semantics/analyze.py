"""Placeholder until the semantic stages land: the front end stops after the AST."""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink
from envdsl.source import SourceMap
from envdsl.syntax import ast


def analyze(spec: ast.SpecFile, sources: SourceMap, sink: DiagnosticSink) -> object:
    return None
