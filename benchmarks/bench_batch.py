"""How fast is `envdsl check` over many specs? 1,000 mutated examples, --jobs 1 against --jobs 2.

Run from the repository root:

    python3 benchmarks/bench_batch.py                  # 1,000 specs, seed 2026
    python3 benchmarks/bench_batch.py --specs 200 --jobs 1 2 4 --repeats 3 --keep /tmp/corpus

The specs are the examples with 0-3 random line edits each (delete, duplicate, swap with the
next line, drop a closing brace) from a fixed seed, so the same corpus comes back every run;
about half still check clean, the rest give a spread of diagnostic codes. Each configuration
is one `envdsl check DIR --format jsonl --jobs N [--no-verify]` subprocess (the `envdsl`
console script when installed, else `python -m envdsl`); the wall time includes the start-up
of the process and of its workers. The summary line of the jsonl output gives the counts.
A script, not a test: nothing fails when the machine is slow.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from envdsl.tasks.task_files import is_task_file

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.env") if not is_task_file(p))


def make_corpus(directory: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    texts = [path.read_text("utf-8").splitlines(keepends=True) for path in EXAMPLES]
    for number in range(count):
        lines = list(rng.choice(texts))
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            at = rng.randrange(len(lines))
            kind = rng.choice(["delete", "duplicate", "swap", "unbrace"])
            if kind == "delete":
                del lines[at]
            elif kind == "duplicate":
                lines.insert(at, lines[at])
            elif kind == "swap" and at + 1 < len(lines):
                lines[at], lines[at + 1] = lines[at + 1], lines[at]
            elif kind == "unbrace":
                closing = [i for i, line in enumerate(lines) if line.strip() == "}"]
                if closing:
                    del lines[rng.choice(closing)]
        (directory / f"spec_{number:04d}.env").write_text("".join(lines), encoding="utf-8")


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def parallel_ceiling(jobs: int) -> float:
    """The speed-up of `jobs` processes on pure-Python busy work right now: what the machine
    can give (other work on shared cores lowers it), to read the --jobs speed-ups against."""
    from concurrent.futures import ProcessPoolExecutor

    rates = []
    for workers in (1, jobs):
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_burn, [1000] * workers))  # start the workers
            start = time.perf_counter()
            list(pool.map(_burn, [2_000_000] * 4 * jobs))
            rates.append(1 / (time.perf_counter() - start))
    return rates[1] / rates[0]


def envdsl_command() -> list[str]:
    script = shutil.which("envdsl")
    return [script] if script else [sys.executable, "-m", "envdsl"]


def run(corpus: Path, jobs: int, verify: bool) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, CPU seconds of the process and its workers, and the jsonl summary."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    command = [*envdsl_command(), "check", str(corpus), "--format", "jsonl", "--jobs", str(jobs)]
    if not verify:
        command.append("--no-verify")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if process.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} exited {process.returncode}:\n{process.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(process.stdout.splitlines()[-1])["summary"]
    return wall, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=2, help="Keep the best of this many.")
    parser.add_argument("--keep", type=Path, help="Write the corpus here and keep it.")
    parser.add_argument(
        "--quick", action="store_true", help="20 specs, --jobs 1, once (keeps the script working)"
    )
    options = parser.parse_args()
    if options.quick:
        options.specs, options.jobs, options.repeats = 20, [1], 1

    corpus = options.keep or Path(tempfile.mkdtemp(prefix="envdsl-bench-batch-"))
    corpus.mkdir(parents=True, exist_ok=True)
    try:
        make_corpus(corpus, options.specs, options.seed)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(
            f"bench_batch.py: {options.specs} mutated specs (seed {options.seed}), "
            f"python {platform.python_version()} on {cores} cores, {time.strftime('%Y-%m-%d')}, "
            f"best of {options.repeats}"
        )
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for jobs in options.jobs[1:]:
            ceiling = parallel_ceiling(jobs)
            print(f"speed-up of {jobs} processes on plain CPU work, before: {ceiling:.2f}x")
        print()
        # Runs alternate between the --jobs values and the best of --repeats is kept: other
        # work on the machine only ever makes a run slower.
        best: dict[tuple[bool, int], tuple[float, float, dict[str, Any]]] = {}
        for verify in (True, False):
            for _ in range(options.repeats):
                for jobs in options.jobs:
                    measured = run(corpus, jobs, verify)
                    if (verify, jobs) not in best or measured[0] < best[verify, jobs][0]:
                        best[verify, jobs] = measured
        print(
            "| mode | jobs | wall s | specs/s | speed-up | CPU ms/spec | specs/s per core | ok "
            "| with errors "
            "| unreadable | errors | warnings |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        summaries: dict[str, dict[str, Any]] = {}
        for verify in (True, False):
            mode = "`check`" if verify else "`check --no-verify`"
            base = options.specs / best[verify, options.jobs[0]][0]
            for jobs in options.jobs:
                wall, cpu, summary = best[verify, jobs]
                rate = options.specs / wall
                summaries[mode] = summary
                print(
                    f"| {mode} | {jobs} | {wall:.1f} | {rate:.1f} | {rate / base:.2f}x | "
                    f"{1000 * cpu / options.specs:.1f} | {options.specs / cpu:.1f} | "
                    f"{summary['ok']} | "
                    f"{summary['with_errors']} | {summary['unreadable']} | {summary['errors']} | "
                    f"{summary['warnings']} |"
                )
        for jobs in options.jobs[1:]:
            ceiling = parallel_ceiling(jobs)
            print(f"\nspeed-up of {jobs} processes on plain CPU work, after: {ceiling:.2f}x")
        for mode, summary in summaries.items():
            print(f"\nby code, {mode}:")
            for code, count in summary["by_code"].items():
                print(f"  {code}  {count:>5}")
    finally:
        if options.keep is None:
            shutil.rmtree(corpus, ignore_errors=True)


if __name__ == "__main__":
    main()
