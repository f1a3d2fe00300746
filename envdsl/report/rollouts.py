"""The rollout part of a report: the records of `envdsl rollout` trajectory files, per model
(the `provenance.model` every record carries) and per task, summarised by the rollout
summary's own metrics (envdsl.rollout.metrics: reward, success, pass@k, pass^k, failed-call rate,
turns), plus each task's reward distribution.

Only scored records count (an answer or the turn limit); records of a failed model server are
counted as errors, as the rollout summary counts them. A line that is not a record is skipped.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Sequence

from envdsl.rollout.metrics import summarize
from envdsl.rollout.records import Record, is_scored, read_records

BINS = 10  # reward histogram: bins of width 1/BINS, labelled by their centre value


class RolloutFileError(Exception):
    """A trajectory file that cannot be read (the message names it)."""


def load_rollouts(paths: Sequence[str | os.PathLike[str]]) -> dict[str, Any] | None:
    """The rollout section of the report for `paths` (None when none is given)."""
    if not paths:
        return None
    scored: dict[str, list[Record]] = {}
    errors: Counter[str] = Counter()
    for path in paths:
        if not os.path.isfile(path):
            raise RolloutFileError(f"cannot read rollouts '{path}': no such file")
        try:
            for _, record in read_records(path):
                model = _model(record)
                if not _complete(record):
                    continue
                if is_scored(record):
                    scored.setdefault(model, []).append(record)
                else:
                    errors[model] += 1
        except (OSError, UnicodeDecodeError) as error:
            raise RolloutFileError(f"cannot read rollouts '{path}': {error}") from error
    models = sorted({*scored, *errors})
    summaries = {model: summarize(scored.get(model, []), errors=errors[model]) for model in models}
    return {
        "files": [str(path) for path in paths],
        "models": models,
        "overall": {model: summary["overall"] for model, summary in summaries.items()},
        "tasks": _tasks(models, summaries, scored),
    }


def _model(record: Record) -> str:
    provenance = record.get("provenance")
    model = provenance.get("model") if isinstance(provenance, dict) else None
    return str(model) if model is not None else "unknown model"


def _complete(record: Record) -> bool:
    """A record with the fields the metrics read, of the types they read them as (a file
    written by hand or by an older envdsl may lack some: it is skipped, not a traceback)."""
    numbers = ("reward", "tool_calls", "failed_calls", "turns")
    if not isinstance(record.get("env"), str) or not isinstance(record.get("task"), str):
        return False
    if "success" not in record:
        return False
    return all(isinstance(record.get(name), (int, float)) for name in numbers)


def _tasks(
    models: list[str], summaries: dict[str, dict[str, Any]], scored: dict[str, list[Record]]
) -> list[dict[str, Any]]:
    """One entry per (env, task) of any model: each model's figures and reward histogram."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for model in models:
        for figures in summaries[model]["tasks"]:
            key = (figures["env"], figures["task"])
            entry = entries.setdefault(key, {"env": key[0], "task": key[1], "models": {}})
            entry["models"][model] = dict(figures)
        for key, histogram in _histograms(scored.get(model, [])).items():
            entries[key]["models"][model]["reward_histogram"] = histogram
    return list(entries.values())


def _histograms(records: list[Record]) -> dict[tuple[str, str], dict[str, int]]:
    counts: dict[tuple[str, str], list[int]] = {}
    for record in records:
        bins = counts.setdefault((record["env"], record["task"]), [0] * (BINS + 1))
        reward = min(max(float(record["reward"]), 0.0), 1.0)
        bins[round(reward * BINS)] += 1
    return {
        key: {f"{index / BINS:.1f}": count for index, count in enumerate(bins)}
        for key, bins in counts.items()
    }
