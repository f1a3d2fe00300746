"""`envdsl import-envscaler`: EnvScaler scenario records as a verified task file.

Each scenario becomes one task: its start state (`init_config`, converted as
envdsl.llm.envscaler_states says) is written to `<output>.states/<task>.json` and the task
starts `init from` it; its instruction (`task`) is the task's docstring; the model writes a
solution and translates each Python check function into an envdsl `check`. The name, the
instruction and the init are pinned: whatever the model writes there is replaced. Each
candidate is verified and repaired exactly as `envdsl synth tasks` does it (its _Session: the
full task verification, accepted only without errors and warnings, at most max_repairs repair
requests); a scenario that cannot be made clean is listed with the first diagnostic left.

Tasks already in the output file are kept and their scenarios skipped, so a rerun resumes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from envdsl.llm import prompts
from envdsl.llm.client import ChatClient
from envdsl.llm.envscaler import Scenario
from envdsl.llm.envscaler_states import convert_state, environment_of_checked, load_failures
from envdsl.llm.loop import _CHECK_LOCK
from envdsl.llm.synth_tasks import (
    ACCEPTED,
    TaskAttempt,
    TaskSynthError,
    TaskWriter,
    _Session,
    _Verdict,
    task_file_target,
)
from envdsl.util.source import SourceFile

if TYPE_CHECKING:
    from envdsl.runtime import Environment


@dataclass(frozen=True, slots=True)
class ScenarioOutcome:
    scenario: str  # its id (task_id)
    task: str  # the task's name
    accepted: bool
    reason: str  # why it is not in the task file ("" when it is)
    resumed: bool = False


@dataclass(slots=True)
class ImportResult:
    outcomes: list[ScenarioOutcome] = field(default_factory=list)
    attempts: list[TaskAttempt] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return sum(1 for o in self.outcomes if o.accepted)

    @property
    def message(self) -> str:
        resumed = sum(1 for o in self.outcomes if o.resumed)
        repaired = sum(1 for a in self.attempts if a.repair and a.status == ACCEPTED)
        return (
            f"{self.accepted} of {len(self.outcomes)} scenarios are tasks ({resumed} resumed, "
            f"{repaired} accepted after repair)"
        )


def task_name(scenario: Scenario, index: int) -> str:
    """`scenario_<task_id>` in name characters (`scenario_<n>` for an id that has none)."""
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", scenario.id).strip("_").lower()
    return f"scenario_{slug[:40] or index + 1}"


def import_scenarios(
    client: ChatClient,
    spec_path: Path,
    output: Path,
    scenarios: Sequence[Scenario],
    *,
    max_repairs: int = 2,
    on_attempt: Callable[[TaskAttempt], None] | None = None,
) -> ImportResult:
    """Turn scenarios into tasks of the task file `output`. Raises TaskSynthError (the spec
    or the existing task file has errors, the output cannot name the spec), LLMError and
    OSError."""
    target = task_file_target(spec_path, output)
    spec = SourceFile(str(spec_path), spec_path.read_text(encoding="utf-8"))
    session = _Session(client, spec, TaskWriter(output, target), max_repairs, on_attempt)
    session.start()
    env_class = _environment(spec)
    states_dir = output.with_name(output.name.removesuffix(".env") + ".states")
    result = ImportResult(attempts=session.attempts)
    names = _unique_names(scenarios)
    for number, (scenario, name) in enumerate(zip(scenarios, names), start=1):
        if name in session.names:
            result.outcomes.append(ScenarioOutcome(scenario.id, name, True, "", resumed=True))
            continue
        [(_, unloadable)] = load_failures([scenario], env_class)
        if unloadable is not None:  # no task can start there: the model is not asked
            reason = f"its start state does not load: {unloadable}"
            result.outcomes.append(ScenarioOutcome(scenario.id, name, False, reason))
            continue
        states_dir.mkdir(exist_ok=True)
        state_file = states_dir / f"{name}.json"
        state = convert_state(scenario.init_config, env_class)
        state_file.write_text(json.dumps(state, indent=1, ensure_ascii=False) + "\n", "utf-8")
        init_path = f"{states_dir.name}/{state_file.name}"
        reason = _settle_scenario(session, scenario, name, init_path, number)
        result.outcomes.append(ScenarioOutcome(scenario.id, name, not reason, reason))
    return result


def _settle_scenario(
    session: _Session, scenario: Scenario, name: str, init_path: str, number: int
) -> str:
    """Ask for the scenario's task and settle it; why it is not accepted ("" when it is)."""
    skeleton = pinned_header(name, scenario.task, init_path)
    prompt = prompts.scenario_task_prompt(
        session.spec.text,
        session.writer.target,
        skeleton,
        scenario.task,
        [(check.item, check.function) for check in scenario.checks],
    )
    candidates = session._ask([*session.base, {"role": "user", "content": prompt}], number, 0)
    if not candidates:
        return "the model's reply held no task"

    def pin(candidate: str) -> str:
        return pin_task(candidate, name, scenario.task, init_path)

    verdict = session._settle(candidates[0], number, pin=pin, drop_duplicates=False)
    if verdict is None:
        return "the model's repair held no task"
    if verdict.ok and verdict.task is not None:
        return ""
    return _first_problem(verdict)


def _first_problem(verdict: _Verdict) -> str:
    items = verdict.diagnostics.get("diagnostics", [])
    ranked = sorted(items, key=lambda item: item.get("severity") != "error")
    if not ranked:
        return "the reply is not one task"
    first = ranked[0]
    return f"{first['code']} {first['message']}"


def _unique_names(scenarios: Sequence[Scenario]) -> list[str]:
    names: list[str] = []
    for index, scenario in enumerate(scenarios):
        name = base = task_name(scenario, index)
        number = 2
        while name in names:
            name, number = f"{base}_{number}", number + 1
        names.append(name)
    return names


def _environment(spec: SourceFile) -> type[Environment]:
    from envdsl.pipeline import check_source

    with _CHECK_LOCK:
        result = check_source(spec, verify=False)
    if not result.ok:
        raise TaskSynthError("the spec has errors")
    return environment_of_checked(result.checked)


# ---- pinning the scenario's own parts ---------------------------------------------------------


def pinned_header(name: str, instruction: str, init_path: str) -> str:
    """The start of the task as it must be: name, instruction, init."""
    return f"task {name} {{\n  {_long_string(instruction)}\n  init from {json.dumps(init_path)}\n"


def _long_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"""{escaped}"""'


def pin_task(candidate: str, name: str, instruction: str, init_path: str) -> str:
    """The candidate with its name, docstring and init replaced by the scenario's (added
    where missing). A candidate that does not parse as one task is returned as it is: its
    diagnostics go back for repair."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    prefix, suffix = 'tasks for "x" {\n', "}\n"
    text = prefix + candidate + suffix
    source = SourceFile("candidate.env", text)
    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    spec = build_ast(tree, source, sink) if tree is not None else None
    if sink.has_errors or spec is None or spec.tasks_for is None:
        return candidate
    if len(spec.tasks_for.tasks) != 1:
        return candidate
    task = spec.tasks_for.tasks[0]
    opening = text.index("{", task.name.span.end)
    edits = [
        (*_whole_lines(text, part.span.start, part.span.end), "")
        for part in (task.doc, task.init)
        if part
    ]
    head = f"\n  {_long_string(instruction)}\n  init from {json.dumps(init_path)}"
    edits.append((opening + 1, opening + 1, head))
    edits.append((task.name.span.start, task.name.span.end, name))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text[len(prefix) : len(text) - len(suffix)]


def _whole_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to its lines' indentation and line break, when it stands alone on
    them (so that removing it leaves no blank line)."""
    before = text.rfind("\n", 0, start) + 1
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if text[before:start].strip() or (after < len(text) and text[after] != "\n"):
        return start, end
    return before, after + 1
