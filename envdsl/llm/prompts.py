"""The messages of the authoring loop. The system prompt is the language reference itself
(docs/language.md, packaged with envdsl) plus one complete example with tasks."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from envdsl.util.resources import language_reference, prompt_example

if TYPE_CHECKING:
    from envdsl.llm.envscaler import RecordTool

_RULES = """\
Rules for your reply:
- Reply with exactly one ```envdsl fenced block holding the whole spec (one `env`, with its
  imports above it); no other code block. Say nothing after the block.
- Use only what the reference below describes; do not invent syntax or builtins.
- Every tool has a docstring; every failure path has a clear message.
- Write at least one task: a docstring instruction for the agent, an `init` block with a small
  concrete state (every state field assigned), a `solution` (tool calls with named arguments)
  and `check` items that are false at `init` and true after the solution."""


@functools.cache
def system_prompt() -> str:
    return (
        "You write environments for LLM agents in envdsl, a small typed language. A spec "
        "declares the state (tables of rows), the tools an agent calls, the rules the state "
        "keeps and tasks with checks. The compiler checks the spec and runs its tasks; when it "
        "reports errors you will get them as JSON and must reply with the whole corrected "
        "spec.\n\n"
        f"{_RULES}\n\n"
        "# The language reference\n\n"
        f"{language_reference().strip()}\n\n"
        "# Another complete example\n\n"
        f"```envdsl\n{prompt_example().strip()}\n```\n"
    )


def topic_prompt(topic: str) -> str:
    return (
        f"Write an envdsl environment for this topic:\n\n{topic.strip()}\n\n"
        "Model the state the topic needs (about 3 to 5 entities), 6 to 12 tools (queries and "
        "actions) with the checks a real backend makes, invariants for the rules, and one or "
        "two tasks. Reply with the whole spec in one ```envdsl block."
    )


def envscaler_prompt(
    record: Mapping[str, Any],
    tools: Sequence[RecordTool] = (),
    start_states: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The first message for an EnvScaler environment record: its summary, state, rules and
    operations in prose, its tool list (names and parameters to keep) and one or two start
    states of its scenarios (to load as they are). Its Python code is left out: the spec is
    written from the design."""
    lines = [f"Write an envdsl environment for: {record.get('environment_summary', '').strip()}"]
    introduction = str(record.get("environment_introduction", "")).strip()
    if introduction:
        lines += ["", introduction]
    entities = record.get("state_space_definition") or []
    if entities:
        lines += ["", "State (entities, their attributes and meaning):"]
        for entity in entities:
            lines.append(
                f"- {entity.get('entity', '?')}: {entity.get('attributes', '')}. "
                f"{entity.get('description', '')}".rstrip()
            )
    rules = record.get("constraints_rules") or []
    if rules:
        lines += ["", "Rules the state and the tools must keep:"]
        lines += [f"- {rule}" for rule in rules]
    operations = record.get("operation_list") or []
    if operations:
        lines += ["", "Tools (name, kind, what it does):"]
        for operation in operations:
            kind = "action" if operation.get("operation_type") == "state_change" else "query"
            lines.append(
                f"- {operation.get('operation_name', '?')} ({kind}): "
                f"{operation.get('operation_description', '')}"
            )
    if tools:
        lines += [
            "",
            "The original's tools, to keep: every one, with exactly these names and parameter",
            "names (a parameter may get a better type: a datetime for a timestamp, an enum for a",
            "status; `?`: the original's callers may leave it out):",
        ]
        lines += [f"- {tool.signature()}: {tool.description}" for tool in tools]
    if start_states:
        lines += [
            "",
            "Start states of its scenarios, which the spec must load: each top-level key is a",
            "state field of that name (an object keyed by id is a table's rows, keyed by the",
            "row's key field), each row field keeps its name, every value must be allowed by",
            "its type, `unique` and the invariants, and a state field the states do not set",
            "needs a default. Unix-second numbers load into datetime fields. For example:",
        ]
        for state in start_states[:2]:
            shown = json.dumps(_sample(state), indent=1, ensure_ascii=False)
            lines += ["```json", shown, "```"]
    keep = (
        "Keep the tool names and parameters above, and the state's field names as in the "
        "start states."
        if tools or start_states
        else "Keep the tool names."
    )
    lines += [
        "",
        f"{keep} Entity and attribute names above may be cut off or oddly spelled;",
        "use clear names. Write one or two tasks. Reply with the whole spec in one ```envdsl block.",
    ]
    return "\n".join(lines)


def _sample(state: Mapping[str, Any], rows: int = 3) -> dict[str, Any]:
    """A start state with at most `rows` entries per object or list, one level down, so that
    a big state still shows its shape."""

    def cut(value: Any) -> Any:
        if isinstance(value, dict) and len(value) > rows:
            return dict(list(value.items())[:rows])
        if isinstance(value, list) and len(value) > rows:
            return value[:rows]
        return value

    return {name: cut(value) for name, value in state.items()}


_MAX_PROBLEMS = 12  # listed in one repair request; the rest are counted


def fit_repair_prompt(spec: str, problems: Sequence[str]) -> str:
    """The spec checks clean but does not fit the EnvScaler environment it migrates: tools
    missing or renamed, start states that do not load."""
    shown = list(problems[:_MAX_PROBLEMS])
    if len(problems) > _MAX_PROBLEMS:
        shown[-1] = f"... and {len(problems) - _MAX_PROBLEMS + 1} more"
    listed = "\n".join(f"- {problem}" for problem in shown)
    return (
        "This envdsl spec checks clean, but it does not fit the original environment yet:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        f"What differs ({len(problems)}):\n{listed}\n\n"
        "Fix every point (keep the original's tool and parameter names; make each start state "
        "load: widen an enum or a type, drop a `unique` or an invariant the data breaks, give "
        "a field the states leave out a default) and reply with the whole corrected spec in "
        "one ```envdsl block."
    )


def repair_prompt(spec: str, diagnostics: Mapping[str, Any], *, need_tasks: bool) -> str:
    """Ask for the whole corrected spec, quoting it and the compiler's JSON diagnostics."""
    errors = sum(1 for item in diagnostics.get("diagnostics", []) if item["severity"] == "error")
    tasks = (
        " The spec must also keep at least one task with init, solution and checks."
        if need_tasks
        else ""
    )
    return (
        "The envdsl compiler rejected this spec:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        f"It reports {errors} error(s). The diagnostics as JSON (spans are line:col in the spec "
        "above; `help` and `fixes` suggest a repair; warnings may stay):\n\n"
        f"```json\n{json.dumps(diagnostics, indent=1, ensure_ascii=False)}\n```\n\n"
        "Fix every error and reply with the whole corrected spec in one ```envdsl block." + tasks
    )


def tasks_prompt(spec: str) -> str:
    """The spec compiles but has no task: ask for the spec again with tasks added."""
    return (
        "This envdsl spec compiles, but it has no task:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        "Add one or two tasks, each with a docstring instruction for the agent, an `init` block "
        "that assigns every state field a small concrete value, a `solution` of tool calls with "
        "named arguments, and `check` items that are false at `init` and true after the "
        "solution. Keep the rest of the spec as it is. Reply with the whole spec in one "
        "```envdsl block."
    )


def no_task_repair_prompt(spec: str) -> str:
    return (
        "This reply still has no task:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        "Add at least one `task` with init, solution and checks inside the env and reply with "
        "the whole spec in one ```envdsl block."
    )


def no_spec_prompt(reason: str) -> str:
    return (
        f"I could not find a spec in your reply ({reason}). Reply with the whole spec in one "
        "```envdsl fenced block that starts with `env Name {`."
    )


def task_round_prompt(
    spec: str, target: str, summaries: Sequence[str], gaps: Sequence[str], count: int
) -> str:
    """One round of `envdsl synth tasks`: the spec, the tasks so far, what they miss."""
    accepted = "\n".join(f"- {line}" for line in summaries) or "- (none yet)"
    missing = "\n".join(f"- {line}" for line in gaps) or "- (nothing obvious: vary users and data)"
    return (
        "This envdsl spec is an environment for LLM agents:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        f"Tasks written for it so far (name: the tools its solution calls; instruction):\n"
        f"{accepted}\n\n"
        f"What those tasks do not cover yet (from the coverage report):\n{missing}\n\n"
        f"Write {count} new tasks, each different from the ones above: other tools, other "
        "users and data, longer workflows, failure-and-recovery paths (a request a rule "
        "refuses unless the agent first does the right thing), read-only questions answered "
        "with `answer`. Each task: a docstring instruction a user would give (with the ids "
        "the agent needs), an `init` with a small concrete state (every state field without a "
        "default assigned), a `solution` of tool calls with named arguments whose calls all "
        "succeed, and `check` items that are false at `init`, true after the solution, and "
        "fail for a run that does nothing or only reads. Reply with one ```envdsl block:\n\n"
        f'```envdsl\ntasks for "{target}" {{\n  task some_name {{\n    ...\n  }}\n}}\n```'
    )


def task_repair_prompt(spec: str, task_file: str, diagnostics: Mapping[str, Any]) -> str:
    """Ask for one rejected task again, with the compiler's verdict on it."""
    return (
        "The environment:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        "The envdsl compiler rejected this task of a task file for it:\n\n"
        f"```envdsl\n{task_file.rstrip()}\n```\n\n"
        "The diagnostics as JSON (spans are line:col in the task file above; `help` and "
        "`fixes` suggest a repair; a task is accepted only without errors and warnings):\n\n"
        f"```json\n{json.dumps(diagnostics, indent=1, ensure_ascii=False)}\n```\n\n"
        "Reply with the corrected task, alone, in the same `tasks for` block in one ```envdsl "
        "block."
    )


def no_tasks_prompt(reason: str, target: str) -> str:
    return (
        f"I could not find tasks in your reply ({reason}). Reply with one ```envdsl block "
        f'holding `tasks for "{target}" {{ task name {{ ... }} }}`.'
    )


def scenario_task_prompt(
    spec: str,
    target: str,
    header: str,
    instruction: str,
    checks: Sequence[tuple[str, str]],
) -> str:
    """`envdsl import-envscaler`: one EnvScaler scenario as a task of a task file. Its name,
    instruction and start state are given; the model writes the solution and translates the
    Python check functions."""
    listed = "\n\n".join(
        f"{number}. {item or '(no description)'}\n```python\n{function.strip()}\n```"
        for number, (item, function) in enumerate(checks, start=1)
    )
    return (
        "This envdsl spec is an environment for LLM agents:\n\n"
        f"```envdsl\n{spec.rstrip()}\n```\n\n"
        "Write one task for it from a scenario of the environment it was migrated from. The "
        f"instruction:\n\n{instruction.strip()}\n\n"
        "Its start state is already a JSON file of the spec's state. The scenario judged a "
        "run with these Python check functions (`final_state` is the state after the run, "
        "`initial_state` the start state; in envdsl a check reads the final state's fields "
        "by name and `initial.<field>` for the start):\n\n"
        f"{listed or '(none: write checks from the instruction)'}\n\n"
        "Write a `solution` of tool calls with named arguments that does what the "
        "instruction asks (its calls all succeed), and translate each check function into "
        'one `check "its description": expr` that means the same. Where the function '
        "tests something the instruction does not ask for, or that holds before the agent "
        "acts, translate it anyway: the compiler will judge it. Start the task exactly like "
        "this and reply with one ```envdsl block:\n\n"
        f'```envdsl\ntasks for "{target}" {{\n  {header.rstrip().replace(chr(10), chr(10) + "  ")}\n'
        '    solution {\n      ...\n    }\n    check "...": ...\n  }\n}\n```'
    )
