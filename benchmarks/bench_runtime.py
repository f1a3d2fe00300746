"""Per-call cost of a generated environment against the same environment written by hand.

Run from the repository root:

    python3 benchmarks/bench_runtime.py                 # sizes 100, 10,000 and 100,000
    python3 benchmarks/bench_runtime.py --sizes 100 10000 --budget 0.2
    python3 benchmarks/bench_runtime.py --sizes 100 --budget 0.2 --no-profile --instructions

The generated side is `examples/sleep_tracking.env` compiled in memory with `envdsl.load` (so it
measures the current compiler and runtime, not a stale compiled/ file), plus a tiny inline spec
(`Wallet`) whose action fails a `require` after a write. The hand-written side is the same
environments ported EnvScaler-style (benchmarks/handwritten_sleep_tracking.py,
benchmarks/handwritten_wallet.py), and the same ports keeping the generated env's guarantees
(benchmarks/handwritten_guarded.py: a fresh JSON copy of each result, a trace entry per call,
a failed call rolled back), which the goal is judged against (issue 24); the plain ports stay
as a column for information. All get the same JSON state, built here, and are called the same
way: `env.call(name, arguments)` with JSON arguments. Calls and loads are timed in the
process's CPU time.

State size N means N users and N sleep logs (one per user) for SleepTracking and N accounts for
Wallet. Operations, each a call on one row in the middle of the table:

  query        get_user: reads one row
  update       set_status: changes one field (timed in pairs suspended/active, so every call
               is a real change and the state comes back)
  insert       add_sleep_log: inserts one row (timed per call, undone untimed by delete_sleep_log)
  late fail    add_sleep_log ending in the future: the generated env inserts, then the invariant
               "no sleep is logged in the future" fails and the insert is rolled back. Timed twice:
               right after reset (no insert has succeeded yet) and after one successful insert
  late fail 2  Wallet.spend: writes the balance, then `require balance >= 0` fails: rollback
  bad args     add_sleep_log with quality "great": rejected by argument validation

Goals: generated at most 2x hand-written, and flat as the state grows (the cost of a one-row call
must not depend on N). A one-row operation whose generated cost grows more than 3x from the
smallest to the largest size is profiled with cProfile at the largest size and the top functions
are printed. state_hash() is O(state) by nature and is reported separately, as is the setup:
the hand-written load_state against reset(state=...) of the same JSON object (best of 5
alternating runs, 3 at 50,000 rows and more, each on a fresh environment), with the floor of
a loader of typed rows between them (the generated row objects filled from the JSON, nothing
checked or indexed). In the same run, reset(state=...) against pydantic v2 validating the
same JSON object and text into models of the spec's entities (benchmarks/
pydantic_sleep_tracking.py, τ²-bench's database choice), and reset(task=...) of a task whose
`init from` file is the state: the first load, and again after a call (a task loaded once is
restored, not loaded again).

`--instructions` adds the call rows counted in instructions at the smallest size, which the
machine's load does not move (CPU time moves with it by tens of percent): one process under
valgrind's callgrind runs each operation's calls on the generated env and on the guarded port in
turns, each (operation, side) a segment of `--calls` calls that starts after a collection,
between two `os.getppid()` calls at which callgrind dumps its counts
(`--dump-before=getppid`). The ratio is of instructions, not time: what the CPU does per
instruction (cache misses, branches) differs between the sides, so it is a steadier view of
the same gap, not the goal's own measure.

Last, the fixed costs of a generated query that the hand-written one does not pay (a trace
entry, a fresh JSON dict of the result, the envelope, the thread-local size budget), each timed
alone against the hand-written query: their sum is the floor of the query's ratio.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import datetime as dt
import gc
import io
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import envdsl  # noqa: E402
from envdsl.tasks.init_files import MAX_INIT_BYTES  # noqa: E402
from handwritten_sleep_tracking import SleepTrackingSystem  # noqa: E402
from handwritten_wallet import WalletSystem  # noqa: E402
from handwritten_guarded import GuardedSleepTrackingSystem, GuardedWalletSystem  # noqa: E402
from pydantic_sleep_tracking import SleepTrackingDB  # noqa: E402

SIZES = (100, 10_000, 100_000)
GROWTH_LIMIT = 3.0  # a one-row operation growing more than this from the smallest size is profiled
RATIO_GOAL = 2.0
NOW = "2024-06-01T08:00:00Z"

WALLET_SPEC = '''env Wallet {
  """Prepaid wallets: members spend their balance."""

  entity Account {
    key account_id: str
    owner: str
    balance: int = 0 "balance in cents"
  }

  state {
    accounts: table Account
  }

  action spend(account_id: str, amount: int "amount in cents") -> Account {
    """Debit an account; the balance may not go negative."""
    let a = accounts.get(account_id) else "account not found"
    require amount > 0 else "amount must be positive"
    a.balance -= amount
    require a.balance >= 0 else "insufficient funds"
    return a
  }
}
'''


# ---- states ------------------------------------------------------------------------------------


def user_id(i: int) -> str:
    return f"U{i:06d}"


def sleep_state(n: int) -> dict[str, Any]:
    """N users, each with one logged night; keys LOG-0001... as the spec's auto("LOG") makes."""
    qualities = ("poor", "fair", "good", "excellent")
    first_night = dt.datetime(2024, 1, 1, 22, 0, tzinfo=dt.timezone.utc)
    users = []
    logs = []
    for i in range(n):
        users.append(
            {
                "user_id": user_id(i),
                "name": f"User {i}",
                "email": f"user{i}@example.org",
                "status": "active" if i % 10 else "suspended",
                "nickname": None,
                "tags": ["beta"] if i % 7 == 0 else [],
            }
        )
        start = first_night + dt.timedelta(days=i % 120, minutes=i % 60)
        end = start + dt.timedelta(hours=7, minutes=i % 90)
        logs.append(
            {
                "log_id": f"LOG-{i + 1:04d}",
                "user": user_id(i),
                "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "end": end.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "quality": qualities[i % 4],
                "minutes": int((end - start).total_seconds() // 60),
            }
        )
    return {"users": users, "logs": logs, "tickets": [], "now": NOW}


def wallet_state(n: int) -> dict[str, Any]:
    return {
        "accounts": [
            {"account_id": f"A{i:06d}", "owner": f"Owner {i}", "balance": 1000 + i % 500}
            for i in range(n)
        ]
    }


# ---- timing ------------------------------------------------------------------------------------


class Timer:
    """Runs the implementations' measurements in turns, so that drift hits all of them, in
    CPU time of this process (other jobs on shared cores add none to it)."""

    def __init__(self, budget: float, quick: bool = False) -> None:
        self.budget = budget  # seconds per implementation and operation
        self.quick = quick  # a few calls, no calibration: only that everything runs

    def batched(self, *calls: Callable[[], Any]) -> tuple[float, ...]:
        """Median per-call seconds of each side's calls (which leave the state as they found
        it), the sides timed in turns batch by batch."""
        # CPU time of this process: on cores shared with other jobs, wall time counts the
        # slices the scheduler gives them, which land on one side or the other by chance
        timers = [timeit.Timer(call, timer=time.process_time) for call in calls]
        numbers = [10] * len(timers)
        if not self.quick:
            numbers = []
            for timer in timers:
                number, _ = timer.autorange()  # number of loops taking >= 0.2 s
                numbers.append(max(1, number // 20))  # batches of about 10 ms
        medians: list[list[float]] = [[] for _ in timers]
        deadline = time.perf_counter() + len(timers) * self.budget
        rounds = 0
        while rounds < (2 if self.quick else 5) or (
            time.perf_counter() < deadline and rounds < 200
        ):
            for side, timer in enumerate(timers):
                medians[side].append(timer.timeit(numbers[side]) / numbers[side])
            rounds += 1
        return tuple(statistics.median(m) for m in medians)

    def each(self, *sides: tuple[Callable[[], Any], Callable[[Any], None]]) -> tuple[float, ...]:
        """Median per-call seconds of calls timed one by one, each undone (untimed) after."""
        samples: list[list[float]] = [[] for _ in sides]
        clock = time.process_time_ns  # CPU time, as in `batched`
        overhead = statistics.median(-clock() + clock() for _ in range(1001))
        deadline = time.perf_counter() + len(sides) * self.budget
        rounds = 0
        while rounds < 9 or (time.perf_counter() < deadline and rounds < 5000):
            for side, (call, undo) in enumerate(sides):
                start = clock()
                result = call()
                elapsed = clock() - start
                undo(result)
                samples[side].append((elapsed - overhead) / 1e9)
            rounds += 1
        return tuple(statistics.median(s) for s in samples)


def expect(result: dict[str, Any], success: bool, what: str) -> dict[str, Any]:
    if result.get("success") is not success:
        raise SystemExit(f"{what}: expected success={success}, got {result}")
    return result


# ---- the benchmark -------------------------------------------------------------------------------

OPERATIONS = (
    ("query", "get_user (reads one row)"),
    ("update", "set_status (updates one row)"),
    ("insert", "add_sleep_log (inserts one row)"),
    ("late fail, fresh", "add_sleep_log fails its invariant after the insert; no insert yet"),
    ("late fail", "add_sleep_log fails its invariant after the insert"),
    ("late fail 2", "Wallet.spend fails a require after writing the balance"),
    ("bad args", "add_sleep_log rejected by argument validation (bad enum)"),
)


def log_args(uid: str, end: str = "2024-05-31T06:40:00Z", quality: str = "good") -> dict[str, Any]:
    return {"user_id": uid, "start": "2024-05-30T22:15:00Z", "end": end, "quality": quality}


def bench_size(
    n: int,
    sleep_cls: type[Any],
    wallet_cls: type[Any],
    timer: Timer,
    baseline: dict[str, tuple[float, ...]] | None,
) -> dict[str, Any]:
    """Time every operation at size n; profile those that grew too much against `baseline`."""
    state = sleep_state(n)
    loads = 1 if timer.quick else 3 if n >= 50_000 else 5
    setup = load_times(state, sleep_cls, loads)
    pydantic = pydantic_times(state, sleep_cls, loads)
    task_reset = task_reset_times(state, loads)
    hand = SleepTrackingSystem()
    hand.load_state(state)
    gen = sleep_cls()
    gen.reset(state=state)
    guarded = GuardedSleepTrackingSystem()
    guarded.load_state(state)
    del state

    wallet_data = wallet_state(n)
    hand_wallet = WalletSystem()
    hand_wallet.load_state(wallet_data)
    gen_wallet = wallet_cls()
    gen_wallet.reset(state=wallet_data)
    guarded_wallet = GuardedWalletSystem()
    guarded_wallet.load_state(wallet_data)
    del wallet_data

    hashes_before = (hand.state_hash(), gen.state_hash(), guarded.state_hash())
    target = user_id(n // 2 + 1)  # an active user in the middle of the table
    account = f"A{n // 2:06d}"
    # per operation: hand-written, generated, hand-written with the generated env's guarantees
    times: dict[str, tuple[float, ...]] = {}
    envs = (hand, gen, guarded)

    def record(op: str, pair: tuple[float, ...], gen_call: Callable[[], Any]) -> None:
        times[op] = pair
        if baseline is not None and pair[1] / baseline[op][1] > GROWTH_LIMIT:
            profile(f"{op}, N={n:,}", gen_call)

    def both(name: str, arguments: dict[str, Any], success: bool) -> list[Callable[[], Any]]:
        for env in envs:
            expect(env.call(name, arguments), success, f"N={n} {name}({arguments})")
        return [lambda env=env: env.call(name, arguments) for env in envs]

    # (a) a query that reads one row
    calls = both("get_user", {"user_id": target}, True)
    record("query", timer.batched(*calls), calls[1])

    # (b) an update of one row: suspended then active, so each call changes the row
    both("set_status", {"user_id": target, "status": "suspended"}, True)
    both("set_status", {"user_id": target, "status": "active"}, True)

    def toggle(env: Any) -> Callable[[], Any]:
        def run() -> None:
            env.call("set_status", {"user_id": target, "status": "suspended"})
            env.call("set_status", {"user_id": target, "status": "active"})

        return run

    pairs = timer.batched(*(toggle(env) for env in envs))
    record("update", tuple(pair / 2 for pair in pairs), toggle(gen))

    # (d) a late failure before any insert has succeeded since reset
    future = log_args(target, end="2024-06-02T06:40:00Z")
    calls = both("add_sleep_log", future, False)
    record("late fail, fresh", timer.batched(*calls), calls[1])

    # (e) a call rejected by argument validation
    calls = both("add_sleep_log", log_args(target, quality="great"), False)
    record("bad args", timer.batched(*calls), calls[1])

    # (c) an insert of one row, undone after each timed call
    def inserter(env: Any) -> tuple[Callable[[], Any], Callable[[Any], None]]:
        def undo(result: dict[str, Any]) -> None:
            log_id = expect(result, True, f"N={n} add_sleep_log")["data"]["log_id"]
            expect(
                env.call("delete_sleep_log", {"log_id": log_id, "user_id": target}),
                True,
                "undo",
            )

        return (lambda: env.call("add_sleep_log", log_args(target))), undo

    warm = [inserter(env) for env in envs]
    first_insert = []
    for call, undo in warm:  # the first insert after reset also skips the loaded LOG-nnnn keys
        started = time.perf_counter()
        result = call()
        first_insert.append(time.perf_counter() - started)
        undo(result)
    first_insert = first_insert[:2]
    record("insert", timer.each(*warm), lambda: warm[1][1](warm[1][0]()))

    # (d) the same late failure once an insert has succeeded
    calls = both("add_sleep_log", future, False)
    record("late fail", timer.batched(*calls), calls[1])

    # (d) a late failure of a require after a write, in the inline Wallet spec
    calls = [
        lambda env=env: env.call("spend", {"account_id": account, "amount": 10**6})
        for env in (hand_wallet, gen_wallet, guarded_wallet)
    ]
    for call in calls:
        expect(call(), False, f"N={n} spend")
    record("late fail 2", timer.batched(*calls), calls[1])

    # nothing above may have changed the state (updates come in pairs, inserts are undone)
    hashes_after = (hand.state_hash(), gen.state_hash(), guarded.state_hash())
    if hashes_after != hashes_before:
        raise SystemExit(f"N={n}: the benchmark changed the state: {hashes_before} {hashes_after}")

    # state_hash: O(state), a few calls
    loops = 5 if n >= 50_000 else 20
    hash_times = (
        min(timeit.repeat(hand.state_hash, number=1, repeat=loops)),
        # from nothing: state_hash() keeps row digests between calls (see hash_after_step)
        min(timeit.repeat(gen.reference_state_hash, number=1, repeat=loops)),
    )
    step_hash = hash_after_step(gen, target, loops)
    return {
        "times": times,
        "setup": setup,
        "pydantic": pydantic,
        "task_reset": task_reset,
        "first_insert": tuple(first_insert),
        "hash": hash_times,
        "step_hash": step_hash,
        "snapshot": snapshot_times(hand, gen, target, loops),
        "memory": memory_held(n, sleep_cls),
    }


def load_times(
    state: dict[str, Any], sleep_cls: type[Any], loops: int
) -> tuple[float, float, float]:
    """The hand-written load_state, the typed-rows floor (typed_rows below) and the generated
    reset(state=...) of the same JSON object, each on a fresh environment, in turns: the best
    of `loops` runs of each. Each run starts after a collection (a dropped generated state
    holds reference cycles, row -> owned list -> its place -> row, which the next collection
    frees: not the next run's cost), and pays the collections its own allocations trigger.
    CPU time of this process, as the calls are timed."""
    hand_times: list[float] = []
    floor_times: list[float] = []
    gen_times: list[float] = []
    for _ in range(loops):
        for make, load, times in (
            (SleepTrackingSystem, lambda env: env.load_state(state), hand_times),
            (lambda: sleep_cls, lambda cls: typed_rows(cls, state), floor_times),
            (sleep_cls, lambda env: env.reset(state=state), gen_times),
        ):
            env = make()
            gc.collect()
            started = time.process_time()
            made = load(env)  # (the typed rows' dict: freed after the clock, as the others)
            times.append(time.process_time() - started)
            del env, made
    return min(hand_times), min(floor_times), min(gen_times)


def pydantic_times(
    state: dict[str, Any], sleep_cls: type[Any], loads: int
) -> tuple[float, float, float, float]:
    """pydantic v2 validating the state into models of the spec's entities
    (benchmarks/pydantic_sleep_tracking.py) against `reset(state=...)` of a new environment
    (made inside the clock), both from the same JSON object and both from the same JSON text,
    in turns: the best of `loads` runs of each. Each run starts after a collection, with the
    collector on (each side pays the collections its own allocations trigger), and neither
    side pays for freeing what it made: the result is held until the clock stops and dropped
    after it, before the next run's collection. (pydantic's models are freed as their last
    reference goes, a tenth of its time at 100 rows, while a dropped environment's rows sit in
    reference cycles, row -> owned list -> its place -> row, that a collection frees: timing
    the drop would have timed pydantic's freeing and not reset's.) Returns (pydantic object,
    reset object, pydantic text, reset text)."""
    text = json.dumps(state)

    def reset(source: dict[str, Any] | str) -> Any:
        env = sleep_cls()
        env.reset(state=source)
        return env

    sides: list[tuple[Callable[[], Any], list[float]]] = [
        (lambda: SleepTrackingDB.model_validate(state), []),
        (lambda: reset(state), []),
        (lambda: SleepTrackingDB.model_validate_json(text), []),
        (lambda: reset(text), []),
    ]
    for _ in range(loads):
        for load, times in sides:
            gc.collect()
            started = time.process_time()
            made = load()
            times.append(time.process_time() - started)
            del made  # (after the clock: see above)
    best = [min(times) for _, times in sides]
    return best[0], best[1], best[2], best[3]


def task_reset_times(state: dict[str, Any], loops: int) -> tuple[float, float, float] | None:
    """`reset(task=...)` of a task whose start is this state (`init from` a JSON file): the
    first on a fresh environment (a load), then again after one call (a task already loaded
    once: a restore of its start where the runtime keeps one, else a load again), and
    `restore()` of a snapshot of the start, for comparison. Best of `loops` of each."""
    text = json.dumps(state)
    if len(text.encode("utf-8")) > MAX_INIT_BYTES:
        return None  # `init from` refuses a file this large (E4021)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "sleep_tracking.env").write_text(
            (REPO / "examples" / "sleep_tracking.env").read_text(encoding="utf-8"),
            encoding="utf-8",
        )
        (folder / "start.json").write_text(text, encoding="utf-8")
        target = user_id(len(state["users"]) // 2 + 1)
        tasks = TASK_FROM_STATE.replace("TARGET", target)
        (folder / "big.tasks.env").write_text(tasks, encoding="utf-8")
        cls = envdsl.load(folder / "big.tasks.env")
    first: list[float] = []
    again: list[float] = []
    restore: list[float] = []
    for _ in range(loops):
        env = cls()
        gc.collect()
        started = time.process_time()
        env.reset(task="from_state")
        first.append(time.process_time() - started)
        snap = env.snapshot()
        for times, reset in (
            (again, lambda: env.reset(task="from_state")),
            (restore, lambda: env.restore(snap)),
        ):
            expect(env.call("set_status", {"user_id": target, "status": "closed"}), True, "t")
            gc.collect()
            started = time.process_time()
            reset()
            times.append(time.process_time() - started)
            if env.call("get_user", {"user_id": target})["data"]["status"] == "closed":
                raise SystemExit("reset(task=...) did not bring the task's start back")
        del env, snap
    return min(first), min(again), min(restore)


TASK_FROM_STATE = '''tasks for "sleep_tracking.env" {
  task from_state {
    """Close the account of user TARGET."""
    init from "start.json"
    solution {
      set_status(user_id="TARGET", status=AccountStatus.closed)
    }
    check "TARGET is closed": users["TARGET"].status == AccountStatus.closed
  }
}
'''


def typed_rows(sleep_cls: type[Any], state: dict[str, Any]) -> dict[str, Any]:
    """The floor of any loader whose rows are typed objects: the generated row classes filled
    from the JSON (datetimes parsed, enum members looked up, lists copied), keyed by id, and
    nothing else (no checks, no indexes, no owned values, no rules). What reset(state=...)
    costs above this is its validation and bookkeeping; what this costs above the hand-written
    loader (which keeps the JSON dicts) is the typing."""
    new = object.__new__
    parse = dt.datetime.fromisoformat
    tables = sleep_cls.TABLES
    user_cls, log_cls = tables["users"].row.cls, tables["logs"].row.cls
    quality = {f.name: f.spec for f in tables["logs"].row.fields}["quality"].by_value
    users = {}
    for raw in state["users"]:
        user = new(user_cls)
        user.user_id = raw["user_id"]
        user.name = raw["name"]
        user.email = raw["email"]
        user.status = raw["status"]
        user.nickname = raw["nickname"]
        user.tags = list(raw["tags"])
        users[user.user_id] = user
    logs = {}
    for raw in state["logs"]:
        log = new(log_cls)
        log.log_id = raw["log_id"]
        log.user = raw["user"]
        log.start = parse(raw["start"])
        log.end = parse(raw["end"])
        log.quality = quality[raw["quality"]]
        log.minutes = raw["minutes"]
        logs[log.log_id] = log
    return {"users": users, "logs": logs, "now": parse(state["now"])}


def hash_after_step(gen: Any, target: str, loops: int) -> float:
    """state_hash() right after a call that changed one row (what an RL loop pays per step)."""
    samples = []
    for i in range(loops):
        status = "suspended" if i % 2 == 0 else "active"
        expect(gen.call("set_status", {"user_id": target, "status": status}), True, "step")
        started = time.perf_counter()
        gen.state_hash()
        samples.append(time.perf_counter() - started)
    if loops % 2:
        expect(gen.call("set_status", {"user_id": target, "status": "active"}), True, "step")
    return min(samples)


def snapshot_times(hand: Any, gen: Any, target: str, loops: int) -> dict[str, tuple[float, float]]:
    """snapshot() and restore() after one update, against copy.deepcopy of the plain dicts
    (the hand-written side's snapshot, and its restore: a restored state must not share the
    snapshot's dicts, or the next write would change the snapshot)."""

    def hand_state() -> tuple[Any, ...]:
        return (hand.users, hand.logs, hand.tickets, hand.now)

    def timed(operation: Callable[[], Any]) -> tuple[Any, float]:
        # without the cyclic GC, which the other side's deep copy leaves due to run next
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            result = operation()
            return result, time.perf_counter() - started
        finally:
            gc.enable()

    samples: dict[str, list[tuple[float, float]]] = {"snapshot": [], "restore": []}
    for _ in range(max(1, loops // 3)):
        saved, hand_snap = timed(lambda: copy.deepcopy(hand_state()))
        snap, gen_snap = timed(gen.snapshot)
        for env in (hand, gen):
            expect(env.call("set_status", {"user_id": target, "status": "suspended"}), True, "s")
        copied, hand_restore = timed(lambda: copy.deepcopy(saved))
        hand.users, hand.logs, hand.tickets, hand.now = copied
        _, gen_restore = timed(lambda: gen.restore(snap))
        samples["snapshot"].append((hand_snap, gen_snap))
        samples["restore"].append((hand_restore, gen_restore))
        del saved, snap, copied
    if (
        hand.users[target]["status"] != "active"
        or gen.call("get_user", {"user_id": target})["data"]["status"] != "active"
    ):
        raise SystemExit("restore() did not bring the state back")
    return {
        what: (min(s[0] for s in pairs), min(s[1] for s in pairs))
        for what, pairs in samples.items()
    }


def memory_held(n: int, sleep_cls: type[Any]) -> tuple[int, int]:
    """Bytes held by a state of size n loaded from JSON text: plain dicts / generated env."""
    text = json.dumps(sleep_state(n))
    held = []
    for load in (_hand_from_text, lambda t: _gen_from_text(sleep_cls, t)):
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        env = load(text)
        gc.collect()
        held.append(tracemalloc.get_traced_memory()[0] - before)
        tracemalloc.stop()
        del env
    return held[0], held[1]


def _hand_from_text(text: str) -> Any:
    env = SleepTrackingSystem()
    env.load_state(json.loads(text))
    return env


def _gen_from_text(sleep_cls: type[Any], text: str) -> Any:
    env = sleep_cls()
    env.reset(state=text)
    return env


def profile(label: str, call: Callable[[], Any], repeat: int = 20) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeat):
        call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(8)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    print(f"\ncProfile of the generated env, {label}, {repeat} calls, by own time:")
    for line in lines[start:]:
        print("  " + line)


def profile_overhead(sleep_cls: type[Any], n: int) -> None:
    """Where the constant per-call cost of the generated env goes (query and update)."""
    env = sleep_cls()
    env.reset(state=sleep_state(n))
    target = user_id(n // 2 + 1)

    def update() -> None:
        env.call("set_status", {"user_id": target, "status": "suspended"})
        env.call("set_status", {"user_id": target, "status": "active"})

    profile(f"query, N={n:,}", lambda: env.call("get_user", {"user_id": target}), 20_000)
    profile(f"update (pairs), N={n:,}", update, 10_000)


def fixed_costs(sleep_cls: type[Any], timer: Timer) -> list[str]:
    """What a generated query pays that the hand-written one does not, each part timed alone
    against the hand-written `get_user` (which returns its own dict, records nothing and
    checks no budget): the floor of the ratio while every guarantee is kept."""
    from envdsl.runtime import TraceEntry, limits

    env = sleep_cls()
    env.reset(state=sleep_state(100))
    hand = SleepTrackingSystem()
    hand.load_state(sleep_state(100))
    target = user_id(51)
    row = env.t_users.get(target)
    serialize = sleep_cls.TABLES["users"].row.serializer()
    arguments = {"user_id": target}
    per_thread = limits.per_thread

    def budget_around() -> None:  # a call's size budget: this thread's, set and cleared
        budget = per_thread.budget
        budget.left = 10
        budget.left = None

    parts: list[tuple[str, Callable[[], Any]]] = [
        ("trace entry", lambda: TraceEntry("get_user", arguments, True)),
        ("the result's JSON (a fresh dict)", lambda: serialize(row)),
        ("the envelope", lambda: {"success": True, "data": None}),
        ("the size budget", budget_around),
    ]

    def hand_call() -> Any:
        return hand.call("get_user", arguments)

    lines = [
        "| fixed cost of a generated query | µs | / hand-written query |",
        "|---|---:|---:|",
    ]
    total = 0.0
    for label, part in parts:
        hand_time, part_time = timer.batched(hand_call, part)
        total += part_time / hand_time
        lines.append(f"| {label} | {us(part_time)} | {part_time / hand_time:.2f} |")
    lines.append(f"| all four, in hand-written queries | | {total:.2f} |")
    return lines


# ---- the call rows in instructions ----------------------------------------------------------------

INSTRUCTION_CALLS = 400  # calls per segment (an update is half as many pairs)


def call_segments(
    sleep_cls: type[Any], wallet_cls: type[Any], n: int, calls: int
) -> list[tuple[str, str]]:
    """The call rows of `bench_size`, the generated env and the guarded port in turns, each
    (operation, side) one segment between two `os.getppid()` calls: callgrind, told to dump
    its counts before each (`--dump-before=getppid`), gives each segment's instructions. Every
    operation is called once on each side before the first segment (first-call costs: plans,
    caches); an insert's segment holds only the inserts, their deletes a segment of their own
    (`undo`, not reported). Returns the segments' labels, in order."""
    state = sleep_state(n)
    gen = sleep_cls()
    gen.reset(state=state)
    guarded = GuardedSleepTrackingSystem()
    guarded.load_state(state)
    wallet_data = wallet_state(n)
    gen_wallet = wallet_cls()
    gen_wallet.reset(state=wallet_data)
    guarded_wallet = GuardedWalletSystem()
    guarded_wallet.load_state(wallet_data)
    target = user_id(n // 2 + 1)
    account = f"A{n // 2:06d}"
    future = log_args(target, end="2024-06-02T06:40:00Z")
    bad = log_args(target, quality="great")
    spend = {"account_id": account, "amount": 10**6}

    def repeat(env: Any, name: str, arguments: dict[str, Any], success: bool) -> Callable[[], Any]:
        expect(env.call(name, arguments), success, f"{name}({arguments})")
        call = env.call

        def run() -> None:
            for _ in range(calls):
                call(name, arguments)

        return run

    def toggle(env: Any) -> Callable[[], Any]:
        for status in ("suspended", "active"):
            expect(env.call("set_status", {"user_id": target, "status": status}), True, "update")
        suspend = {"user_id": target, "status": "suspended"}
        activate = {"user_id": target, "status": "active"}

        def run() -> None:
            for _ in range(calls // 2):
                env.call("set_status", suspend)
                env.call("set_status", activate)

        return run

    inserted: dict[int, list[str]] = {}

    def insert(env: Any) -> Callable[[], Any]:
        def run() -> None:
            made = inserted[id(env)] = []
            for _ in range(calls):
                made.append(env.call("add_sleep_log", log_args(target))["data"]["log_id"])

        return run

    def delete(env: Any) -> Callable[[], Any]:
        def run() -> None:
            for log_id in inserted.pop(id(env)):
                expect(
                    env.call("delete_sleep_log", {"log_id": log_id, "user_id": target}), True, "d"
                )

        return run

    # in bench_size's order: the fresh late failure before any insert has succeeded
    plan: list[tuple[str, str, Callable[[], Any]]] = [("marker", "", lambda: None)]
    plan += [
        ("query", side, repeat(env, "get_user", {"user_id": target}, True))
        for side, env in (("generated", gen), ("guarded", guarded))
    ]
    plan += [
        ("update", side, toggle(env)) for side, env in (("generated", gen), ("guarded", guarded))
    ]
    plan += [
        ("late fail, fresh", side, repeat(env, "add_sleep_log", future, False))
        for side, env in (("generated", gen), ("guarded", guarded))
    ]
    plan += [
        ("bad args", side, repeat(env, "add_sleep_log", bad, False))
        for side, env in (("generated", gen), ("guarded", guarded))
    ]
    for env in (gen, guarded):  # the first insert after reset skips the loaded keys
        log_id = expect(env.call("add_sleep_log", log_args(target)), True, "insert")["data"][
            "log_id"
        ]
        expect(env.call("delete_sleep_log", {"log_id": log_id, "user_id": target}), True, "d")
    for side, env in (("generated", gen), ("guarded", guarded)):
        plan += [("insert", side, insert(env)), ("undo", side, delete(env))]
    plan += [
        ("late fail", side, repeat(env, "add_sleep_log", future, False))
        for side, env in (("generated", gen), ("guarded", guarded))
    ]
    plan += [
        ("late fail 2", side, repeat(env, "spend", spend, False))
        for side, env in (("generated", gen_wallet), ("guarded", guarded_wallet))
    ]
    for _, _, run in plan:
        # each segment starts after a collection: a full one, which the objects the set-up
        # left young would trigger by chance in one segment or another, is not a call's cost
        gc.collect()
        os.getppid()  # callgrind dumps the counts since the last dump: the collection
        run()
        os.getppid()  # and now the segment's
    return [(op, side) for op, side, _ in plan]


def instruction_rows(n: int, calls: int) -> dict[str, tuple[float, float]]:
    """Per operation, instructions per call of the generated env and of the guarded port:
    `--phase calls` under callgrind, one process (the machine's load does not move a count)."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=getppid",
            f"--callgrind-out-file={tmp}/cg.%p",
            sys.executable,
            str(Path(__file__).resolve()),
            "--phase",
            "calls",
            "--sizes",
            str(n),
            "--calls",
            str(calls),
        ]
        env = dict(os.environ, PYTHONHASHSEED="0")
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
        if done.returncode != 0:
            raise SystemExit(f"valgrind of --phase calls failed:\n{done.stderr[-2000:]}")
        labels = json.loads(done.stdout.strip().splitlines()[-1])
        dumps = sorted(Path(tmp).glob("cg.*.*"), key=lambda p: int(p.suffix[1:]))
        totals = []
        for dump in dumps:
            found = re.search(r"^totals:\s+(\d+)", dump.read_text(), re.M)
            totals.append(int(found.group(1)) if found else 0)
    # dump k (from 1) holds what ran since the marker before it: dumps 1, 3, 5... the set-up
    # and the collections, 2, 4, 6... the segments' runs (and a marker's own few
    # instructions, which the empty first segment measures)
    counts = dict(zip(map(tuple, labels), totals[1::2]))
    floor = counts[("marker", "")]
    return {
        op: (
            (counts[(op, "generated")] - floor) / calls,
            (counts[(op, "guarded")] - floor) / calls,
        )
        for op, _ in OPERATIONS
    }


# ---- equivalence of the two implementations --------------------------------------------------------


def check_equivalence(sleep_cls: type[Any]) -> None:
    """The hand-written port answers like the generated env and ends in the same state."""
    state = sleep_state(30)
    hand = SleepTrackingSystem()
    hand.load_state(state)
    gen = sleep_cls()
    gen.reset(state=state)
    script: list[tuple[str, dict[str, Any]]] = [
        ("get_user", {"user_id": "U000003"}),
        ("get_user", {"user_id": "nobody"}),
        ("set_status", {"user_id": "U000003", "status": "suspended"}),
        ("add_sleep_log", log_args("U000003")),  # not active
        ("set_status", {"user_id": "U000003", "status": "active"}),
        ("add_sleep_log", log_args("U000003")),
        ("add_sleep_log", log_args("U000004", end="2024-05-30T22:15:00Z")),  # end == start
        ("add_sleep_log", log_args("U000004", end="2024-06-02T06:40:00Z")),  # future
        ("add_sleep_log", log_args("U000005")),
        ("delete_sleep_log", {"log_id": "LOG-0031", "user_id": "U000004"}),  # not yours
        ("delete_sleep_log", {"log_id": "LOG-0031", "user_id": "U000003"}),
        ("delete_sleep_log", {"log_id": "LOG-0031", "user_id": "U000003"}),  # gone
        ("add_sleep_log", log_args("U000006")),
    ]
    guarded = GuardedSleepTrackingSystem()
    guarded.load_state(state)
    for name, arguments in script:
        a, b, c = (
            hand.call(name, arguments),
            gen.call(name, arguments),
            guarded.call(name, arguments),
        )
        if a != b or c != b:
            raise SystemExit(f"the ports differ on {name}({arguments}): {a}, {c} != {b}")
        if c["success"] and isinstance(c["data"], dict):
            # a fresh copy: emptying the result (and its lists) leaves the state alone, which
            # the comparison of the final states below checks
            for value in c["data"].values():
                if isinstance(value, list):
                    value.append("changed")
            c["data"].clear()
    if [(t.name, t.success) for t in guarded.trace] != [(t.name, t.success) for t in gen.trace]:
        raise SystemExit("the guarded port's trace differs from the generated env's")
    for name, arguments in [
        ("add_sleep_log", log_args("U000003", quality="great")),
        ("set_status", {"user_id": "U000003", "status": "gone"}),
    ]:
        a, b = hand.call(name, arguments), gen.call(name, arguments)
        if a["success"] or b["success"]:  # messages of argument errors differ by design
            raise SystemExit(f"{name}({arguments}) should be rejected: {a} {b}")
    gen_state = gen.state_json()
    hand_state = {"users": hand.users, "logs": hand.logs, "tickets": hand.tickets, "now": hand.now}
    if gen_state != hand_state:
        raise SystemExit("the port ends in a different state than the generated env")
    guarded_state = {
        "users": guarded.users,
        "logs": guarded.logs,
        "tickets": guarded.tickets,
        "now": guarded.now,
    }
    if guarded_state != gen_state:
        raise SystemExit("the guarded port ends in a different state than the generated env")
    wallet = GuardedWalletSystem()
    wallet.load_state(wallet_state(3))
    result = wallet.call("spend", {"account_id": "A000001", "amount": 10**6})
    if result["success"] or wallet.accounts["A000001"]["balance"] != 1001:
        raise SystemExit(f"the guarded Wallet did not roll its late failure back: {result}")


# ---- report -------------------------------------------------------------------------------------------


def us(seconds: float) -> str:
    micro = seconds * 1e6
    return f"{micro:,.1f}" if micro < 1000 else f"{micro:,.0f}"


def report(results: dict[int, dict[str, Any]], sizes: list[int]) -> list[str]:
    small, large = sizes[0], sizes[-1]
    out = [
        f"| operation | N | hand-written µs | hand-written, guarded µs | generated µs "
        f"| generated / guarded | generated / hand | generated growth {small:,} → {large:,} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for op, _ in OPERATIONS:
        growth = results[large]["times"][op][1] / results[small]["times"][op][1]
        for i, n in enumerate(sizes):
            hand, gen, guarded = results[n]["times"][op]
            grow = f"{growth:.2f}x" if i == 0 else ""
            out.append(
                f"| {op if i == 0 else ''} | {n:,} | {us(hand)} | {us(guarded)} | {us(gen)} "
                f"| {gen / guarded:.2f} | {gen / hand:.2f} | {grow} |"
            )
    out += [
        "",
        "| state_hash() | N | hand-written ms | generated, from nothing ms | generated / hand "
        "| generated after one step ms | after a step / hand |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        hand, gen = results[n]["hash"]
        step = results[n]["step_hash"]
        out.append(
            f"| | {n:,} | {hand * 1e3:,.2f} | {gen * 1e3:,.2f} | {gen / hand:.2f} "
            f"| {step * 1e3:,.3f} | {step / hand:.3f} |"
        )
    out += [
        "",
        "| snapshot / restore | N | deepcopy of plain dicts ms | generated ms | generated / deepcopy |",
        "|---|---:|---:|---:|---:|",
    ]
    for what in ("snapshot", "restore"):
        for i, n in enumerate(sizes):
            hand, gen = results[n]["snapshot"][what]
            label = f"{what}()" if i == 0 else ""
            out.append(
                f"| {label} | {n:,} | {hand * 1e3:,.3f} | {gen * 1e3:,.3f} | {gen / hand:.3f} |"
            )
    out += [
        "",
        "| setup (not per call) | N | hand-written load ms | typed rows alone ms (/ hand) "
        "| generated reset(state) ms | generated / hand | first insert after load, hand / "
        "generated ms | memory held, plain / generated MiB | generated / plain |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        hand, floor, gen = results[n]["setup"]
        first_hand, first_gen = results[n]["first_insert"]
        plain_mem, gen_mem = results[n]["memory"]
        out.append(
            f"| | {n:,} | {hand * 1e3:,.1f} | {floor * 1e3:,.1f} ({floor / hand:.2f}) "
            f"| {gen * 1e3:,.1f} | {gen / hand:.2f} "
            f"| {first_hand * 1e3:,.2f} / {first_gen * 1e3:,.2f} "
            f"| {plain_mem / 2**20:,.1f} / {gen_mem / 2**20:,.1f} | {gen_mem / plain_mem:.2f} |"
        )
    out += [
        "",
        "| reset(state=...) / pydantic v2 | N | pydantic `model_validate` of the object ms "
        "| reset(state=<object>) ms | reset / pydantic | pydantic `model_validate_json` ms "
        "| reset(state=<text>) ms | reset / pydantic |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        p_obj, g_obj, p_text, g_text = results[n]["pydantic"]
        out.append(
            f"| | {n:,} | {p_obj * 1e3:,.1f} | {g_obj * 1e3:,.1f} | {g_obj / p_obj:.2f} "
            f"| {p_text * 1e3:,.1f} | {g_text * 1e3:,.1f} | {g_text / p_text:.2f} |"
        )
    out += [
        "",
        "| reset(task=...), init from a file of this state | N | first ms | again after a "
        "call ms | again / first | restore() of a snapshot ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        if results[n]["task_reset"] is None:
            out.append(f"| | {n:,} | over the `init from` file limit (E4021) | | | |")
            continue
        first, again, restore = results[n]["task_reset"]
        out.append(
            f"| | {n:,} | {first * 1e3:,.2f} | {again * 1e3:,.3f} | {again / first:.3f} "
            f"| {restore * 1e3:,.3f} |"
        )
    return out


def verdict(results: dict[int, dict[str, Any]], sizes: list[int]) -> list[str]:
    small, large = sizes[0], sizes[-1]
    lines = []
    for op, what in OPERATIONS:
        ratios = [results[n]["times"][op][1] / results[n]["times"][op][2] for n in sizes]
        plain = [results[n]["times"][op][1] / results[n]["times"][op][0] for n in sizes]
        growth = results[large]["times"][op][1] / results[small]["times"][op][1]
        ratio_ok = max(ratios) <= RATIO_GOAL
        flat_ok = growth <= GROWTH_LIMIT
        lines.append(
            f"- {op} ({what}): {min(ratios):.2f}-{max(ratios):.2f}x the guarded hand-written "
            f"({'meets' if ratio_ok else 'misses'} <= {RATIO_GOAL:g}x; the plain one "
            f"{min(plain):.2f}-{max(plain):.2f}x); growth {growth:.2f}x "
            f"({'flat' if flat_ok else 'NOT flat'})"
        )
    ratios = [
        results[n]["pydantic"][i + 1] / results[n]["pydantic"][i] for n in sizes for i in (0, 2)
    ]
    lines.append(
        f"- reset(state=...) against pydantic v2 validating the same JSON (object and text): "
        f"{min(ratios):.2f}-{max(ratios):.2f}x ({'meets' if max(ratios) <= 1 else 'misses'} <= 1x)"
    )
    for label, key, goal in (
        ("reset(state=...) (against load_state)", "setup", 2.0),
        ("state_hash() from nothing (against hashlib over json.dumps)", "hash", 1.5),
    ):
        ratios = [results[n][key][-1] / results[n][key][0] for n in sizes]
        lines.append(
            f"- {label}: ratio {min(ratios):.2f}-{max(ratios):.2f} "
            f"({'meets' if max(ratios) <= goal else 'misses'} <= {goal:g}x)"
        )
    return lines


def load_classes() -> tuple[type[Any], type[Any]]:
    """SleepTracking and the inline Wallet spec, compiled in memory."""
    sleep_cls = envdsl.load(REPO / "examples" / "sleep_tracking.env")
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "wallet.env"
        spec.write_text(WALLET_SPEC)
        wallet_cls = envdsl.load(spec)
    return sleep_cls, wallet_cls


def instruction_report(counts: dict[str, tuple[float, float]], n: int, calls: int) -> list[str]:
    lines = [
        f"| operation, N={n:,} ({calls} calls a segment) | guarded instructions a call "
        "| generated | generated / guarded |",
        "|---|---:|---:|---:|",
    ]
    for op, _ in OPERATIONS:
        gen, guarded = counts[op]
        lines.append(f"| {op} | {guarded:,.0f} | {gen:,.0f} | {gen / guarded:.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument(
        "--budget", type=float, default=0.4, help="seconds per implementation and operation"
    )
    parser.add_argument(
        "--no-profile", action="store_true", help="do not profile operations that are not flat"
    )
    parser.add_argument(
        "--profile-overhead",
        action="store_true",
        help="also profile the generated query and update at the smallest size (constant cost)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="N = 100 and a tiny budget (keeps the script working)"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the call rows in instructions at the smallest size (valgrind; slow)",
    )
    parser.add_argument(
        "--calls", type=int, default=INSTRUCTION_CALLS, help="calls per counted segment"
    )
    parser.add_argument("--phase", choices=("calls",), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.phase == "calls":  # one process under callgrind: see instruction_rows
        sleep_cls, wallet_cls = load_classes()
        labels = call_segments(sleep_cls, wallet_cls, options.sizes[0], options.calls)
        print(json.dumps(labels))
        return
    if options.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on the PATH")
    if options.quick:
        options.sizes, options.budget, options.no_profile = [100], 0.01, True
    sizes = sorted(options.sizes)

    total = time.perf_counter()
    sleep_cls, wallet_cls = load_classes()
    check_equivalence(sleep_cls)

    timer = Timer(options.budget, options.quick)
    results: dict[int, dict[str, Any]] = {}
    for n in sizes:
        started = time.perf_counter()
        # operations that grew too much are profiled at the largest size, as soon as timed
        profiling = not options.no_profile and n == sizes[-1] and len(sizes) > 1
        baseline = results[sizes[0]]["times"] if profiling else None
        results[n] = bench_size(n, sleep_cls, wallet_cls, timer, baseline)
        print(f"N={n:,}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if options.profile_overhead:
        profile_overhead(sleep_cls, sizes[0])

    print(
        f"\nbench_runtime.py, {dt.date.today()}, Python {platform.python_version()}, "
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores\n"
    )
    print("\n".join(report(results, sizes)))
    print()
    print("\n".join(fixed_costs(sleep_cls, timer)))
    print("\nAgainst the goals (generated <= 2x the guarded hand-written; flat in N):")
    print("\n".join(verdict(results, sizes)))
    if options.instructions:
        counts = instruction_rows(sizes[0], options.calls)
        print("\nThe call rows in instructions (callgrind, one process, the sides in turns):\n")
        print("\n".join(instruction_report(counts, sizes[0], options.calls)))

    print(f"\ntotal {time.perf_counter() - total:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
