"""Every benchmark script runs in a quick mode here, so that none of them rots unnoticed.

Timings are not asserted (they belong to the scripts' own reports); a script must run to the
end, compare its two sides where it does, and print its table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_benchmark(*args: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_bench_aliases_quick() -> None:
    out = run_benchmark("bench_aliases.py", "--quick")
    assert "| modify (2 swaps) |" in out and "| late failure |" in out


def test_fuzz_compiler_quick() -> None:
    out = run_benchmark("fuzz_compiler.py", "--quick")
    assert "compiler fuzz: 30 mutants" in out and "internal errors (E9001):    0" in out


def test_fuzz_runtime_quick() -> None:
    """Random and malformed calls and states against every example: all counts zero."""
    out = run_benchmark("fuzz_runtime.py", "--quick")
    assert "| sleep_tracking |" in out
    assert "0 escaped, 0 internal errors, 0 over 2 s, 0 rollback breaks, 0 hash errors" in out
    assert "0 raised other than InvalidState" in out and ": 0 examples differ" in out


def test_bench_rollout_quick() -> None:
    """A scripted agent solves every task on both local configurations (Ray: the full run)."""
    out = run_benchmark("bench_rollout.py", "--quick")
    assert "| local 1 proc | 3 |" in out and "| local 2 procs | 3 |" in out
    assert out.count("| 100% |") == 2


def test_bench_runtime_quick() -> None:
    """The hand-written ports agree with the generated envs; every table is printed."""
    out = run_benchmark("bench_runtime.py", "--quick")
    assert "| query | 100 |" in out and "| snapshot() | 100 |" in out and "| restore() |" in out
    assert "| state_hash() |" in out and "memory held" in out
    assert "hand-written, guarded µs" in out and "the guarded hand-written" in out
    assert "| reset(state=...) / pydantic v2 |" in out and "again / first" in out


def test_bench_check_quick() -> None:
    out = run_benchmark("bench_check.py", "--quick")
    assert "static check / bare lark parse:" in out and "ratio to `import lark`:" in out
    assert "black    during `envdsl check --no-verify`: not imported" in out


def test_bench_explore_quick() -> None:
    out = run_benchmark("bench_explore.py", "--quick")
    assert "sleep_tracking" in out and "bare hyp/s" in out


def test_bench_explore_instruction_phase() -> None:
    """A process of `--instructions`' count (warm-up, then one more main run) runs to the end;
    valgrind itself is too slow to run here."""
    assert (
        run_benchmark("bench_explore.py", "--phase", "explore", "--max-calls", "40", "hris") == ""
    )


def test_bench_batch_quick() -> None:
    out = run_benchmark("bench_batch.py", "--quick")
    assert "| `check` | 1 |" in out and "| `check --no-verify` | 1 |" in out


def test_bench_retail_quick() -> None:
    """τ-bench retail's port and τ-bench's own tools agree on the first tasks' gold calls."""
    out = run_benchmark("bench_retail.py", "--quick")
    assert "compared: 22 calls, 3 final states" in out and "differences: 0" in out
    assert (
        ", 0 differ" in out
        and "| envdsl `env.call` |" in out
        and "| get_order_details | 7 |" in out
    )
    assert "each task from its start (reset + calls, first calls included)" in out


def test_bench_airline_quick() -> None:
    """τ-bench airline's port and τ-bench's own tools agree on the first tasks' gold calls."""
    out = run_benchmark("bench_airline.py", "--quick")
    assert "compared: 7 calls, 3 final states" in out and "differences: 0" in out
    assert "| update_reservation_flights | 5 |" in out and "| book_reservation | 1 |" in out
    assert "each task from its start (reset + calls, first calls included)" in out


def test_bench_openenv_sessions_quick() -> None:
    out = run_benchmark("bench_openenv_sessions.py", "--quick")
    assert "| 1 at a time |" in out and "| 40 at a time |" in out


def test_fuzz_grammar_quick() -> None:
    """Derivations of the grammar and typed programs: every oracle count zero."""
    out = run_benchmark("fuzz_grammar.py", "--quick")
    assert "grammar fuzz: 30 programs" in out and "semantic oracle:" in out
    for oracle in ("E9001", "escaped", "hang", "escape", "internal", "rollback", "rule"):
        assert f"  {oracle + ':':<12}0\n" in out, out


def test_bench_serve_load_quick() -> None:
    """A real `envdsl serve` over HTTP: sessions held at once stay isolated, churn succeeds."""
    out = run_benchmark("bench_serve_load.py", "--quick")
    assert "| phase 1: 10 sessions held at once |" in out and "| 0 failed or not isolated |" in out
    assert "| phase 2: 30 opened and closed" in out and "| 0 failed |" in out
    assert "RSS growth over the second half of phase 2:" in out
    assert "CPU in phase 2: server " in out and "ms per session), clients " in out


def test_serve_heap_probe_quick() -> None:
    """The wrapped server answers its samples; every churned session was freed on close."""
    out = run_benchmark("serve_heap_probe.py", "--quick")
    rows = [line.split("|")[1:-1] for line in out.splitlines()[2:]]
    assert [int(row[0]) for row in rows] == [0, 10, 30], out
    assert all(row[6].strip() == "[0]" for row in rows), out  # the registry holds none
    assert all(float(row[2]) > 0 and int(row[4]) > 0 for row in rows), out


def test_bench_runtime_instruction_phase() -> None:
    """The process `--instructions` counts (every call row on both sides, in segments) runs to
    the end and names its segments; valgrind itself is too slow to run here."""
    out = run_benchmark("bench_runtime.py", "--phase", "calls", "--sizes", "20", "--calls", "4")
    labels = [tuple(label) for label in json.loads(out.splitlines()[-1])]
    assert ("insert", "generated") in labels and ("late fail 2", "guarded") in labels
