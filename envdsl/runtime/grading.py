"""The reward rule: one function every face reports (MCP, OpenEnv, Gymnasium, TRL, rollouts,
`envdsl run`, verification), so that no consumer computes a reward of its own.

A task's checks split by their value at the task's start (the initial state, no call, no
answer): a check false there is *progress*, what the agent has to achieve; a check already
true there is a *guard* ("U1 untouched", `not called("delete_user")`), which gives no credit
since doing nothing passes it. Guards and the frame (envdsl/runtime/frame.py) *gate*:

- a run that breaks a guard or changes something outside the frame scores 0 and never
  succeeds;
- otherwise the reward is the share of progress checks passed, so doing nothing scores exactly
  0 on every task with a progress check, and the reward grows with progress (shaping);
- a task without progress checks (a refusal: its right outcome is no change) scores 1 when
  the gates hold and 0 otherwise.

`success` is every check passing and the frame holding; it implies reward 1.
"""

from __future__ import annotations

from typing import Any, Collection

PROGRESS, GUARD = "progress", "guard"


def grade(
    checks: list[dict[str, Any]],
    guards: Collection[int],
    frame: dict[str, Any] | None,
) -> dict[str, Any]:
    """The reward, success and split of one run.

    `checks` are the check results in task order (each with `passed`); they get their `kind`
    here. `guards` are the indices of the checks true at the task's start; `frame` is the
    frame result (`held`, `violation`), None where the task has no frame (no solution).
    """
    progress_total = progress_passed = guard_total = guard_passed = 0
    for index, check in enumerate(checks):
        if index in guards:
            check["kind"] = GUARD
            guard_total += 1
            guard_passed += bool(check["passed"])
        else:
            check["kind"] = PROGRESS
            progress_total += 1
            progress_passed += bool(check["passed"])
    frame_held = frame is None or bool(frame["held"])
    gates_hold = frame_held and guard_passed == guard_total
    if not gates_hold:
        reward = 0.0
    elif progress_total:
        reward = progress_passed / progress_total
    else:
        reward = 1.0
    return {
        "reward": reward,
        "success": gates_hold and progress_passed == progress_total,
        "progress": {"passed": progress_passed, "total": progress_total},
        "guards": {"passed": guard_passed, "total": guard_total},
        "frame": frame if frame is not None else {"held": True, "checked": False},
    }
