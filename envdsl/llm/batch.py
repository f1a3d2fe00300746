"""Many syntheses at once: a JSONL file of topics or EnvScaler records, threads, a resumable
JSONL log of every attempt, and a summary.

Log lines: one per attempt `{"id", "round", "phase", "errors", "warnings", "prompt_tokens",
"completion_tokens", "status"}` and, when an id is done, one with `"phase": "done"` whose
status is accepted, accepted_without_tasks, failed (the spec could not be made clean) or error
(the server could not be used), with token totals, `first_try_clean`, `output` and `message`.
An id with a done line other than error is finished: a second run skips it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from envdsl.llm import prompts
from envdsl.llm.client import ChatClient, ClientConfig, LLMError
from envdsl.llm.loop import (
    ACCEPTED,
    ACCEPTED_WITHOUT_TASKS,
    FAILED,
    Attempt,
    SynthResult,
    synthesize,
)
from envdsl.util.backends import RAY, Backend, ordered_map

DONE = "done"
LLM_ERROR = "error"
FINISHED = frozenset({ACCEPTED, ACCEPTED_WITHOUT_TASKS, FAILED})


class BatchInputError(ValueError):
    """The input file is not what a batch takes; the message names the line."""


@dataclass(frozen=True, slots=True)
class BatchItem:
    id: str
    request: str  # the first user message


def request_for(record: dict[str, Any]) -> str:
    """The first prompt for a `{"topic"}` / `{"description"}` object or an EnvScaler record."""
    if "environment_summary" in record or "operation_list" in record:
        from envdsl.llm.envscaler import record_tools

        return prompts.envscaler_prompt(record, record_tools(record))
    text = record.get("topic") or record.get("description")
    if not isinstance(text, str) or not text.strip():
        raise BatchInputError("needs a non-empty 'topic' (or an EnvScaler record)")
    return prompts.topic_prompt(text)


def read_items(path: str | os.PathLike[str]) -> list[BatchItem]:
    items: list[BatchItem] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise BatchInputError(f"{where}: not JSON: {error.msg}") from error
            if not isinstance(record, dict):
                raise BatchInputError(f"{where}: expected a JSON object")
            raw_id = record.get("id", record.get("env_id"))
            if not isinstance(raw_id, (str, int)) or str(raw_id) == "":
                raise BatchInputError(f"{where}: needs an 'id' (or an EnvScaler 'env_id')")
            item_id = str(raw_id)
            if item_id in seen:
                raise BatchInputError(f"{where}: id '{item_id}' appears twice")
            seen.add(item_id)
            try:
                items.append(BatchItem(item_id, request_for(record)))
            except BatchInputError as error:
                raise BatchInputError(f"{where}: {error}") from error
    return items


def read_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a log; a torn last line (a killed run) is ignored."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def finished_ids(records: Iterable[dict[str, Any]]) -> set[str]:
    return {str(r["id"]) for r in records if r.get("phase") == DONE and r.get("status") in FINISHED}


def output_name(item_id: str) -> str:
    """A file name for an id: unsafe characters become '_'."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", item_id).lstrip(".")
    return (name or "spec") + ".env"


def failed_path(output: Path) -> Path:
    return output.with_name(output.name.removesuffix(".env") + ".failed.env")


def write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def write_outputs(result: SynthResult, output: Path) -> Path | None:
    """Write an accepted spec to `output` (atomically) and drop a stale `<out>.failed.env`;
    for a failed synth write its last attempt to `<out>.failed.env` and return that path
    (None when no reply held a spec). An accepted spec without tasks is accepted: it goes to
    `output`, and its last tasks attempt, if any, to `<out>.failed.env`."""
    failed = failed_path(output)
    if result.status == FAILED:
        last = result.last_spec
        if last is None:
            return None
        write_atomic(failed, last)
        return failed
    assert result.spec is not None
    write_atomic(output, result.spec)
    last = result.last_spec
    if result.status == ACCEPTED_WITHOUT_TASKS and last is not None and last != result.spec:
        write_atomic(failed, last)
        return failed
    failed.unlink(missing_ok=True)
    return None


@dataclass(slots=True)
class Summary:
    total: int = 0  # finished ids in the log (this run and earlier ones)
    accepted: int = 0
    accepted_without_tasks: int = 0
    failed: int = 0
    errors: int = 0  # ids of this run that the server could not serve
    skipped: int = 0  # finished before this run
    first_try_clean: int = 0
    repair_rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def first_try_clean_rate(self) -> float:
        return self.first_try_clean / self.total if self.total else 0.0

    @property
    def mean_repair_rounds(self) -> float:
        return self.repair_rounds / self.total if self.total else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "accepted": self.accepted,
            "accepted_without_tasks": self.accepted_without_tasks,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "first_try_clean_rate": round(self.first_try_clean_rate, 4),
            "mean_repair_rounds": round(self.mean_repair_rounds, 4),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    def text(self) -> str:
        return (
            f"{self.total} done ({self.skipped} from earlier runs): {self.accepted} accepted, "
            f"{self.accepted_without_tasks} accepted without tasks, {self.failed} failed; "
            f"{self.errors} server errors this run; first-try clean rate "
            f"{self.first_try_clean_rate:.1%}, mean repair rounds {self.mean_repair_rounds:.2f}; "
            f"tokens {self.prompt_tokens} prompt + {self.completion_tokens} completion"
        )


def summarize(records: Iterable[dict[str, Any]], *, errors: int = 0, skipped: int = 0) -> Summary:
    """The summary of a log: the last done record of each finished id counts."""
    done: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.get("phase") == DONE and record.get("status") in FINISHED:
            done[str(record["id"])] = record
    summary = Summary(errors=errors, skipped=skipped)
    for record in done.values():
        summary.total += 1
        status = record["status"]
        summary.accepted += status == ACCEPTED
        summary.accepted_without_tasks += status == ACCEPTED_WITHOUT_TASKS
        summary.failed += status == FAILED
        summary.first_try_clean += bool(record.get("first_try_clean"))
        summary.repair_rounds += int(record.get("round") or 0)
        summary.prompt_tokens += int(record.get("prompt_tokens") or 0)
        summary.completion_tokens += int(record.get("completion_tokens") or 0)
    return summary


class _Log:
    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False)
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()


def done_record(item_id: str, result: SynthResult, output: Path | None) -> dict[str, Any]:
    last = result.attempts[-1] if result.attempts else None
    return {
        "id": item_id,
        "round": result.repairs,
        "phase": DONE,
        "errors": last.errors if last else 0,
        "warnings": last.warnings if last else 0,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "status": result.status,
        "first_try_clean": result.first_try_clean,
        "output": str(output) if output is not None else None,
        "message": result.message,
    }


@dataclass(frozen=True, slots=True)
class ServerFailure:
    """An item the server could not serve (an LLMError, which does not pickle, as data)."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class RemoteSynth:
    """One item's synthesis in a Ray task: the client is built there from its config."""

    config: ClientConfig
    max_repairs: int
    want_tasks: bool

    def __call__(self, item: tuple[str, str]) -> SynthResult | ServerFailure:
        request, path = item
        try:
            return synthesize(
                ChatClient(self.config),
                request,
                max_repairs=self.max_repairs,
                want_tasks=self.want_tasks,
                path=path,
            )
        except LLMError as error:
            return ServerFailure(error.kind, str(error))

    def failed(self, item: tuple[str, str], error: BaseException) -> ServerFailure:
        return ServerFailure("worker", " ".join(f"{type(error).__name__}: {error}".split()))


def run_batch(
    items: list[BatchItem],
    client: ChatClient,
    out_dir: Path,
    log_path: Path,
    *,
    concurrency: int = 4,
    max_repairs: int = 3,
    want_tasks: bool = True,
    progress: TextIO | None = None,
    on_done: Callable[[str, dict[str, Any]], None] | None = None,
    backend: Backend | None = None,
) -> Summary:
    """Synthesize every item not finished in the log; append to the log; summarize it all.

    Threads here by default (each attempt is logged as it happens); with a Ray backend one
    Ray task per item, `concurrency` in flight, whose attempts are logged when it is done,
    in input order."""
    earlier = finished_ids(read_log(log_path))
    pending = [item for item in items if item.id not in earlier]
    skipped = len(items) - len(pending)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    counts = {"done": 0, ACCEPTED: 0, ACCEPTED_WITHOUT_TASKS: 0, FAILED: 0, LLM_ERROR: 0}
    counts_lock = threading.Lock()

    with open(log_path, "a", encoding="utf-8") as handle:
        log = _Log(handle)

        def finish(item: BatchItem, outcome: SynthResult | ServerFailure) -> None:
            if isinstance(outcome, ServerFailure):
                record: dict[str, Any] = {
                    "id": item.id,
                    "phase": DONE,
                    "status": LLM_ERROR,
                    "error_kind": outcome.kind,
                    "message": outcome.message,
                }
            else:
                output = out_dir / output_name(item.id)
                written = write_outputs(outcome, output)
                shown = output if outcome.status != FAILED else written
                record = done_record(item.id, outcome, shown)
            log.write(record)
            with counts_lock:
                counts["done"] += 1
                counts[record["status"]] += 1
                if progress is not None:
                    progress.write(
                        f"\r[{counts['done']}/{len(pending)}] accepted {counts[ACCEPTED]}, "
                        f"without tasks {counts[ACCEPTED_WITHOUT_TASKS]}, failed {counts[FAILED]}"
                        f", server errors {counts[LLM_ERROR]} "
                    )
                    progress.flush()
            if on_done is not None:
                on_done(item.id, record)

        if backend is not None and backend.kind == RAY:
            remote = RemoteSynth(client.config, max_repairs, want_tasks)
            work = [(item.request, output_name(item.id)) for item in pending]
            ray_backend = replace(backend, concurrency=concurrency)
            for item, outcome in zip(
                pending, ordered_map(remote, work, ray_backend, remote.failed)
            ):
                if isinstance(outcome, SynthResult):
                    for attempt in outcome.attempts:
                        log.write({"id": item.id, **attempt.log_record()})
                finish(item, outcome)
        else:

            def one(item: BatchItem) -> None:
                def on_attempt(attempt: Attempt) -> None:
                    log.write({"id": item.id, **attempt.log_record()})

                try:
                    outcome: SynthResult | ServerFailure = synthesize(
                        client,
                        item.request,
                        max_repairs=max_repairs,
                        want_tasks=want_tasks,
                        path=output_name(item.id),
                        on_attempt=on_attempt,
                    )
                except LLMError as error:
                    outcome = ServerFailure(error.kind, str(error))
                finish(item, outcome)

            with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
                for future in [pool.submit(one, item) for item in pending]:
                    future.result()
    if progress is not None and pending:
        progress.write("\n")
    return summarize(read_log(log_path), errors=counts[LLM_ERROR], skipped=skipped)


def progress_stream() -> TextIO | None:
    return sys.stderr if sys.stderr.isatty() else None
