"""The whole report as one JSON document: every spec's page data, the batch summary the index
shows, and the rollout figures with their charts. `envdsl report --format json` prints it;
the HTML site (envdsl.report.site) is rendered from it and from nothing else.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Sequence

from envdsl.report import diagrams
from envdsl.report.collect import collect_numbered, crashed
from envdsl.report.rollouts import load_rollouts
from envdsl.tasks.task_files import Bundle
from envdsl.util.backends import Backend, ordered_map

REPORT_VERSION = 1

# xychart draws no legend: the title says which curve is which, by the colours report.js
# gives the series (pass@k is also never below pass^k)
PASS_TITLE = "pass@k (blue) and pass^k (orange)"

Json = dict[str, Any]


def build_report(
    bundles: Sequence[Bundle],
    rollout_files: Sequence[str | os.PathLike[str]] = (),
    backend: Backend = Backend(),
) -> Json:
    """The report of `bundles`, each checked, verified and measured where `backend` says (a
    local backend with processes > 1: that many worker processes).

    Raises envdsl.report.rollouts.RolloutFileError for a trajectory file it cannot read."""
    rollouts = load_rollouts(rollout_files)  # first: a bad file fails before the long part
    specs = list(ordered_map(collect_numbered, list(enumerate(bundles)), backend, crashed))
    if rollouts is not None:
        _add_charts(rollouts)
        for spec in specs:
            spec["rollouts"] = [entry for entry in rollouts["tasks"] if entry["env"] == spec["env"]]
    for spec in specs:
        spec["summary"] = spec_summary(spec)
    return {
        "version": REPORT_VERSION,
        "specs": specs,
        "batch": batch_summary(specs),
        "rollouts": rollouts,
    }


def spec_summary(spec: Json) -> Json:
    """The index row of a spec: one number per column (a column per score field that some
    task's verification carries, such as a mutation score, averaged over its tasks)."""
    tasks = spec.get("tasks", [])
    reports = [task["verification"] for task in tasks if task.get("verification") is not None]
    row: Json = {
        "clean": spec["ok"] and spec["warnings"] == 0,
        "errors": spec["errors"],
        "warnings": spec["warnings"],
        "tools": len(spec.get("tools", [])),
        "tasks": len(tasks),
        "tasks_verified": len(reports),
        "tasks_without_problems": sum(1 for report in reports if not report.get("problems")),
    }
    for name in score_fields(reports):
        values = [float(r[name]) for r in reports if _is_number(r.get(name))]
        row[f"mean {name}"] = round(sum(values) / len(values), 4) if values else None
    coverage = spec.get("coverage")
    if coverage is not None:
        row["unused tools"] = len(coverage["unused_tools"])
    return row


def score_fields(reports: Sequence[Json]) -> list[str]:
    """Numeric fields of verification reports whose name says they are a score."""
    names: dict[str, None] = {}
    for report in reports:
        for name, value in report.items():
            if "score" in name and _is_number(value):
                names[name] = None
    return list(names)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def batch_summary(specs: Sequence[Json]) -> Json:
    codes: Counter[str] = Counter()
    for spec in specs:
        codes.update(spec["codes"])
    return {
        "specs": len(specs),
        "clean": sum(1 for spec in specs if spec["summary"]["clean"]),
        "with_errors": sum(1 for spec in specs if not spec["ok"]),
        "codes": dict(sorted(codes.items())),
        "by_code": _by_code(specs),
        "columns": _columns(specs),
    }


def _by_code(specs: Sequence[Json]) -> list[Json]:
    """Each code of the batch with its slug and severity, how often it is reported and in how
    many specs: the most frequent first, which is where a generator goes wrong most."""
    found: dict[str, Json] = {}
    for spec in specs:
        for diagnostic in spec["diagnostics"]:
            entry = found.setdefault(
                diagnostic["code"],
                {
                    "code": diagnostic["code"],
                    "slug": diagnostic["slug"],
                    "severity": diagnostic["severity"],
                    "count": 0,
                    "specs": set(),
                },
            )
            entry["count"] += 1
            entry["specs"].add(spec["path"])
    rows = [dict(entry, specs=len(entry["specs"])) for entry in found.values()]
    return sorted(rows, key=lambda row: (-row["count"], row["code"]))


def _columns(specs: Sequence[Json]) -> list[str]:
    columns: dict[str, None] = {}
    for spec in specs:
        columns.update(dict.fromkeys(spec["summary"]))
    return list(columns)


def _add_charts(rollouts: Json) -> None:
    """Mermaid sources of the rollout plots, stored next to the figures they draw."""
    for model, overall in rollouts["overall"].items():
        overall["charts"] = _pass_chart(f"{model}: {PASS_TITLE}", overall)
    for entry in rollouts["tasks"]:
        for model, figures in entry["models"].items():
            histogram = figures.get("reward_histogram", {})
            charts = _pass_chart(f"{entry['task']}: {PASS_TITLE}", figures)
            charts["rewards"] = diagrams.bar_chart(
                f"{entry['task']}: samples per reward",
                list(histogram),
                list(histogram.values()),
                "samples",
            )
            figures["charts"] = charts


def _pass_chart(title: str, figures: Json) -> Json:
    ks = [int(k) for k in figures["pass_at_k"]]
    if not ks:
        return {}
    curves = [[figures[name][str(k)] for k in ks] for name in ("pass_at_k", "pass_hat_k")]
    return {"pass": diagrams.line_chart(title, ks, curves)}
