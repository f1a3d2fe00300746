"""EnvScaler inputs: an environment record's tool list and its scenario records.

An environment record (envdsl synth --from-envscaler) carries `tools`, the OpenAI function
schemas of its Python class. A scenario record is what EnvScaler's ScenGenerator writes
(scen_generator/README.md in RUC-NLPIR/EnvScaler, "Step 3 Output Format"):

    {"env_id": "env_001", "env_class_name": "HospitalEnv", "task_id": "...",
     "init_config": {...the class's attributes...}, "task": "the instruction",
     "checklist": ["Has ...?"],
     "checklist_with_func": [{"check_item": "Has ...?", "check_func": "def check_func(final_state): ..."}]}

A migrated spec must keep the tools' names and parameters (compared here, after the spec
checks clean) and load every scenario's start state (envdsl.llm.envscaler_states).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from envdsl.runtime import Environment


class ScenarioError(Exception):
    """A scenario file that is not a list of EnvScaler scenario records."""


@dataclass(frozen=True, slots=True)
class RecordParam:
    name: str
    type: str  # the JSON schema type as the record gives it ("" when it gives none)
    required: bool


@dataclass(frozen=True, slots=True)
class RecordTool:
    name: str
    description: str  # its first paragraph (the Args/Returns parts left out)
    params: tuple[RecordParam, ...]

    def signature(self) -> str:
        shown = [f"{p.name}: {p.type or 'any'}{'' if p.required else '?'}" for p in self.params]
        return f"{self.name}({', '.join(shown)})"


def record_tools(record: Mapping[str, Any]) -> list[RecordTool]:
    """The record's `tools` (OpenAI function schemas); malformed entries are skipped."""
    tools: list[RecordTool] = []
    for entry in record.get("tools") or []:
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        parameters = parameters if isinstance(parameters, dict) else {}
        properties = parameters.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = parameters.get("required")
        required = set(required) if isinstance(required, list) else set()
        params = tuple(
            RecordParam(
                name,
                str(schema.get("type", "")) if isinstance(schema, dict) else "",
                name in required,
            )
            for name, schema in properties.items()
        )
        tools.append(RecordTool(function["name"], _first_paragraph(function), params))
    return tools


def _first_paragraph(function: Mapping[str, Any]) -> str:
    text = str(function.get("description") or "").strip()
    paragraph = text.split("\n\n", 1)[0]
    line = " ".join(paragraph.split())
    return line if len(line) <= 200 else line[:197] + "..."


def tool_differences(tools: Sequence[RecordTool], env_class: type[Environment]) -> list[str]:
    """How the spec's public tools differ from the record's: a missing tool, a parameter
    missing or renamed, a parameter the original's callers do not send that the spec
    requires. Types are not compared (a timestamp may become a datetime, a status an enum);
    nor is requiredness, since EnvScaler lists parameters with defaults as required."""
    problems: list[str] = []
    spec_tools = env_class.TOOLS
    for tool in tools:
        spec = spec_tools.get(tool.name)
        if spec is None:
            near = _near_names(tool.name, [n for n in spec_tools if n not in _names(tools)])
            problems.append(
                f"tool `{tool.name}` is missing (the original's {tool.signature()})"
                + (f"; the spec has `{near[0]}`: rename it to `{tool.name}`" if near else "")
            )
            continue
        spec_params = [p.name for p in spec.params]
        record_params = [p.name for p in tool.params]
        extra = [name for name in spec_params if name not in record_params]
        renamed: set[str] = set()  # the spec's parameters a rename is asked of
        for param in tool.params:
            if param.name in spec_params:
                continue
            near = _near_names(param.name, [name for name in extra if name not in renamed])
            renamed.update(near[:1])
            problems.append(
                f"tool `{tool.name}` has no parameter `{param.name}` (the original's "
                f"{tool.signature()})" + (f"; rename `{near[0]}` to `{param.name}`" if near else "")
            )
        for p in spec.params:
            if p.name not in record_params and p.required and p.name not in renamed:
                problems.append(
                    f"tool `{tool.name}` requires `{p.name}`, which the original does not "
                    f"have ({tool.signature()}): drop it or give it a default"
                )
    return problems


def _names(tools: Sequence[RecordTool]) -> set[str]:
    return {tool.name for tool in tools}


def _near_names(name: str, candidates: Sequence[str]) -> list[str]:
    """Candidates that look like a renaming of `name` (venue -> venue_id, new_status ->
    status): one contains the other, or difflib finds them close."""
    import difflib

    contained = [c for c in candidates if name in c or c in name]
    return contained or difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)


# ---- scenario records ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    item: str  # the check item, "Has ...?"
    function: str  # the Python `def check_func(final_state): ...`


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str  # task_id, or its position in the file when it has none
    env_id: str | None
    init_config: dict[str, Any]
    task: str
    checks: tuple[Check, ...]


def read_scenarios(path: str) -> list[Scenario]:
    """The scenario records of a JSON file (a list, or one object) or a JSONL file. Raises
    OSError, UnicodeDecodeError and ScenarioError."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as error:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            raise ScenarioError(
                f"'{path}' is not JSON: {error.msg} (line {error.lineno})"
            ) from None
    records = data if isinstance(data, list) else [data]
    scenarios = [_scenario(record, index, path) for index, record in enumerate(records)]
    if not scenarios:
        raise ScenarioError(f"'{path}' holds no scenario")
    return scenarios


def _scenario(record: Any, index: int, path: str) -> Scenario:
    where = f"scenario {index} of '{path}'"
    if not isinstance(record, dict):
        raise ScenarioError(f"{where} is not an object")
    init_config = record.get("init_config")
    if not isinstance(init_config, dict):
        raise ScenarioError(f"{where} has no `init_config` object (its start state)")
    task = record.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ScenarioError(f"{where} has no `task` (its instruction)")
    checks = []
    for item in record.get("checklist_with_func") or []:
        if isinstance(item, dict) and isinstance(item.get("check_func"), str):
            checks.append(Check(str(item.get("check_item") or ""), item["check_func"]))
    env_id = record.get("env_id")
    return Scenario(
        id=str(record.get("task_id", index)),
        env_id=env_id if isinstance(env_id, str) else None,
        init_config=init_config,
        task=task.strip(),
        checks=tuple(checks),
    )


def scenarios_of(record: Mapping[str, Any], scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios of the record's environment: those with its env_id, or without one."""
    env_id = record.get("env_id")
    return [s for s in scenarios if s.env_id is None or env_id is None or s.env_id == env_id]
