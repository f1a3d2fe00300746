"""The summary of a trajectory file: per task and overall reward, success, pass@k, pass^k.

pass@k is the chance that at least one of k samples drawn from a task's n succeeds, and pass^k
(τ-bench's reliability metric) the chance that all k do; both are the unbiased estimates from
n samples of which c succeeded: 1 - C(n-c, k)/C(n, k) and C(c, k)/C(n, k), for k = 1..n.
Overall figures are means over tasks (each task counts once, whatever its number of samples);
`ks` are the k every task has samples for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any, Iterable

from envdsl.rollout.records import Record


def pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k)


@dataclass(slots=True)
class TaskStats:
    env: str
    task: str
    rewards: list[float] = field(default_factory=list)
    successes: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    turns: int = 0

    def add(self, record: Record) -> None:
        self.rewards.append(float(record["reward"]))
        self.successes += bool(record["success"])
        self.tool_calls += int(record["tool_calls"])
        self.failed_calls += int(record["failed_calls"])
        self.turns += int(record["turns"])

    @property
    def samples(self) -> int:
        return len(self.rewards)

    def as_json(self, ks: Iterable[int]) -> dict[str, Any]:
        n, c = self.samples, self.successes
        return {
            "env": self.env,
            "task": self.task,
            "samples": n,
            "mean_reward": _round(sum(self.rewards) / n),
            "success_rate": _round(c / n),
            "pass_at_k": {str(k): _round(pass_at_k(n, c, k)) for k in ks},
            "pass_hat_k": {str(k): _round(pass_hat_k(n, c, k)) for k in ks},
            "failed_call_rate": _round(
                self.failed_calls / self.tool_calls if self.tool_calls else 0
            ),
            "mean_turns": _round(self.turns / n),
        }


def summarize(records: Iterable[Record], *, errors: int = 0) -> dict[str, Any]:
    """The summary of scored records (one per sample; see records.is_scored)."""
    stats: dict[tuple[str, str], TaskStats] = {}
    for record in records:
        key = (record["env"], record["task"])
        stats.setdefault(key, TaskStats(*key)).add(record)
    tasks = list(stats.values())
    ks = list(range(1, min((t.samples for t in tasks), default=0) + 1))
    per_task = [t.as_json(ks) for t in tasks]
    count = sum(t.samples for t in tasks)
    calls = sum(t.tool_calls for t in tasks)

    def mean(name: str) -> float:
        return _round(sum(t[name] for t in per_task) / len(per_task)) if per_task else 0.0

    overall = {
        "tasks": len(tasks),
        "records": count,
        "errors": errors,
        "mean_reward": mean("mean_reward"),
        "success_rate": mean("success_rate"),
        "pass_at_k": {str(k): mean_of(per_task, "pass_at_k", k) for k in ks},
        "pass_hat_k": {str(k): mean_of(per_task, "pass_hat_k", k) for k in ks},
        "failed_call_rate": _round(sum(t.failed_calls for t in tasks) / calls if calls else 0),
        "mean_turns": _round(sum(t.turns for t in tasks) / count if count else 0),
    }
    return {"overall": overall, "tasks": per_task}


def mean_of(per_task: list[dict[str, Any]], name: str, k: int) -> float:
    return _round(sum(t[name][str(k)] for t in per_task) / len(per_task))


def render_text(summary: dict[str, Any]) -> str:
    overall = summary["overall"]
    lines = []
    for task in summary["tasks"]:
        lines.append(
            f"{task['env']}/{task['task']}: {task['samples']} samples, reward "
            f"{task['mean_reward']:.3f}, success {task['success_rate']:.1%}, "
            f"{_passes(task)}, failed calls {task['failed_call_rate']:.1%}, "
            f"turns {task['mean_turns']:.1f}"
        )
    lines.append(
        f"overall: {overall['tasks']} tasks, {overall['records']} rollouts, mean reward "
        f"{overall['mean_reward']:.3f}, success {overall['success_rate']:.1%}, "
        f"{_passes(overall)}, failed calls {overall['failed_call_rate']:.1%}, mean turns "
        f"{overall['mean_turns']:.1f}"
        + (f"; {overall['errors']} server errors (rerun to retry)" if overall["errors"] else "")
    )
    return "\n".join(lines)


def _passes(figures: dict[str, Any]) -> str:
    ks = list(figures["pass_at_k"])
    if not ks:
        return "no pass@k"
    shown = [ks[0]] if len(ks) == 1 else [ks[0], ks[-1]]
    return ", ".join(
        f"pass@{k} {figures['pass_at_k'][k]:.3f}, pass^{k} {figures['pass_hat_k'][k]:.3f}"
        for k in shown
    )


def _round(value: float) -> float:
    return round(value, 4)
