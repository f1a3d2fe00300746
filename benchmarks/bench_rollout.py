"""Rollouts per second of `envdsl rollout` for a scripted agent over the examples: the local
backend at 1 and 2 processes, and Ray on 2 CPUs.

Run from the repository root:

    python3 benchmarks/bench_rollout.py              # every task of every example, 4 samples
    python3 benchmarks/bench_rollout.py --samples 8 --no-ray
    python3 benchmarks/bench_rollout.py --quick      # sleep_tracking only, 1 sample, no Ray

The agent is scripted: a chat completions server (tests/chat_server.py, in its own process on
127.0.0.1) answers each request with the task's reference solution, one tool call per turn,
then its reference answer, so every rollout succeeds and the run measures envdsl's side: the
`openai` client, the HTTP round trips, the agent loop, the environment, the records written.
Each configuration runs the same jobs into a fresh output file through envdsl.rollout.runner
(what the command runs); `--concurrency` equals the processes, one rollout in flight each.
A warm-up run (imports, the first connection, loading the modules) comes first, untimed.

  rollouts/s   rollouts / wall time of the run (Ray: after `ray.init`, timed apart)
  vs 1 proc    that rate over the local 1-process rate measured in the same run
  env share    the time spent in `env.call`, `reset` and `evaluate` over the rollouts' own
               time (from the records' timings): the environment's part of a rollout

A script, not a test: nothing fails when the machine is slow.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the scripted chat server

from envdsl.llm.client import ClientConfig  # noqa: E402
from envdsl.pipeline import compile_file  # noqa: E402
from envdsl.rollout import runner  # noqa: E402
from envdsl.rollout.episode import system_message  # noqa: E402
from envdsl.rollout.plan import EnvSource, env_source  # noqa: E402
from envdsl.rollout.records import Sampling  # noqa: E402
from envdsl.tasks.task_files import is_task_file  # noqa: E402
from envdsl.util.backends import Backend  # noqa: E402

EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.env") if not is_task_file(p))


def load(path: Path) -> EnvSource:
    result = compile_file(path, formatted=False)
    assert result.ok, path
    return env_source(str(path), path.read_text("utf-8"), result)


def scripts(sources: list[EnvSource]) -> dict[str, dict[str, Any]]:
    """(system message, instruction) -> the reference solution's calls and answer."""
    found: dict[str, dict[str, Any]] = {}
    for source in sources:
        env_class = source.environment_class()
        for name, task in env_class.TASKS.items():
            env = env_class()
            env.reset(task=name)
            env.solve(name)
            calls = [[entry.name, entry.arguments] for entry in env.trace]
            key = json.dumps([system_message(env_class), task.instruction])
            found[key] = {"calls": calls, "answer": task.answer or "Done."}
    return found


def serve(script_file: str) -> None:
    """The scripted agent's server (run in a process of its own): prints its URL, serves
    until stdin closes."""
    from chat_server import ChatServer, tool_calls

    known = json.loads(Path(script_file).read_text("utf-8"))

    def respond(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        script = known[json.dumps([messages[0]["content"], messages[1]["content"]])]
        step = sum(1 for message in messages if message["role"] == "tool")
        if step < len(script["calls"]):
            name, arguments = script["calls"][step]
            return tool_calls((name, arguments))
        return script["answer"]

    server = ChatServer()
    server.responder = respond
    print(server.url, flush=True)
    sys.stdin.read()
    server.close()


def measure(
    label: str,
    sources: list[EnvSource],
    url: str,
    backend: Backend,
    samples: int,
    directory: str,
) -> dict[str, Any]:
    sampling = Sampling("scripted", None, None, None, max_turns=50)
    config = ClientConfig(base_url=url, model="scripted", api_key="x", retries=0, timeout=30)
    jobs = runner.plan(sources, None, samples, sampling)
    out = os.path.join(directory, f"{label.replace(' ', '_')}.jsonl")
    started = time.perf_counter()
    report = runner.run(runner.Rollouts(tuple(sources), config, sampling), jobs, out, backend)
    wall = time.perf_counter() - started
    records = [json.loads(line) for line in Path(out).read_text("utf-8").splitlines()]
    own = sum(r["timings"]["total_s"] for r in records)
    env = sum(r["timings"]["env_s"] for r in records)
    assert report.errors == 0 and len(records) == len(jobs), report
    return {
        "label": label,
        "rollouts": len(records),
        "rate": len(records) / wall,
        "env_share": env / own if own else 0.0,
        "success": sum(r["success"] for r in records) / len(records),
        "calls": sum(r["tool_calls"] for r in records),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=4, help="samples per task")
    parser.add_argument("--no-ray", action="store_true", help="only the local backend")
    parser.add_argument("--quick", action="store_true", help="one example, 1 sample, no Ray")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    paths = [REPO / "examples" / "sleep_tracking.env"] if args.quick else EXAMPLES
    samples = 1 if args.quick else args.samples
    sources = [load(path) for path in paths]
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as directory:
        script_file = os.path.join(directory, "scripts.json")
        Path(script_file).write_text(json.dumps(scripts(sources)), encoding="utf-8")
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", script_file],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            # imports, the client's first connection, loading the modules: not in any row
            measure("warm-up", sources, url, Backend(), 1, directory)
            rows = [
                measure("local 1 proc", sources, url, Backend(), samples, directory),
                measure(
                    "local 2 procs",
                    sources,
                    url,
                    Backend(concurrency=2, processes=2),
                    samples,
                    directory,
                ),
            ]
            ray_start = None
            if not (args.quick or args.no_ray):
                import ray

                started = time.perf_counter()
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
                ray_start = time.perf_counter() - started
                try:
                    ray_backend = Backend("ray", concurrency=2)
                    rows.append(
                        measure("ray 2 cpus", sources, url, ray_backend, samples, directory)
                    )
                finally:
                    ray.shutdown()
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=30)
    print(
        f"python {platform.python_version()} on {os.cpu_count()} cores; {len(sources)} examples, "
        f"{len(rows[0:1]) and rows[0]['rollouts']} rollouts per configuration "
        f"({samples} per task), {rows[0]['calls']} tool calls"
    )
    print()
    print("| backend | rollouts | rollouts/s | vs 1 proc | env share | success |")
    print("|---|---:|---:|---:|---:|---:|")
    base = rows[0]["rate"]
    for row in rows:
        print(
            f"| {row['label']} | {row['rollouts']} | {row['rate']:.1f} | "
            f"{row['rate'] / base:.2f}x | {row['env_share']:.1%} | {row['success']:.0%} |"
        )
    if ray_start is not None:
        print(f"\nray.init(num_cpus=2): {ray_start:.1f} s (not in the Ray row)")


if __name__ == "__main__":
    main()
