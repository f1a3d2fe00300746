"""Trajectory records: what one rollout leaves in the `--out` JSONL file.

A record is one task sample: `messages` (OpenAI chat messages with tool calls and tool results,
what SFT trains on) and `tools` (their schemas), the `evaluation` (each check), `reward`,
`success`, the final `state_hash`, counts (turns, tool calls, failed calls, tokens), `timings`,
`finish` (answer, max_turns or error), and `provenance`: the hashes of the spec, of the task's
text and of its checks' text, the envdsl version, the model and the sampling settings.  Two
records are of the same experiment only when their provenance is the same: `key` is a hash of
it and of the sample's number, which is how a rerun finds the records it already has.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Iterator

FINISH_ANSWER = "answer"  # the model answered without a tool call
FINISH_MAX_TURNS = "max_turns"  # the turn limit came first
FINISH_ERROR = "error"  # the model server failed (after its retries): not a score

Record = dict[str, Any]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Sampling:
    """The settings that change what the model does, recorded with every rollout."""

    model: str
    temperature: float | None
    max_tokens: int | None
    seed: int | None  # the base seed; sample k sends seed + k
    max_turns: int
    user_model: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "max_turns": self.max_turns,
            "user_model": self.user_model,
        }


def provenance(
    spec_hash: str, task_hash: str, checks_hash: str, sampling: Sampling
) -> dict[str, Any]:
    import envdsl

    return {
        "spec_hash": spec_hash,
        "task_hash": task_hash,
        "checks_hash": checks_hash,
        "envdsl_version": envdsl.__version__,
        "model": sampling.model,
        "sampling": sampling.as_json(),
    }


def record_key(provenance_json: dict[str, Any], env: str, task: str, sample: int) -> str:
    """The identity of a rollout: same spec, task, checks, model, settings and sample."""
    text = json.dumps([provenance_json, env, task, sample], sort_keys=True)
    return digest(text)[:24]


def read_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, Record]]:
    """(line number, record) of each record in a trajectory file; lines that are not a JSON
    object (a torn last line of a killed run) are skipped. A missing file has none."""
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        return
    with handle:
        for number, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "key" in record:
                yield number, record


def is_scored(record: Record) -> bool:
    """A record whose rollout ran to its end (an answer or the turn limit)."""
    return record.get("finish") in (FINISH_ANSWER, FINISH_MAX_TURNS)
