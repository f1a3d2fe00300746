"""Snapshots as positions in the undo history (issue 13): O(1) snapshot, restore O(writes
since), every combination of snapshots, restores and resets gives back the state it saved,
and an environment never shares a mutable value with another (fork, pickle, a snapshot of
another environment)."""

from __future__ import annotations

import gc
import pickle
from pathlib import Path
from typing import Any

import pytest

import envdsl
from envdsl.runtime import Environment

SLEEP = Path(__file__).resolve().parent.parent / "examples" / "sleep_tracking.env"


@pytest.fixture(scope="module")
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP)


# the night reactivate_and_log's solution logs
NIGHT = {
    "user_id": "U2",
    "start": "2024-05-21T22:45:00Z",
    "end": "2024-05-22T06:10:00Z",
    "quality": "good",
}


def log(user: str, day: int) -> dict[str, Any]:
    return {
        "user_id": user,
        "start": f"2024-05-{day:02d}T22:00:00Z",
        "end": f"2024-05-{day + 1:02d}T06:00:00Z",
        "quality": "good",
    }


def state(env: Environment) -> tuple[str, dict[str, Any], list[Any], str | None]:
    return env.state_hash(), env.state_json(), [(e.name, e.success) for e in env.trace], env.task


def test_restore_undoes_only_the_calls_since(sleep: type[Environment]) -> None:
    env = sleep()
    env.reset(task="reactivate_and_log")
    start = state(env)
    snap = env.snapshot()
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    assert not env.call("set_status", {"user_id": "nobody", "status": "active"})["success"]
    assert env.call("add_sleep_log", log("U2", 10))["success"]
    assert state(env) != start
    env.restore(snap)
    assert state(env) == start
    assert env.evaluate()["reward"] < 1.0  # `initial.` and the checks see the task's start
    # the same snapshot again, after other calls
    assert env.call("add_sleep_log", log("U1", 12))["success"]
    env.restore(snap)
    assert state(env) == start
    assert env.solve("reactivate_and_log")[-1]["success"] and env.evaluate()["success"]


def test_nested_snapshots_in_any_order(sleep: type[Environment]) -> None:
    """Restoring an earlier snapshot while a later one is alive keeps the later one (it is
    copied on the way down); restoring the later one afterwards gives its state back."""
    env = sleep()
    env.reset(task="reactivate_and_log")
    states, snaps = [], []
    for day in range(10, 14):
        states.append(state(env))
        snaps.append(env.snapshot())
        assert env.call("add_sleep_log", log("U1", day))["success"]
    for index in (1, 3, 0, 2, 3, 0):
        env.restore(snaps[index])
        assert state(env) == states[index]
        assert env.call("add_sleep_log", log("U1", 15 + index))["success"]
    env.restore(snaps[2])
    assert state(env) == states[2]


def test_a_snapshot_outlives_a_reset(sleep: type[Environment]) -> None:
    env = sleep()
    env.reset(task="reactivate_and_log")
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    before, snap = state(env), env.snapshot()
    env.reset(task="close_account")
    assert env.call("add_sleep_log", log("U1", 10))["success"]
    env.restore(snap)
    assert state(env) == before and env.task == "reactivate_and_log"
    assert env.call("add_sleep_log", NIGHT)["success"]
    assert env.evaluate()["success"]


def test_history_is_kept_only_while_a_snapshot_lives(sleep: type[Environment]) -> None:
    env = sleep()
    env.reset(task="reactivate_and_log")
    env.reset(state=env.state_json())  # (a task's start is a living snapshot: see below)
    snap = env.snapshot()
    assert env.call("add_sleep_log", log("U1", 10))["success"]
    assert env._world.history
    del snap
    gc.collect()
    assert env.call("add_sleep_log", log("U1", 12))["success"]
    assert not env._world.history


def test_fork_shares_nothing_mutable(sleep: type[Environment]) -> None:
    env = sleep()
    env.reset(task="reactivate_and_log")
    snap = env.snapshot()
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    forked = env.fork()
    assert state(forked) == state(env)
    before = state(env)
    assert forked.call("add_sleep_log", NIGHT)["success"]
    assert forked.evaluate()["success"] and state(env) == before
    # a snapshot of the parent restored into the fork is a copy: the parent is untouched
    forked.restore(snap)
    assert state(env) == before
    assert forked.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    assert state(env) == before
    env.restore(snap)
    assert state(env) == state(sleep_reset(sleep, "reactivate_and_log"))
    for table in env._tables.values():
        for row in table.rows():
            assert all(row is not other for other in forked._tables[table.schema.name].rows())


def test_a_pickled_snapshot_restores_as_a_copy(sleep: type[Environment]) -> None:
    env = sleep()
    env.reset(task="reactivate_and_log")
    start = state(env)
    snap = pickle.loads(pickle.dumps(env.snapshot()))
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    env.restore(snap)
    assert state(env) == start
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    env.restore(snap)  # the copy restored first was not the snapshot's own world
    assert state(env) == start


def test_snapshot_cost_does_not_grow_with_the_state(sleep: type[Environment]) -> None:
    """A snapshot holds a position, not the rows: restoring after one call undoes one call."""
    env = sleep()
    users = [{"user_id": f"U{i}", "name": "x", "email": f"u{i}@x.org"} for i in range(2000)]
    env.reset(state={"users": users, "logs": [], "tickets": [], "now": "2024-06-01T00:00:00Z"})
    snap = env.snapshot()
    assert env.call("set_status", {"user_id": "U7", "status": "suspended"})["success"]
    assert len(env._world.history) <= 2  # the one field write (and nothing per row)
    env.restore(snap)
    assert env.call("get_user", {"user_id": "U7"})["data"]["status"] == "active"


def sleep_reset(sleep: type[Environment], task: str) -> Environment:
    env = sleep()
    env.reset(task=task)
    return env


def test_a_snapshot_keeps_the_trace_of_failed_calls(sleep: type[Environment]) -> None:
    """A failed call changes the trace and not the history: restoring an earlier snapshot
    must not cut the trace of a later one taken at the same history position."""
    env = sleep()
    env.reset(task="reactivate_and_log")
    first = env.snapshot()
    assert not env.call("get_user", {"user_id": "nobody"})["success"]
    second, traced = env.snapshot(), state(env)
    env.restore(first)
    assert env.trace == []
    env.restore(second)
    assert state(env) == traced


def test_a_reset_to_a_task_loaded_before_restores_its_start(
    sleep: type[Environment], monkeypatch: pytest.MonkeyPatch
) -> None:
    """reset(task=T) a second time undoes the episode's writes instead of running T's init
    again, and ends where a fresh load ends: state, hash, trace, task, the grading."""
    fresh = sleep()
    fresh.reset(task="reactivate_and_log")
    expected, reward = state(fresh), fresh.evaluate()["reward"]
    env = sleep()
    env.reset(task="reactivate_and_log")
    env.solve("reactivate_and_log")
    assert env.evaluate()["success"]
    env.reset(task="close_account")
    assert env.call("add_sleep_log", log("U1", 10))["success"]
    init = sleep.TASKS["reactivate_and_log"].init
    assert init is not None
    monkeypatch.setattr(sleep, init, lambda self: pytest.fail("the init ran again"))
    env.reset(task="reactivate_and_log")
    assert state(env) == expected and env.trace == []
    assert env.evaluate()["reward"] == reward < 1.0
    env.solve("reactivate_and_log")
    assert env.evaluate()["success"]


def test_only_the_latest_task_starts_are_kept() -> None:
    sleep = envdsl.load(SLEEP, [SLEEP.with_name("sleep_tracking.tasks.env")])
    env = sleep()
    tasks = list(sleep.TASKS)
    assert len(tasks) > sleep._TASK_STARTS_KEPT
    for task in tasks:
        env.reset(task=task)
        env.call("add_sleep_log", log("U1", 10))  # (fails in the tasks whose U1 is closed)
    kept = [(sleep.TASKS[t].init, sleep.TASKS[t].init_data) for t in tasks]
    assert list(env._task_starts) == kept[-sleep._TASK_STARTS_KEPT :]
    for task in tasks:  # dropped ones load again, kept ones restore: the same states
        env.reset(task=task)
        fresh = sleep()
        fresh.reset(task=task)
        assert state(env) == state(fresh)
    # a pickled environment keeps its state, not the cache of starts
    assert pickle.loads(pickle.dumps(env))._task_starts == {}


def test_tasks_with_one_init_file_share_their_start(tmp_path: Path) -> None:
    """Two tasks whose init is one `init from` file (as every task of a benchmark port starts
    from the benchmark's data) load it once: the second restores the first's start."""
    import json

    spec = tmp_path / "counter.env"
    spec.write_text(
        """env Counter {
  \"\"\"A counter.\"\"\"
  state { n: int = 0 }
  action bump() -> int {
    \"\"\"Add one.\"\"\"
    n += 1
    return n
  }
  task first {
    \"\"\"Bump it.\"\"\"
    init from "start.json"
    solution {
      bump()
    }
    check "bumped once": n == initial.n + 1
  }
  task second {
    \"\"\"Bump it twice.\"\"\"
    init from "start.json"
    solution {
      bump()
      bump()
    }
    check "bumped twice": n == initial.n + 2
  }
}
""",
        encoding="utf-8",
    )
    (tmp_path / "start.json").write_text(json.dumps({"n": 40}), encoding="utf-8")
    counter = envdsl.load(spec)
    env = counter()
    env.reset(task="first")
    assert env.call("bump", {})["data"] == 41
    env.reset(task="second")
    assert len(env._task_starts) == 1 and env.task == "second" and env.trace == []
    assert env.state_json() == {"n": 40}
    env.solve("second")
    assert env.evaluate()["success"]
    env.reset(task="first")
    assert env.state_json() == {"n": 40} and env.task == "first"
