"""The data of one spec's report page, from one run of the pipeline: its diagnostics (with the
source lines they point at), its declarations (envdsl.report.structure), each task's
verification report (TaskReport.as_json, whatever fields it has), the coverage report of its
tasks and the Mermaid sources of its diagrams.

Verification results are copied as the pipeline gives them, so fields that later grading work
adds to TaskReport.as_json appear in the report without a change here.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.diagnostics.render_json import diagnostic_json
from envdsl.pipeline import CompileResult, check_source, read_sources
from envdsl.report import diagrams
from envdsl.report.structure import describe_spec
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.tasks.task_files import Bundle
from envdsl.util.source import SourceMap
from envdsl.util.spec_paths import describe_read_error

Json = dict[str, Any]

CONTEXT_LINES = 6  # at most this many source lines are shown under a diagnostic


def page_name(index: int, path: str) -> str:
    """The spec page's file, unique in the batch and safe on every file system."""
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", Path(path).name.removesuffix(".env"))[:60]
    return f"specs/{index:03d}-{stem or 'spec'}.html"


def collect_numbered(item: tuple[int, Bundle]) -> Json:
    """collect_spec of an (index, bundle) pair: the picklable form worker processes call."""
    index, bundle = item
    return collect_spec(bundle, index)


def crashed(item: tuple[int, Bundle], error: BaseException) -> Json:
    """The page of a spec whose collection raised or whose worker died: a bug in envdsl, said
    as the compiler says one (E9001), so that the rest of the batch is still reported."""
    index, bundle = item
    message = f"internal error while reporting: {type(error).__name__}: {error}"
    return {
        "path": bundle.path,
        "task_files": list(bundle.task_files),
        "page": page_name(index, bundle.path),
        "env": None,
        "ok": False,
        "errors": 1,
        "warnings": 0,
        "codes": {"E9001": 1},
        "diagnostics": [],
        "read_error": message,
    }


def collect_spec(bundle: Bundle, index: int) -> Json:
    """Everything the page of `bundle` shows (a file that cannot be read is a page that says
    so: one bad file of a batch does not stop the report)."""
    data: Json = {
        "path": bundle.path,
        "task_files": list(bundle.task_files),
        "page": page_name(index, bundle.path),
        "env": None,
    }
    try:
        spec, *tasks = read_sources(bundle.path, bundle.task_files)
    except (OSError, UnicodeDecodeError) as error:
        data.update(ok=False, read_error=describe_read_error(error), errors=1, warnings=0)
        data.update(codes={}, diagnostics=[])
        return data
    result = check_source(spec, task_files=tasks)
    data.update(_diagnostics(result))
    data["stage_reached"] = result.stage_reached
    if isinstance(result.checked, CheckedSpec):
        data.update(describe_spec(result.checked))
        _attach_verification(data, result)
        data["coverage"] = _coverage(result)
        data["diagrams"] = _diagrams(data)
    return data


def _diagnostics(result: CompileResult) -> Json:
    found = result.diagnostics
    return {
        "ok": result.ok,
        "errors": sum(1 for d in found if d.severity.value == "error"),
        "warnings": sum(1 for d in found if d.severity.value == "warning"),
        "codes": dict(sorted(Counter(d.code.code for d in found).items())),
        "diagnostics": [_diagnostic(d, result.sources) for d in found],
    }


def _diagnostic(diagnostic: Diagnostic, sources: SourceMap) -> Json:
    """The diagnostic as `check --format json` gives it, plus the lines its span covers, each
    with the 1-based columns [from, to) of the span on it (the part a caret would mark)."""
    document = diagnostic_json(diagnostic, sources)
    start, end = document["span"]["start"], document["span"]["end"]
    source = sources.get(diagnostic.span.file)
    lines: list[Json] = []
    if source is not None and start["line"] > 0:
        text_lines = source.text.splitlines()
        last = min(max(end["line"], start["line"]), start["line"] + CONTEXT_LINES - 1)
        for number in range(start["line"], min(last, len(text_lines)) + 1):
            text = text_lines[number - 1]
            first = start["col"] if number == start["line"] else 1
            upto = end["col"] if number == end["line"] else len(text) + 1
            lines.append({"line": number, "text": text, "span": [first, max(upto, first + 1)]})
    document["source_lines"] = lines
    return document


def _attach_verification(data: Json, result: CompileResult) -> None:
    reports = {}
    for report in result.task_reports:
        as_json = report.as_json()
        reports[as_json["task"]] = as_json
    for task in data["tasks"]:
        task["verification"] = reports.get(task["name"])


def _coverage(result: CompileResult) -> Json | None:
    """The coverage report of the tasks (None without tasks or when the spec has errors: its
    solutions were not verified, so replaying them would measure nothing)."""
    checked = result.checked
    assert isinstance(checked, CheckedSpec)
    if not result.ok or not checked.env.of_type(ast.TaskDecl):
        return None
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.modules import environment_class, load_module
    from envdsl.tasks.coverage import measure

    module = load_module(
        generate(checked, formatted=False), f"{output_name(checked)}_report", register=False
    )
    files = [checked.spec.path, *checked.spec.task_texts]
    return measure(checked, environment_class(module), files).as_json()


def _diagrams(data: Json) -> Json:
    states = []
    for entity in data["entities"]:
        for field in entity["fields"]:
            if field["transitions"] is None or field["members"] is None:
                continue
            default = field["default"]
            initial = default.rsplit(".", 1)[-1] if default is not None else None
            states.append(
                {
                    "entity": entity["name"],
                    "field": field["name"],
                    "mermaid": diagrams.field_states(
                        field["members"], field["transitions"], initial
                    ),
                }
            )
    return {"entities": diagrams.entity_relationships(data["entities"]), "states": states}
