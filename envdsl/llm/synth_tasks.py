"""`envdsl synth tasks`: many verified tasks for one env, written into a task file.

Rounds: each round shows the model the spec, one-line summaries of the tasks accepted so far
and the gaps of their coverage report (envdsl.tasks.coverage), and asks for k new, different
tasks. Every candidate is checked on its own against the spec with the full task
verification (init valid, solution replays, checks pass, negative controls, under-
specification warnings); only a candidate without errors and warnings is accepted. A rejected
candidate goes back with its diagnostics for repair (at most max_repairs times, like
`envdsl synth`). A candidate that repeats an accepted task (the same tools in the same order
and checks of the same shape, literals aside) is dropped; a name already taken is made unique.

Each accepted task is written to the task file at once (atomically), so an interrupted run
resumes from the file: its tasks count as accepted. The compiler is the judge; nothing else
decides what a good task is.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from envdsl.llm import prompts
from envdsl.llm.client import ChatClient, Message
from envdsl.llm.extract import NoSpecError, extract_tasks
from envdsl.llm.loop import _CHECK_LOCK
from envdsl.syntax import ast
from envdsl.util.source import SourceFile

# statuses of one attempt
ACCEPTED = "accepted"
REJECTED = "rejected"  # errors or warnings: sent back for repair
DUPLICATE = "duplicate"
NO_TASKS = "no_tasks"  # the reply held no task block


class TaskSynthError(Exception):
    """The run cannot start (the spec has errors, the output is not where it may be)."""


@dataclass(slots=True)
class TaskAttempt:
    round: int  # the round that asked for the candidate
    repair: int  # 0: as first written, then 1..max_repairs
    task: str | None
    status: str
    errors: int
    warnings: int
    prompt_tokens: int
    completion_tokens: int
    codes: list[str] = field(default_factory=list)

    def log_record(self) -> dict[str, Any]:
        return {
            "phase": "tasks",
            "round": self.round,
            "repair": self.repair,
            "task": self.task,
            "status": self.status,
            "errors": self.errors,
            "warnings": self.warnings,
            "codes": self.codes,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(slots=True)
class TaskSynthResult:
    accepted: list[str]  # task names, the resumed ones first
    resumed: int
    rounds: int
    attempts: list[TaskAttempt]

    @property
    def message(self) -> str:
        new = len(self.accepted) - self.resumed
        drops = sum(1 for a in self.attempts if a.status == DUPLICATE)
        repairs = sum(1 for a in self.attempts if a.repair and a.status == ACCEPTED)
        return (
            f"{len(self.accepted)} tasks ({new} new, {self.resumed} resumed) after "
            f"{self.rounds} round{'s' if self.rounds != 1 else ''}; {repairs} accepted after "
            f"repair, {drops} duplicate{'s' if drops != 1 else ''} dropped"
        )


@dataclass(frozen=True, slots=True)
class _Verdict:
    ok: bool
    errors: int
    warnings: int
    codes: list[str]
    diagnostics: dict[str, Any]
    task: ast.TaskDecl | None


class TaskWriter:
    """The task file being written: the accepted tasks' texts, rewritten after each one."""

    def __init__(self, output: Path, target: str) -> None:
        self.output = output
        self.target = target
        self.tasks: list[str] = []  # each `task name { ... }`, dedented

    def file_text(self, tasks: list[str]) -> str:
        body = "\n\n".join(textwrap.indent(task.rstrip(), "  ") for task in tasks)
        return f'tasks for "{self.target}" {{\n{body}\n}}\n'

    def add(self, task: str) -> None:
        self.tasks.append(task)
        temporary = self.output.with_name(self.output.name + ".tmp")
        temporary.write_text(self.file_text(self.tasks), encoding="utf-8")
        temporary.replace(self.output)


@dataclass(frozen=True, slots=True)
class SynthTasksOptions:
    count: int = 40  # tasks the task file should hold (resumed ones count)
    per_round: int = 5
    max_repairs: int = 2
    max_rounds: int | None = None


def run_synth_tasks(
    client: ChatClient,
    spec_path: Path,
    output: Path,
    options: SynthTasksOptions,
    log_path: str | None = None,
    progress: TextIO | None = None,
) -> TaskSynthResult:
    """`envdsl synth tasks`: the generator with its JSONL log (one record per attempt, then a
    `done` record) and, on a terminal, a progress bar on `progress`."""
    log = open(log_path, "a", encoding="utf-8") if log_path is not None else None
    bar = progress if progress is not None and progress.isatty() else None
    accepted = 0

    def on_attempt(attempt: TaskAttempt) -> None:
        nonlocal accepted
        accepted += attempt.status == ACCEPTED
        if log is not None:
            log.write(json.dumps({"id": output.name, **attempt.log_record()}) + "\n")
            log.flush()
        if bar is not None:
            done = min(accepted, options.count)
            filled = int(20 * done / options.count)
            bar.write(
                f"\r[{'#' * filled}{'.' * (20 - filled)}] {done}/{options.count} new tasks, "
                f"round {attempt.round}"
            )
            bar.flush()
        elif progress is not None:
            shown = attempt.task or "(no task in the reply)"
            progress.write(f"round {attempt.round}: {shown} {attempt.status}\n")

    try:
        result = synthesize_tasks(
            client,
            spec_path,
            output,
            count=options.count,
            per_round=options.per_round,
            max_repairs=options.max_repairs,
            max_rounds=options.max_rounds,
            on_attempt=on_attempt,
        )
        if log is not None:
            done = {"id": output.name, "phase": "done", "tasks": len(result.accepted)}
            log.write(json.dumps({**done, "message": result.message}) + "\n")
    finally:
        if log is not None:
            log.close()
        if bar is not None:
            bar.write("\n")
    return result


def synthesize_tasks(
    client: ChatClient,
    spec_path: Path,
    output: Path,
    *,
    count: int,
    per_round: int = 5,
    max_repairs: int = 2,
    max_rounds: int | None = None,
    on_attempt: Callable[[TaskAttempt], None] | None = None,
) -> TaskSynthResult:
    """Ask for tasks in rounds until `count` are accepted (or max_rounds, by default twice
    the rounds `count` needs, have run). Raises TaskSynthError, LLMError (server) and OSError
    (writing the output)."""
    target = task_file_target(spec_path, output)
    spec = SourceFile(str(spec_path), spec_path.read_text(encoding="utf-8"))
    writer = TaskWriter(output, target)
    session = _Session(client, spec, writer, max_repairs, on_attempt)
    session.start()
    limit = max_rounds if max_rounds is not None else 2 * -(-count // per_round) + 1
    rounds = 0
    while len(session.names) - session.own < count and rounds < limit:
        rounds += 1
        session.round(rounds, min(per_round, count - (len(session.names) - session.own)))
    accepted = session.names[session.own :]
    return TaskSynthResult(accepted, session.resumed, rounds, session.attempts)


def task_file_target(spec_path: Path, output: Path) -> str:
    """The env path the task file names: the spec relative to the output's directory, which
    must hold the spec (a task file names its env inside its own directory tree)."""
    relative = os.path.relpath(os.path.realpath(spec_path), os.path.realpath(output.parent))
    if relative.startswith(os.pardir + os.sep) or relative == os.pardir or os.path.isabs(relative):
        raise TaskSynthError(
            f"the task file must be in the spec's directory or above it: '{output}' cannot "
            f"name '{spec_path}'"
        )
    return relative.replace(os.sep, "/")


class _Session:
    def __init__(
        self,
        client: ChatClient,
        spec: SourceFile,
        writer: TaskWriter,
        max_repairs: int,
        on_attempt: Callable[[TaskAttempt], None] | None,
    ) -> None:
        self.client = client
        self.spec = spec
        self.writer = writer
        self.max_repairs = max_repairs
        self.on_attempt = on_attempt
        self.attempts: list[TaskAttempt] = []
        self.names: list[str] = []  # the spec's own tasks, then the accepted ones
        self.summaries: list[str] = []
        self.signatures: set[tuple[object, ...]] = set()
        self.own = 0
        self.resumed = 0
        self._tokens = (0, 0)
        self.base: list[Message] = [{"role": "system", "content": prompts.system_prompt()}]

    # ---- the state so far -----------------------------------------------------------------------
    def start(self) -> None:
        """Check the spec and the task file left by an earlier run (its tasks are kept)."""
        from envdsl.pipeline import check_source

        resumed: list[SourceFile] = []
        if self.writer.output.exists():
            resumed = [SourceFile(str(self.writer.output), self.writer.output.read_text("utf-8"))]
        with _CHECK_LOCK:
            result = check_source(self.spec, verify=False, task_files=resumed)
        if not result.ok or result.spec is None or result.spec.env is None:
            first = next((d for d in result.diagnostics if d.is_error), None)
            why = f": {first.code.code} {first.message}" if first is not None else ""
            raise TaskSynthError(f"the spec or the existing task file has errors{why}")
        for task in result.spec.env.of_type(ast.TaskDecl):
            self._remember(task)
            if task.span.file == self.spec.path:
                self.own += 1
            else:  # resumed: keep its text as it is
                self.writer.tasks.append(_task_text(resumed[0].text, task))
                self.resumed += 1

    def _remember(self, task: ast.TaskDecl) -> None:
        self.names.append(task.name.text)
        self.signatures.add(signature(task))
        tools = " -> ".join(_tool(step) for step in task.solution or ()) or "no solution"
        instruction = " ".join((task.doc.value if task.doc else "").split())
        shown = instruction if len(instruction) <= 100 else instruction[:97] + "..."
        self.summaries.append(f"{task.name.text}: {tools}; {shown}")

    def gaps(self) -> list[str]:
        from envdsl.tasks.coverage import coverage_of_sources, gaps

        accepted = SourceFile(str(self.writer.output), self.writer.file_text(self.writer.tasks))
        with _CHECK_LOCK:
            report = coverage_of_sources(self.spec, [accepted] if self.writer.tasks else [])
        return gaps(report)

    # ---- one round ------------------------------------------------------------------------------
    def round(self, number: int, wanted: int) -> None:
        prompt = prompts.task_round_prompt(
            self.spec.text, self.writer.target, self.summaries, self.gaps(), wanted
        )
        messages = [*self.base, {"role": "user", "content": prompt}]
        goal = len(self.names) + wanted
        for candidate in self._ask(messages, number, 0):
            if len(self.names) >= goal:
                break  # more than was asked for: the next round's prompt asks again
            self._settle(candidate, number)

    def _ask(self, messages: list[Message], number: int, repair: int) -> list[str]:
        """The task texts of the model's reply; [] (recorded) when it holds none."""
        reply = self.client.complete(messages)
        self._tokens = (reply.prompt_tokens, reply.completion_tokens)
        try:
            block = extract_tasks(reply.text)
        except NoSpecError:
            self._record(TaskAttempt(number, repair, None, NO_TASKS, 0, 0, *self._take_tokens()))
            return []
        return split_tasks(block)

    def _settle(
        self,
        candidate: str,
        number: int,
        pin: Callable[[str], str] | None = None,
        drop_duplicates: bool = True,
    ) -> _Verdict | None:
        """Verify one candidate; accept it, drop it, or repair it and try again. `pin` fixes
        what the model may not change (an imported scenario's name, instruction and init)
        in every version of the candidate. Returns the last verdict (None: the last reply
        held no task)."""
        for repair in range(self.max_repairs + 1):
            candidate = pin(candidate) if pin is not None else self._unique_name(candidate)
            verdict = self._verify(candidate)
            name = verdict.task.name.text if verdict.task is not None else None
            counts = (verdict.errors, verdict.warnings, *self._take_tokens())
            if verdict.ok and verdict.task is not None:
                if drop_duplicates and signature(verdict.task) in self.signatures:
                    self._record(TaskAttempt(number, repair, name, DUPLICATE, *counts))
                    return verdict
                self._record(TaskAttempt(number, repair, name, ACCEPTED, *counts))
                self.writer.add(candidate)
                self._remember(verdict.task)
                return verdict
            self._record(TaskAttempt(number, repair, name, REJECTED, *counts, verdict.codes))
            if repair == self.max_repairs:
                return verdict
            follow_up = prompts.task_repair_prompt(
                self.spec.text, self.writer.file_text([candidate]), verdict.diagnostics
            )
            replies = self._ask(
                [*self.base, {"role": "user", "content": follow_up}], number, repair + 1
            )
            if not replies:
                return None
            candidate = replies[0]
        return None

    def _verify(self, candidate: str) -> _Verdict:
        from envdsl.diagnostics.render_json import diagnostic_json
        from envdsl.pipeline import check_source

        path = str(self.writer.output)
        task_file = SourceFile(path, self.writer.file_text([candidate]))
        with _CHECK_LOCK:
            result = check_source(self.spec, task_files=[task_file], verify_spec_tasks=False)
        mine = [d for d in result.diagnostics if d.span.file == path or d.is_error]
        errors = sum(1 for d in mine if d.is_error)
        document = {"diagnostics": [diagnostic_json(d, result.sources) for d in mine]}
        env = result.spec.env if result.spec is not None else None
        tasks = [t for t in env.of_type(ast.TaskDecl) if t.span.file == path] if env else []
        return _Verdict(
            ok=result.ok and not mine and len(tasks) == 1,
            errors=errors,
            warnings=len(mine) - errors,
            codes=[d.code.code for d in mine],
            diagnostics=document,
            task=tasks[0] if len(tasks) == 1 else None,
        )

    def _unique_name(self, candidate: str) -> str:
        """The candidate with `_2`, `_3`, ... added to its name if the name is taken."""
        header = candidate.split("{", 1)[0]
        name = header.split()[1] if len(header.split()) > 1 else ""
        if name not in self.names:
            return candidate
        number = 2
        while f"{name}_{number}" in self.names:
            number += 1
        return candidate.replace(f"task {name}", f"task {name}_{number}", 1)

    def _take_tokens(self) -> tuple[int, int]:
        """The last reply's token counts, for the first attempt that comes of it only."""
        tokens, self._tokens = self._tokens, (0, 0)
        return tokens

    def _record(self, attempt: TaskAttempt) -> None:
        self.attempts.append(attempt)
        if self.on_attempt is not None:
            self.on_attempt(attempt)


def split_tasks(block: str) -> list[str]:
    """Each `task name { ... }` of a reply's block (inside `tasks for` or not), dedented; a
    block the parser rejects is one candidate, so that its diagnostics go back for repair."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    text = block if block.lstrip().startswith("tasks") else f'tasks for "x" {{\n{block}}}\n'
    source = SourceFile("reply.env", text)
    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    spec = build_ast(tree, source, sink) if tree is not None else None
    if sink.has_errors or spec is None or spec.tasks_for is None or not spec.tasks_for.tasks:
        inner = _inside_tasks_for(block)
        return [inner] if inner.strip() else []
    return [_task_text(text, task) for task in spec.tasks_for.tasks]


def _inside_tasks_for(block: str) -> str:
    """A broken block's tasks without the `tasks for "..." {` line and its closing brace."""
    stripped = block.strip()
    if stripped.startswith("tasks") and "{" in stripped:
        stripped = stripped.split("{", 1)[1].rstrip()
        stripped = stripped[:-1] if stripped.endswith("}") else stripped
    return textwrap.dedent(stripped.strip("\n")) + "\n"


def _task_text(text: str, task: ast.TaskDecl) -> str:
    line_start = text.rfind("\n", 0, task.span.start) + 1
    return textwrap.dedent(text[line_start : task.span.end]) + "\n"


def _tool(step: ast.SolutionStep) -> str:
    assert isinstance(step.call.func, ast.NameRef)
    return step.call.func.name


def signature(task: ast.TaskDecl) -> tuple[object, ...]:
    """What makes two tasks the same task: the tools of the solution in order and the shapes
    of the checks (their literals left out), whatever the instruction and the data say."""
    tools = tuple(_tool(step) for step in task.solution or ())
    return tools, tuple(sorted(shape(check.cond) for check in task.checks))


_LITERALS = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit, ast.FString)


def shape(node: object) -> str:
    """An expression with its literals replaced by their kind: `count == 2` ~ `count == 3`."""
    if isinstance(node, _LITERALS):
        return type(node).__name__
    if isinstance(node, ast.Name):
        return node.text
    if isinstance(node, str):
        return node
    if isinstance(node, tuple):
        return "(" + ",".join(shape(item) for item in node) + ")"
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return type(node).__name__
    values = [getattr(node, name) for name in fields if name != "span"]
    # a flag is part of the shape where it is set (`state.count` is NameRef(count,True)), and
    # a flag added to a node later leaves the shapes of nodes without it as they were
    inner = ",".join(
        "True" if value is True else shape(value) for value in values if value is not False
    )
    return f"{type(node).__name__}({inner})"
