"""The write-check-repair loop.

Phase "spec": ask for a spec, check it (tasks are run too), and while it has errors send the
spec back with the JSON diagnostics and ask for the whole corrected spec, up to max_repairs
times. A spec is accepted as soon as it has no errors (warnings are fine). Phase "tasks": if
the accepted spec has no task, ask for tasks and repair them from the task-verification
diagnostics the same way. Each repair message stands alone (system prompt, the original
request, the spec and its diagnostics), so a conversation never grows past one spec.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from envdsl.llm import prompts
from envdsl.llm.client import ChatClient, Message
from envdsl.llm.extract import NoSpecError, extract_spec

# Checking runs generated modules, which are registered in sys.modules under the env's name
# while they load; two threads loading envs of the same name must not interleave. Checking is
# CPU-bound Python, so the lock costs nothing that threads could have won.
_CHECK_LOCK = threading.Lock()

# Final statuses of a synth.
ACCEPTED = "accepted"
ACCEPTED_WITHOUT_TASKS = "accepted_without_tasks"
FAILED = "failed"

# Statuses of one attempt.
CLEAN = "clean"
ERRORS = "errors"
NO_SPEC = "no_spec"
NO_TASKS = "no_tasks"
DIFFERS = "differs"  # clean, but the vet (an EnvScaler migration's fit) found problems

# After a clean check: the spec's text and its checked model -> what is still wrong with it
# (envdsl.llm.envscaler_fit); [] accepts it
Vet = Callable[[str, object], list[str]]


@dataclass(slots=True)
class Attempt:
    phase: str  # "spec" or "tasks"
    round: int  # 0 is the first try of the phase, then 1..max_repairs
    status: str  # clean, errors, no_spec (the reply held none), no_tasks (tasks phase)
    errors: int
    warnings: int
    prompt_tokens: int
    completion_tokens: int
    spec: str | None
    diagnostics: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)  # the vet's, when status is differs

    def log_record(self) -> dict[str, Any]:
        extra = {"problems": self.problems} if self.problems else {}
        return {
            "round": self.round,
            "phase": self.phase,
            "errors": self.errors,
            "warnings": self.warnings,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "status": self.status,
            **extra,
        }


@dataclass(slots=True)
class SynthResult:
    status: str  # accepted, accepted_without_tasks, failed
    message: str  # one line
    spec: str | None  # the accepted spec
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def last_spec(self) -> str | None:
        """The spec of the last attempt that had one (what a failed synth leaves behind)."""
        return next((a.spec for a in reversed(self.attempts) if a.spec is not None), None)

    @property
    def last_diagnostics(self) -> dict[str, Any] | None:
        return next((a.diagnostics for a in reversed(self.attempts) if a.diagnostics), None)

    @property
    def repairs(self) -> int:
        """Repair rounds of the spec phase (0 when the first reply was clean)."""
        return max((a.round for a in self.attempts if a.phase == "spec"), default=0)

    @property
    def first_try_clean(self) -> bool:
        first = self.attempts[0] if self.attempts else None
        return first is not None and first.phase == "spec" and first.status == CLEAN

    @property
    def prompt_tokens(self) -> int:
        return sum(a.prompt_tokens for a in self.attempts)

    @property
    def completion_tokens(self) -> int:
        return sum(a.completion_tokens for a in self.attempts)


@dataclass(frozen=True, slots=True)
class _Checked:
    ok: bool
    has_tasks: bool
    errors: int
    warnings: int
    document: dict[str, Any]
    checked: object = None  # the semantic model (CheckedSpec) when the spec has no errors


def check_spec(spec: str, path: str) -> _Checked:
    from envdsl.diagnostics.render_json import render_json
    from envdsl.pipeline import check_source
    from envdsl.syntax import ast
    from envdsl.util.source import SourceFile

    with _CHECK_LOCK:
        result = check_source(SourceFile(path, spec))
    document = render_json([result])
    severities = [item["severity"] for item in document["diagnostics"]]
    env = result.spec.env if result.spec is not None else None
    return _Checked(
        ok=result.ok,
        has_tasks=env is not None and bool(env.of_type(ast.TaskDecl)),
        errors=severities.count("error"),
        warnings=severities.count("warning"),
        document=document,
        checked=result.checked if result.ok else None,
    )


def synthesize(
    client: ChatClient,
    request: str,
    *,
    max_repairs: int = 3,
    want_tasks: bool = True,
    path: str = "spec.env",
    on_attempt: Callable[[Attempt], None] | None = None,
    vet: Vet | None = None,
) -> SynthResult:
    """Run the loop for one request (a topic prompt or an EnvScaler prompt).

    Raises LLMError when the server cannot be used (after the client's retries); `path` names
    the spec in the diagnostics' spans. `vet` judges each clean spec further: the problems it
    lists go back as a repair request, in the same bounded rounds.
    """
    attempts: list[Attempt] = []

    def record(attempt: Attempt) -> Attempt:
        attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        return attempt

    base: list[Message] = [
        {"role": "system", "content": prompts.system_prompt()},
        {"role": "user", "content": request},
    ]
    spec_phase = _phase(client, "spec", base, base, max_repairs, False, path, record, vet)
    if spec_phase is None:
        return SynthResult(FAILED, _failure_message(attempts, max_repairs), None, attempts)
    accepted, checked = spec_phase
    if checked.has_tasks or not want_tasks:
        return SynthResult(ACCEPTED, _accepted_message(attempts), accepted, attempts)
    ask_tasks = base + [{"role": "user", "content": prompts.tasks_prompt(accepted)}]
    tasks_phase = _phase(client, "tasks", base, ask_tasks, max_repairs, True, path, record, vet)
    if tasks_phase is None:
        message = "the spec is clean but has no task: " + _failure_message(
            [a for a in attempts if a.phase == "tasks"], max_repairs
        )
        return SynthResult(ACCEPTED_WITHOUT_TASKS, message, accepted, attempts)
    return SynthResult(ACCEPTED, _accepted_message(attempts), tasks_phase[0], attempts)


def _phase(
    client: ChatClient,
    phase: str,
    base: Sequence[Message],
    first_messages: Sequence[Message],
    max_repairs: int,
    need_tasks: bool,
    path: str,
    record: Callable[[Attempt], Attempt],
    vet: Vet | None = None,
) -> tuple[str, _Checked] | None:
    messages = list(first_messages)
    for round_number in range(max_repairs + 1):
        reply = client.complete(messages)
        tokens = (reply.prompt_tokens, reply.completion_tokens)
        try:
            spec = extract_spec(reply.text)
        except NoSpecError as error:
            reason = str(error)
            if reply.finish_reason == "length":
                reason += " (the reply was cut off at the token limit)"
            record(Attempt(phase, round_number, NO_SPEC, 0, 0, *tokens, None, None))
            messages = [
                *first_messages,
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": prompts.no_spec_prompt(reason)},
            ]
            continue
        checked = check_spec(spec, path)
        if checked.ok and (checked.has_tasks or not need_tasks):
            problems = vet(spec, checked.checked) if vet is not None else []
            if not problems:
                record(
                    Attempt(phase, round_number, CLEAN, 0, checked.warnings, *tokens, spec, None)
                )
                return spec, checked
            record(
                Attempt(
                    phase, round_number, DIFFERS, 0, checked.warnings, *tokens, spec, None,
                    problems,
                )  # fmt: skip
            )
            messages = [
                *base,
                {"role": "user", "content": prompts.fit_repair_prompt(spec, problems)},
            ]
            continue
        status = ERRORS if not checked.ok else NO_TASKS
        record(
            Attempt(
                phase,
                round_number,
                status,
                checked.errors,
                checked.warnings,
                *tokens,
                spec,
                checked.document,
            )
        )
        follow_up = (
            prompts.repair_prompt(spec, checked.document, need_tasks=need_tasks)
            if not checked.ok
            else prompts.no_task_repair_prompt(spec)
        )
        messages = [*base, {"role": "user", "content": follow_up}]
    return None


def _accepted_message(attempts: Sequence[Attempt]) -> str:
    spec_repairs = max((a.round for a in attempts if a.phase == "spec"), default=0)
    text = f"accepted after {_rounds(spec_repairs)}"
    task_attempts = [a for a in attempts if a.phase == "tasks"]
    if task_attempts:
        text += f"; tasks added after {_rounds(task_attempts[-1].round)}"
    last = attempts[-1]
    if last.warnings:
        text += f" ({last.warnings} warning{'s' if last.warnings != 1 else ''})"
    return text


def _rounds(count: int) -> str:
    return f"{count} repair round{'s' if count != 1 else ''}"


def _failure_message(attempts: Sequence[Attempt], max_repairs: int) -> str:
    last = attempts[-1]
    limit = f"after {_rounds(max_repairs)}"
    if last.status == NO_SPEC:
        return f"no spec {limit}: the last reply held no spec"
    if last.status == NO_TASKS:
        return f"no task {limit}: the last reply still had no task"
    if last.status == DIFFERS:
        count = len(last.problems)
        return (
            f"the spec checks clean but {count} difference{'s' if count != 1 else ''} from the "
            f"original {'are' if count != 1 else 'is'} left {limit}; first: {last.problems[0]}"
        )
    first = _first_error(last.diagnostics)
    return f"{last.errors} error{'s' if last.errors != 1 else ''} left {limit}" + (
        f"; first: {first}" if first else ""
    )


def _first_error(document: dict[str, Any] | None) -> str:
    for item in (document or {}).get("diagnostics", []):
        if item["severity"] == "error":
            start = item["span"]["start"]
            return f"{item['code']} {item['message']} (line {start['line']}:{start['col']})"
    return ""
