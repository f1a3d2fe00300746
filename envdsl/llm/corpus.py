"""The corpus report of a `synth --batch` output directory (or any directory of specs).

Per spec: whether it checks clean, its tables and tools, its tasks (its own and those of a
`<name>.tasks.env` beside it); over the corpus: the totals, and the pairs of environments that
are near-duplicates by schema. Two specs written for two topics may still model one backend
(a "library loans desk" and a "book lending service"); what they share is their schema, not
their names, so the similarity is the Jaccard similarity of the words of their entity and
field names (split at `_` and case changes, plural and singular as one word). A batch log,
when given, adds how each id ended (accepted, failed, server error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from envdsl.llm.batch import DONE, read_log
from envdsl.util.word_sets import jaccard, singular

# schemas sharing this share of their entity and field words are reported as near-duplicates
SCHEMA_NEAR_DUPLICATE = 0.6
_MAX_PAIRS_SHOWN = 20


@dataclass(slots=True)
class SpecFacts:
    path: str
    env: str
    errors: int
    warnings: int
    tables: dict[str, list[str]]  # entity -> its field names
    queries: int
    actions: int
    tasks: int
    schema_words: frozenset[str] = field(default_factory=frozenset)

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "env": self.env,
            "errors": self.errors,
            "warnings": self.warnings,
            "tables": self.tables,
            "queries": self.queries,
            "actions": self.actions,
            "tasks": self.tasks,
        }


@dataclass(slots=True)
class CorpusReport:
    specs: list[SpecFacts]
    unreadable: list[str]  # spec files that could not be read (path: reason)
    near_duplicates: list[tuple[str, str, float]]  # (path, path, similarity), most similar first
    outcomes: dict[str, int]  # batch-log status -> ids (empty without a log)

    @property
    def clean(self) -> list[SpecFacts]:
        return [s for s in self.specs if s.errors == 0]

    def as_json(self) -> dict[str, Any]:
        clean = self.clean
        return {
            "specs": len(self.specs),
            "clean": len(clean),
            "tools": sum(s.queries + s.actions for s in clean),
            "tasks": sum(s.tasks for s in clean),
            "outcomes": self.outcomes,
            "near_duplicates": [
                {"a": a, "b": b, "similarity": round(score, 3)}
                for a, b, score in self.near_duplicates
            ],
            "unreadable": self.unreadable,
            "per_spec": [s.as_json() for s in self.specs],
        }

    def text(self) -> str:
        clean = self.clean
        tools = [s.queries + s.actions for s in clean]
        lines = [
            f"corpus: {len(self.specs)} specs, {len(clean)} clean; "
            f"{sum(tools)} tools ({_spread(tools)} a spec), "
            f"{sum(len(s.tables) for s in clean)} tables, "
            f"{sum(s.tasks for s in clean)} tasks ({_spread([s.tasks for s in clean])} a spec)"
        ]
        if self.outcomes:
            shown = ", ".join(
                f"{count} {status}" for status, count in sorted(self.outcomes.items())
            )
            lines.append(f"batch log: {shown}")
        for path in self.unreadable:
            lines.append(f"unreadable: {path}")
        if self.near_duplicates:
            lines.append(
                f"{len(self.near_duplicates)} near-duplicate pair(s) by schema "
                f"(>= {SCHEMA_NEAR_DUPLICATE:.0%} of entity and field words shared):"
            )
            for a, b, score in self.near_duplicates[:_MAX_PAIRS_SHOWN]:
                lines.append(f"  {score:.0%}  {a}  {b}")
            hidden = len(self.near_duplicates) - _MAX_PAIRS_SHOWN
            if hidden > 0:
                lines.append(f"  ... and {hidden} more (--format json lists them all)")
        else:
            lines.append("no near-duplicate environments by schema")
        return "\n".join(lines)


def _spread(values: list[int]) -> str:
    if not values:
        return "0"
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def spec_files(directory: Path) -> list[Path]:
    """The specs of a directory: `*.env` but not `*.tasks.env` or a batch's `*.failed.env`."""
    return sorted(
        path
        for path in directory.glob("*.env")
        if not path.name.endswith((".tasks.env", ".failed.env"))
    )


def spec_facts(path: Path) -> SpecFacts:
    """What one spec declares, from the front end (its tasks are not run: that is `check`'s
    job; the report counts them). Raises OSError/UnicodeDecodeError on I/O."""
    from envdsl.pipeline import check_file
    from envdsl.semantics.model import CheckedSpec
    from envdsl.syntax import ast

    task_file = path.with_name(path.name.removesuffix(".env") + ".tasks.env")
    task_files = [task_file] if task_file.is_file() else []
    result = check_file(path, verify=False, task_files=task_files)
    errors = sum(d.is_error for d in result.diagnostics)
    warnings = len(result.diagnostics) - errors
    checked = result.checked
    if not isinstance(checked, CheckedSpec):
        env = result.spec.env.name.text if result.spec and result.spec.env else path.stem
        return SpecFacts(str(path), env, max(errors, 1), warnings, {}, 0, 0, 0)
    tables = {
        record.name: list(record.fields)
        for record in checked.records.values()
        if record.is_entity and record.module is None
    }
    tools = [c for c in checked.tools if c.module is None and not c.internal]
    return SpecFacts(
        path=str(path),
        env=checked.env.name.text,
        errors=errors,
        warnings=warnings,
        tables=tables,
        queries=sum(t.kind == "query" for t in tools),
        actions=sum(t.kind == "action" for t in tools),
        tasks=len(checked.env.of_type(ast.TaskDecl)),
        schema_words=schema_words(tables),
    )


def schema_words(tables: dict[str, list[str]]) -> frozenset[str]:
    words: set[str] = set()
    for entity, fields in tables.items():
        for name in (entity, *fields):
            words.update(_identifier_words(name))
    return frozenset(words)


def _identifier_words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [singular(w) for w in re.split(r"[_\W]+", spaced.lower()) if w]


def near_duplicates(specs: list[SpecFacts]) -> list[tuple[str, str, float]]:
    pairs = []
    for a, b in combinations([s for s in specs if s.schema_words], 2):
        shared = jaccard(a.schema_words, b.schema_words)
        if shared >= SCHEMA_NEAR_DUPLICATE:
            pairs.append((a.path, b.path, shared))
    return sorted(pairs, key=lambda pair: (-pair[2], pair[0], pair[1]))


def batch_outcomes(log_path: Path) -> dict[str, int]:
    """How each id of a batch log ended: its last done line's status."""
    last: dict[str, str] = {}
    for record in read_log(log_path):
        if record.get("phase") == DONE and "id" in record:
            last[str(record["id"])] = str(record.get("status"))
    outcomes: dict[str, int] = {}
    for status in last.values():
        outcomes[status] = outcomes.get(status, 0) + 1
    return outcomes


def corpus_report(directory: Path, log_path: Path | None = None) -> CorpusReport:
    specs, unreadable = [], []
    for path in spec_files(directory):
        try:
            specs.append(spec_facts(path))
        except (OSError, UnicodeDecodeError) as error:
            unreadable.append(f"{path}: {type(error).__name__}: {error}")
    outcomes = batch_outcomes(log_path) if log_path is not None else {}
    return CorpusReport(specs, unreadable, near_duplicates(specs), outcomes)
