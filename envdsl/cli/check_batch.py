"""`envdsl check` over many files: expand the arguments, check in parallel, stream, summarize.

Arguments are files, directories (every `*.env` below, sorted; hidden files and directories
such as `.env` dotenv files and `.git/` are skipped) and glob patterns (`*`, `?`, `[...]`,
`**` for any depth), which the program expands itself because users quote them. The files are
de-duplicated (the first spelling wins) and keep the order of the arguments.

Unreadable files. Files named one by one must all be readable: otherwise nothing is printed on
stdout, each failure is one line on stderr and the exit code is 2 (the behaviour of `check`
before batches existed). In a batch (any directory or pattern argument, or `--format jsonl`)
a file that cannot be read (permission, not UTF-8) is a per-file record in the output and is
counted as `unreadable` in the summary; the exit code is 2 only if no file could be read.
A directory or a pattern that finds nothing, or a named file that does not exist in a batch,
is a usage error (exit 2) before anything is checked.

Parallelism. `--jobs N` checks N files at a time in worker processes (concurrent.futures,
spawn-safe: the worker is a module-level function of plain arguments returning a plain
record). A bug in the compiler is already a diagnostic (E9001); a worker that raises anyway, or
whose process dies, yields an E9001 record for its file, never a traceback. Records are
printed in input order, each as soon as every file before it is done.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import traceback
from collections import Counter
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TextIO

import click

from envdsl.tasks.task_files import Bundle, bundle_paths
from envdsl.util.backends import RAY, Backend, BackendError, ordered_map
from envdsl.util.frozen_node import node, record
from envdsl.util.spec_paths import BatchUsageError, describe_read_error, expand_arguments
from envdsl.util.terminal import StatusLine, is_terminal

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from envdsl.pipeline import CompileResult

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2

PROGRESS_MIN_FILES = 20  # more files than this on a terminal: show a progress bar
PROGRESS_INTERVAL = 0.1  # seconds between redraws

JsonObject = dict[str, Any]


def resolve_jobs(jobs: int, files: int) -> int:
    """`--jobs 0` means one worker per usable core; never more workers than files."""
    if jobs <= 0:
        try:
            jobs = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            jobs = os.cpu_count() or 1
    return max(1, min(jobs, files))


# ---- checking one file (in a worker process or in this one) ----------------------------------


@node
class FileRecord:
    """What the parent needs from checking one file; small and picklable."""

    path: str
    ok: bool
    errors: int = 0
    warnings: int = 0
    codes: tuple[str, ...] = ()
    diagnostics: tuple[JsonObject, ...] = ()  # for json and jsonl
    text: str = ""  # for text
    unreadable: str | None = None  # why the file could not be read
    task_files: tuple[str, ...] = ()  # checked with the spec (envdsl.tasks.task_files)


def check_one(
    path: str, verify: bool, output_format: str, color: bool, task_files: tuple[str, ...] = ()
) -> FileRecord:
    """Check one spec (with its task files) and render its diagnostics; never raises."""
    try:
        from envdsl import pipeline  # looked up at call time: tests replace check_file

        try:
            result = pipeline.check_file(path, verify=verify, task_files=task_files)
        except (OSError, UnicodeDecodeError) as error:
            unreadable = describe_read_error(error)
            return FileRecord(path, ok=False, unreadable=unreadable, task_files=task_files)
        record = _record(path, result, output_format, color)
        return dataclasses.replace(record, task_files=task_files)
    except (Exception, SystemExit) as error:  # a bug must come out as a record
        details = "".join(traceback.format_exception(error)).rstrip()
        return crash_record(
            path, f"{type(error).__name__}: {error}", output_format, color, notes=(details,)
        )


def _record(path: str, result: CompileResult, output_format: str, color: bool) -> FileRecord:
    diagnostics = result.diagnostics
    errors = sum(1 for diagnostic in diagnostics if diagnostic.is_error)
    codes = tuple(diagnostic.code.code for diagnostic in diagnostics)
    if output_format == "text":
        from envdsl.diagnostics.render_text import render_text

        text = render_text(diagnostics, result.sources, color=color)
        return FileRecord(path, result.ok, errors, len(diagnostics) - errors, codes, text=text)
    from envdsl.diagnostics.render_json import diagnostic_json

    rendered = tuple(diagnostic_json(diagnostic, result.sources) for diagnostic in diagnostics)
    return FileRecord(path, result.ok, errors, len(diagnostics) - errors, codes, rendered)


def crash_record(
    path: str, reason: str, output_format: str, color: bool, notes: Sequence[str] = ()
) -> FileRecord:
    """An E9001 record for a file whose check failed outside the compiler's own net."""
    from envdsl.diagnostics import codes
    from envdsl.diagnostics.diagnostic import Diagnostic
    from envdsl.util.source import SourceMap, Span

    diagnostic = Diagnostic(
        codes.INTERNAL_ERROR,
        f"internal error while checking this file: {reason}",
        Span(path, 0, 0),
        tuple(notes),
        "please report this with the spec that triggers it",
    )
    code = (codes.INTERNAL_ERROR.code,)
    if output_format == "text":
        from envdsl.diagnostics.render_text import render_text

        text = render_text([diagnostic], SourceMap(), color=color)
        return FileRecord(path, False, 1, 0, code, text=text)
    from envdsl.diagnostics.render_json import diagnostic_json

    return FileRecord(path, False, 1, 0, code, (diagnostic_json(diagnostic, SourceMap()),))


# ---- running many ----------------------------------------------------------------------------

Worker = Callable[[str, bool, str, bool, tuple[str, ...]], FileRecord]


def run_checks(
    paths: Sequence[str | Bundle],
    *,
    verify: bool,
    output_format: str,
    color: bool,
    jobs: int = 1,
    worker: Worker = check_one,
    mp_context: BaseContext | None = None,
    backend: Backend | None = None,
) -> Iterator[FileRecord]:
    """Check every spec (a path, or a bundle of a spec and its task files); yield the records
    in input order, each as soon as it can be.

    With a Ray backend each spec is a Ray task (`jobs` of them in flight; 0: twice the
    cluster's CPUs); a task that fails anyway gives an E9001 record, as a dead process does."""
    arguments = (verify, output_format, color)
    bundles = [Bundle(path) if isinstance(path, str) else path for path in paths]
    if backend is not None and backend.kind == RAY:
        check = _CheckFile(worker, *arguments)
        yield from ordered_map(check, bundles, replace(backend, concurrency=jobs), check.crashed)
        return
    if jobs <= 1 or len(bundles) <= 1:
        for bundle in bundles:
            yield worker(bundle.path, *arguments, bundle.task_files)
        return
    waiting: dict[int, FileRecord] = {}
    following = 0
    for index, record in _run_parallel(bundles, arguments, jobs, worker, mp_context):
        waiting[index] = record
        while following in waiting:
            yield waiting.pop(following)
            following += 1


@node
class _CheckFile:
    """check_one over a spec and its task files, with the options bound (picklable, for Ray
    tasks)."""

    worker: Worker
    verify: bool
    output_format: str
    color: bool

    def __call__(self, bundle: Bundle) -> FileRecord:
        return self.worker(
            bundle.path, self.verify, self.output_format, self.color, bundle.task_files
        )

    def crashed(self, bundle: Bundle, error: BaseException) -> FileRecord:
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:500]
        return crash_record(bundle.path, reason, self.output_format, self.color)


def _run_parallel(
    paths: Sequence[Bundle],
    arguments: tuple[bool, str, bool],
    jobs: int,
    worker: Worker,
    mp_context: BaseContext | None,
) -> Iterator[tuple[int, FileRecord]]:
    """Yield (index, record) as files complete. When a worker process dies, the files in
    flight (at most 2 x jobs) are re-checked one by one in a fresh process each, so the one
    that kills its process gets an E9001 record and the others their real results."""
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    to_do = deque(range(len(paths)))
    while to_do:
        suspects: list[int] = []
        pool = ProcessPoolExecutor(jobs, mp_context=mp_context, initializer=_worker_init)
        running: dict[Future[FileRecord], int] = {}
        try:
            while (to_do or running) and not suspects:
                while to_do and len(running) < 2 * jobs:
                    index = to_do.popleft()
                    bundle = paths[index]
                    job = pool.submit(worker, bundle.path, *arguments, bundle.task_files)
                    running[job] = index
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=running.__getitem__):
                    index = running.pop(future)
                    try:
                        yield index, future.result()
                    except BrokenProcessPool:
                        suspects.append(index)
                    except Exception as error:  # e.g. a record that cannot be pickled
                        reason = f"{type(error).__name__}: {error}"
                        yield index, crash_record(paths[index].path, reason, *arguments[1:])
            suspects.extend(running.values())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for index in sorted(suspects):
            yield index, _run_isolated(paths[index], arguments, worker, mp_context)


def _run_isolated(
    bundle: Bundle, arguments: tuple[bool, str, bool], worker: Worker, context: BaseContext | None
) -> FileRecord:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    path = bundle.path
    with ProcessPoolExecutor(1, mp_context=context, initializer=_worker_init) as pool:
        try:
            return pool.submit(worker, path, *arguments, bundle.task_files).result()
        except BrokenProcessPool:
            reason = "the worker process checking this file died"
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
    return crash_record(path, reason, *arguments[1:])


def _worker_init() -> None:
    """Ctrl-C is the parent's to handle: workers finish their file and are shut down."""
    import signal

    from envdsl.util.collector import collect_less_often

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    collect_less_often()  # as in the command line (spawned workers start with the defaults)


# ---- the summary and the progress bar --------------------------------------------------------


@record
class Summary:
    files: int = 0
    ok: int = 0
    with_errors: int = 0
    unreadable: int = 0
    errors: int = 0
    warnings: int = 0
    by_code: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.perf_counter)
    seconds: float = 0.0

    def add(self, record: FileRecord) -> None:
        self.files += 1
        if record.unreadable is not None:
            self.unreadable += 1
        elif record.ok:
            self.ok += 1
        else:
            self.with_errors += 1
        self.errors += record.errors
        self.warnings += record.warnings
        self.by_code.update(record.codes)

    def finish(self) -> None:
        self.seconds = time.perf_counter() - self.started

    @property
    def specs_per_second(self) -> float:
        return self.files / self.seconds if self.seconds > 0 else 0.0

    def codes_by_count(self) -> list[tuple[str, int]]:
        return sorted(self.by_code.items(), key=lambda item: (-item[1], item[0]))

    def as_json(self) -> JsonObject:
        return {
            "files": self.files,
            "ok": self.ok,
            "with_errors": self.with_errors,
            "unreadable": self.unreadable,
            "errors": self.errors,
            "warnings": self.warnings,
            "by_code": dict(self.codes_by_count()),
            "seconds": round(self.seconds, 3),
            "specs_per_second": round(self.specs_per_second, 1),
        }

    def as_text(self) -> str:
        from envdsl.diagnostics.codes import REGISTRY

        head = f"checked {self.files} specs: {self.ok} ok, {self.with_errors} with errors"
        if self.unreadable:
            head += f", {self.unreadable} unreadable"
        lines = [f"{head} ({_count(self.errors, 'error')}, {_count(self.warnings, 'warning')})"]
        slugs = {code: REGISTRY[code].slug if code in REGISTRY else "" for code in self.by_code}
        slug_width = max((len(slug) for slug in slugs.values()), default=0)
        for code, count in self.codes_by_count():
            lines.append(f"  {code}  {slugs[code]:<{slug_width}}  {count:>6}")
        lines.append(f"{self.seconds:.2f} s, {self.specs_per_second:.1f} specs/s")
        return "\n".join(lines)


def _count(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


class Progress(StatusLine):
    """`checked 120/1000 specs  12 with errors  85 specs/s` on one stderr line, redrawn in
    place and cleared at the end; only when stderr is a terminal."""

    def __init__(self, total: int, stream: TextIO) -> None:
        super().__init__(stream, PROGRESS_INTERVAL)
        self.total = total

    @staticmethod
    def wanted(total: int, stream: TextIO) -> bool:
        return total > PROGRESS_MIN_FILES and is_terminal(stream)

    def update(self, summary: Summary, *, force: bool = False) -> None:
        if not self.due(force):
            return
        elapsed = time.perf_counter() - summary.started
        rate = summary.files / elapsed if elapsed > 0 else 0.0
        line = f"checked {summary.files}/{self.total} specs  {summary.with_errors} with errors"
        if summary.unreadable:
            line += f"  {summary.unreadable} unreadable"
        line += f"  {rate:.0f} specs/s"
        self.draw(line)


# ---- the `check` command ---------------------------------------------------------------------


def run_check(
    arguments: Sequence[str],
    *,
    output_format: str,
    color: bool,
    verify: bool,
    jobs: int = 1,
    mp_context: BaseContext | None = None,
    backend: Backend | None = None,
) -> int:
    """Everything `envdsl check` does after parsing its options; returns the exit code."""
    try:
        expansion = expand_arguments(arguments, batch=output_format == "jsonl")
    except BatchUsageError as error:
        for message in error.messages:
            click.echo(f"envdsl: error: {message}", err=True)
        return EXIT_USAGE
    files = bundle_paths(expansion.files)
    summary = Summary()
    progress = Progress(len(files), sys.stderr) if Progress.wanted(len(files), sys.stderr) else None
    records: list[FileRecord] = []  # kept only where the output needs all of them at once
    stream = expansion.batch and output_format != "json"
    ray = backend is not None and backend.kind == RAY
    try:
        for record in run_checks(
            files,
            verify=verify,
            output_format=output_format,
            color=color,
            jobs=jobs if ray else resolve_jobs(jobs, len(files)),
            mp_context=mp_context,
            backend=backend,
        ):
            summary.add(record)
            if stream:
                if progress is not None:
                    progress.clear()
                _emit(record, output_format, color)
            else:
                records.append(record)
            if progress is not None:
                progress.update(summary)
    except BackendError as error:
        click.echo(f"envdsl: error: {error}", err=True)
        return EXIT_USAGE
    finally:
        if progress is not None:
            progress.clear()
    summary.finish()

    unreadable = [record for record in records if record.unreadable is not None]
    if unreadable and not expansion.batch:  # named files must all be readable
        for record in unreadable:
            click.echo(f"envdsl: error: cannot read '{record.path}': {record.unreadable}", err=True)
        return EXIT_USAGE
    if output_format == "json":
        _emit_document(records)
    else:
        for record in records:
            _emit(record, output_format, color)
    if output_format == "jsonl":
        click.echo(json.dumps({"summary": summary.as_json()}, ensure_ascii=False))
    elif output_format == "text" and summary.files > 1:
        click.echo("\n" + summary.as_text())
    if summary.files and summary.unreadable == summary.files:
        return EXIT_USAGE
    return EXIT_OK if summary.ok == summary.files else EXIT_ERRORS


def _emit(record: FileRecord, output_format: str, color: bool) -> None:
    if output_format == "jsonl":
        line: JsonObject = {
            "file": record.path,
            "ok": record.ok,
            "errors": record.errors,
            "warnings": record.warnings,
            "diagnostics": list(record.diagnostics),
        }
        if record.task_files:
            line["task_files"] = list(record.task_files)
        if record.unreadable is not None:
            line["unreadable"] = record.unreadable
        click.echo(json.dumps(line, ensure_ascii=False))
    elif record.unreadable is not None:
        click.echo(f"error: cannot read '{record.path}': {record.unreadable}")
    elif record.text:
        click.echo(record.text, nl=False, color=color)
    else:
        with_tasks = f" (with {', '.join(record.task_files)})" if record.task_files else ""
        click.echo(f"{record.path}{with_tasks}: ok", color=color)


def _emit_document(records: Sequence[FileRecord]) -> None:
    """The versioned `--format json` document; unreadable files of a batch go to stderr."""
    from envdsl.diagnostics.render_json import JSON_FORMAT_VERSION

    for record in records:
        if record.unreadable is not None:
            click.echo(f"envdsl: error: cannot read '{record.path}': {record.unreadable}", err=True)
    document = {
        "version": JSON_FORMAT_VERSION,
        "ok": all(record.ok for record in records),
        "diagnostics": [diagnostic for record in records for diagnostic in record.diagnostics],
    }
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))
