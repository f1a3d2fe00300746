"""Does a clean spec fit the EnvScaler environment it migrates? The vet of `envdsl synth
--from-envscaler` (envdsl.llm.loop.Vet): the record's tools with their names and parameters,
and every scenario's start state loading. What does not fit goes back to the model."""

from __future__ import annotations

from typing import Sequence

from envdsl.llm.envscaler import RecordTool, Scenario, tool_differences
from envdsl.llm.envscaler_states import environment_of_checked, load_failures


class EnvScalerFit:
    """Called with each clean spec; `states_of(spec)` is a vetted spec's verdict per scenario
    (the scenario's id and why its start state does not load, None when it loads)."""

    def __init__(self, tools: Sequence[RecordTool], scenarios: Sequence[Scenario]) -> None:
        self.tools = list(tools)
        self.scenarios = list(scenarios)
        self._states: dict[str, list[tuple[str, str | None]]] = {}

    def __call__(self, spec: str, checked: object) -> list[str]:
        env_class = environment_of_checked(checked)
        problems = tool_differences(self.tools, env_class)
        states = self._states[spec] = load_failures(self.scenarios, env_class)
        by_message: dict[str, list[str]] = {}
        for scenario_id, message in states:
            if message is not None:
                by_message.setdefault(message, []).append(scenario_id)
        for message, ids in by_message.items():
            which = f"scenario {ids[0]}" if len(ids) == 1 else f"scenarios {', '.join(ids)}"
            problems.append(f"the start state of {which} does not load: {message}")
        return problems

    def states_of(self, spec: str | None) -> list[tuple[str, str | None]]:
        return self._states.get(spec or "", [])
