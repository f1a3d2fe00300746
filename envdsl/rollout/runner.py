"""Running rollouts: plan the jobs, skip those the output file has, run the rest on a backend,
append their records as they come (in input order), summarize the file.

A rerun with the same specs and settings skips every job whose record is already scored (a
server error is not: it is retried). A run whose first rollouts cannot reach the server, or
are rejected by it (a wrong URL, model or key), stops there instead of failing every job. The summary counts only records of this run's plan, so
records of another spec version, model or sampling settings in the same file never mix in;
the warnings say how many were left out and why.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Callable, Sequence, TextIO

from envdsl.rollout import metrics
from envdsl.rollout.episode import run_episode
from envdsl.rollout.output import open_locked, repair_torn_end
from envdsl.rollout.plan import EnvSource, Job
from envdsl.rollout.records import (
    FINISH_ERROR,
    Record,
    Sampling,
    is_scored,
    provenance,
    read_records,
    record_key,
)
from envdsl.util.backends import Backend, ordered_map
from envdsl.util.terminal import StatusLine

if TYPE_CHECKING:
    from envdsl.llm.client import ChatClient, ClientConfig

# one client per process and configuration; keyed by the process too, because a forked worker
# inherits this dict, and its parent's open connections must not be shared
_clients: dict[tuple[int, ClientConfig], ChatClient] = {}


def _client(config: ClientConfig) -> ChatClient:
    from envdsl.llm.client import ChatClient

    key = (os.getpid(), config)
    client = _clients.get(key)
    if client is None:
        client = _clients[key] = ChatClient(config)
    return client


@dataclass(frozen=True, slots=True)
class Rollouts:
    """What every worker needs (picklable): the specs, the server(s) and the sampling."""

    sources: tuple[EnvSource, ...]
    config: ClientConfig
    sampling: Sampling
    user_config: ClientConfig | None = None  # the simulated user's model, if any

    def __call__(self, job: Job) -> Record:
        source = self.sources[job.source]
        user = _client(self.user_config) if self.user_config is not None else None
        return run_episode(
            source.environment_class(), source, job, _client(self.config), self.sampling, user
        )

    def failed(self, job: Job, error: BaseException) -> Record:
        """The record of a job whose worker raised or died: an error, retried by a rerun."""
        source = self.sources[job.source]
        hashes = source.tasks[job.task]
        return {
            "key": job.key,
            "env": source.env,
            "spec": source.path,
            "task": job.task,
            "sample": job.sample,
            "finish": FINISH_ERROR,
            "error": {"kind": "worker", "message": f"{type(error).__name__}: {error}"},
            "provenance": provenance(source.spec_hash, hashes.task, hashes.checks, self.sampling),
        }


def plan(
    sources: Sequence[EnvSource], tasks: Sequence[str] | None, samples: int, sampling: Sampling
) -> list[Job]:
    """One job per (spec, task, sample); `tasks` None means every task of every spec, else
    the named tasks of each spec that has them."""
    jobs = []
    for index, source in enumerate(sources):
        for task, hashes in source.tasks.items():
            if tasks is not None and task not in tasks:
                continue
            origin = provenance(source.spec_hash, hashes.task, hashes.checks, sampling)
            for sample in range(samples):
                key = record_key(origin, source.env, task, sample)
                jobs.append(Job(index, task, sample, key))
    return jobs


@dataclass(slots=True)
class RunReport:
    out: str
    summary: dict[str, Any]
    ran: int = 0
    skipped: int = 0  # scored in an earlier run
    errors: int = 0  # jobs of this run the server (or a worker) failed
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # why the run stopped early: its first rollouts could not reach or use the server
    stopped: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "ran": self.ran,
            "skipped": self.skipped,
            "errors": self.errors,
            "stopped": self.stopped,
            "seconds": round(self.seconds, 3),
            "warnings": self.warnings,
            **self.summary,
        }

    def as_text(self) -> str:
        from envdsl.util.terminal import printable  # task names and paths reach the terminal

        head = f"ran {self.ran} rollouts ({self.skipped} already in {self.out}) in "
        return printable(f"{head}{self.seconds:.1f} s\n{metrics.render_text(self.summary)}")


def run(
    rollouts: Rollouts,
    jobs: Sequence[Job],
    out: str | os.PathLike[str],
    backend: Backend,
    progress: TextIO | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> RunReport:
    """Run the jobs not yet scored in `out` and append their records. `on_warning` hears
    at once what is said before anything is appended (report.warnings has it too)."""
    started = time.perf_counter()
    with open_locked(out) as locked:  # held to the last record: see rollout/output.py
        repaired = repair_torn_end(locked)
        done = {record["key"] for _, record in read_records(out) if is_scored(record)}
        pending = [job for job in jobs if job.key not in done]
        report = RunReport(os.fspath(out), summary={}, skipped=len(jobs) - len(pending))
        if repaired is not None:
            report.warnings.append(repaired)
            if on_warning is not None:
                on_warning(repaired)
        _append(rollouts, pending, locked, backend, report, progress)
    report.seconds = time.perf_counter() - started
    report.summary, warnings = summarize_file(out, rollouts.sources, jobs, report.errors)
    report.warnings += warnings
    return report


def _append(
    rollouts: Rollouts,
    pending: Sequence[Job],
    handle: IO[bytes],
    backend: Backend,
    report: RunReport,
    progress: TextIO | None,
) -> None:
    """Run the pending jobs and append each record as it comes, in input order."""
    started = time.perf_counter()
    line = StatusLine(progress) if progress is not None else None
    rewards = 0.0
    try:
        for record in ordered_map(rollouts, pending, backend, rollouts.failed):
            handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
            handle.flush()
            report.ran += 1
            report.errors += record["finish"] == FINISH_ERROR
            rewards += float(record.get("reward", 0.0))
            if report.errors == report.ran and _hopeless(record):
                report.stopped = record["error"]["message"]
                break  # closing the map cancels the rollouts not yet started
            if line is not None and line.due(report.ran == len(pending)):
                elapsed = time.perf_counter() - started
                line.draw(
                    f"rollouts {report.ran}/{len(pending)}  mean reward "
                    f"{rewards / report.ran:.3f}  errors {report.errors}  "
                    f"{report.ran / elapsed:.1f}/s"
                )
    finally:
        if line is not None:
            line.clear()


# server errors that the next rollout would meet too (a wrong URL, model or key)
HOPELESS = frozenset({"connection", "rejected"})


def _hopeless(record: Record) -> bool:
    return record["finish"] == FINISH_ERROR and record["error"]["kind"] in HOPELESS


def summarize_file(
    out: str | os.PathLike[str],
    sources: Sequence[EnvSource],
    jobs: Sequence[Job],
    errors: int = 0,
) -> tuple[dict[str, Any], list[str]]:
    """The summary of the records of `jobs` in `out`, and what was left out of it."""
    wanted = {job.key for job in jobs}
    planned = {(sources[job.source].env, job.task) for job in jobs}
    current = {source.env: source for source in sources}
    latest: dict[str, Record] = {}
    other_version: dict[str, int] = {}
    other_settings = 0
    for _, record in read_records(out):
        if record.get("key") in wanted:
            if is_scored(record):
                latest[record["key"]] = record
        elif (record.get("env"), record.get("task")) in planned:
            source = current[record["env"]]
            if record.get("provenance", {}).get("spec_hash") != source.spec_hash:
                other_version[source.path] = other_version.get(source.path, 0) + 1
            else:
                other_settings += 1
    warnings = [
        f"{count} record(s) in {os.fspath(out)} come from another version of {path} (its spec "
        "hash differs): left out of the summary"
        for path, count in other_version.items()
    ]
    if other_settings:
        warnings.append(
            f"{other_settings} record(s) in {os.fspath(out)} of these tasks have another model, "
            "sampling settings or envdsl version: left out of the summary"
        )
    return metrics.summarize(latest.values(), errors=errors), warnings
