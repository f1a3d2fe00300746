"""Load on `envdsl serve --transport http`: many concurrent MCP sessions, many opened and closed.

Run from the repository root:

    python3 benchmarks/bench_serve_load.py                       # 200 at once, 5,000 in all
    python3 benchmarks/bench_serve_load.py --concurrent 300 --sessions 10000 --wave 100
    python3 benchmarks/bench_serve_load.py --quick               # 10 at once, 30 in all

The server is a real `envdsl serve` process on 127.0.0.1 (examples/sleep_tracking.env and one
of its tasks); the clients are the official MCP SDK's, all in one event loop, each session on
an HTTP client of its own (they share one TLS context: see `TLS`).

Phase 1, isolation under concurrency: `--concurrent` sessions are opened and held at once; each
makes a write of its own (a failed call, then a successful one with its own arguments) and reads
its state hash, which must be the hash its own calls give from the task's initial state (an
in-process environment replays them), whatever the other sessions did.

Phase 2, churn: `--sessions` sessions are opened, used (list tools, one call, read the state)
and closed, `--wave` at a time; the server's resident memory (VmRSS) is read before, after every
tenth of them and at the end. Memory is bounded if it stops growing: the report gives the
growth per 1,000 closed sessions over the second half of the run.

The report: latencies of a tool call (median, p95, max) in both phases, sessions per second,
the server's and the clients' CPU time, the server's RSS, and every session that failed or saw
another session's state. The exit status is 1 when a session failed or was not isolated, or
when a run of at least 1,000 sessions grew the server by more than `--max-growth` MB per
1,000 closed over its second half (a closed session's environment is freed on its DELETE;
the RSS a server gains over its first thousand or so sessions, then keeps flat, is not a
leak, hence the second half). The
quick mode's 30 sessions are too few to tell growth from the allocator's steps: it reports
growth and does not judge it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socket
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import envdsl  # noqa: E402

SPEC = REPO / "examples" / "sleep_tracking.env"
SESSION_TIMEOUT_S = 300.0  # a session that gets no answer counts as failed, never hangs the run
TASK = "reactivate_and_log"
# The SDK's default HTTP client loads the CA bundle for every session it opens (23 ms of CPU
# here: 70 % of the client's time in a churn, 4x the server's whole work for the session).
# The server is what is measured, so the sessions share one TLS context (unused: plain http)
# and still each have an HTTP client and connections of their own, as separate agents would.
TLS = ssl.create_default_context()
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults (create_mcp_http_client)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU time (/proc/PID/stat's utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(port: int, launcher: list[str] | None = None) -> subprocess.Popen[bytes]:
    """`envdsl serve` on the port (`launcher`: what runs in place of `python -m envdsl serve`)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    launcher = launcher or [sys.executable, "-m", "envdsl", "serve"]
    server = subprocess.Popen(
        [*launcher, str(SPEC), "--task", TASK, "--transport", "http", "--port", str(port)],
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            said = server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"the server exited: {said[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start in 60 s")
            time.sleep(0.1)


def own_calls(index: int) -> list[tuple[str, dict[str, Any]]]:
    """A failed call and a write of this session's own: the log's hours depend on the index."""
    hour = index % 10
    return [
        ("set_status", {"user_id": "U9", "status": "active"}),  # fails: no such user
        ("set_status", {"user_id": "U2", "status": "active"}),
        (
            "add_sleep_log",
            {
                "user_id": "U2",
                "start": f"2024-05-21T0{hour}:00:00Z",
                "end": f"2024-05-21T0{hour}:30:00Z",
                "quality": ["poor", "fair", "good", "excellent"][index % 4],
            },
        ),
    ]


def expected_hashes(count: int) -> dict[int, str]:
    """What each session's state hash must be: its calls replayed in process."""
    env_class = envdsl.load(SPEC)
    hashes = {}
    for variant in range(40):  # the calls repeat with the index modulo 40
        env = env_class()
        env.reset(task=TASK)
        for name, arguments in own_calls(variant):
            env.call(name, arguments)
        hashes[variant] = env.state_hash()
    return {index: hashes[index % 40] for index in range(count)}


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[Client]:
    """An MCP session of the official SDK's client, on an HTTP client of its own."""
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT, verify=TLS) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


async def read_hash(client: Client) -> str:
    result = await client.read_resource("envdsl://state")
    return str(json.loads(result.contents[0].text)["hash"])  # type: ignore[union-attr]


async def timed_call(
    client: Client, name: str, arguments: dict[str, Any], into: list[float]
) -> Any:
    started = time.perf_counter()
    result = await client.call_tool(name, arguments)
    into.append(time.perf_counter() - started)
    return result


async def concurrent_phase(url: str, expected: dict[int, str], latencies: list[float]) -> list[str]:
    """Hold a session per expected hash at once; each must see only its own writes."""
    count = len(expected)
    problems: list[str] = []
    opened = written = 0
    all_open = anyio.Event()
    all_written = anyio.Event()
    release = anyio.Event()

    def arrived() -> None:
        nonlocal opened
        opened += 1
        if opened == count:
            all_open.set()

    def wrote() -> None:
        nonlocal written
        written += 1
        if written == count:
            all_written.set()

    async def session(index: int) -> None:
        stage = "open"
        try:
            with anyio.fail_after(SESSION_TIMEOUT_S):
                async with connect(url) as client:
                    arrived()
                    stage = "write"
                    await all_open.wait()  # every session is open before any writes
                    for name, arguments in own_calls(index):
                        await timed_call(client, name, arguments, latencies)
                    stage = "read"
                    wrote()
                    await release.wait()  # and stays open until every session has written
                    if (seen := await read_hash(client)) != expected[index]:
                        problems.append(f"session {index}: state {seen[:12]} is not its own")
        except Exception as error:  # counted: a session that fails under load
            problems.append(f"session {index} ({stage}): {type(error).__name__}: {error}"[:300])
            if stage == "open":
                arrived()
            if stage in ("open", "write"):
                wrote()

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(session, index)
        await all_written.wait()
        release.set()
    return problems


async def churn_phase(
    url: str,
    count: int,
    wave: int,
    pid: int,
    latencies: list[float],
    memory: list[tuple[int, float]],
) -> list[str]:
    problems: list[str] = []
    done = 0
    limiter = anyio.CapacityLimiter(wave)
    step = max(1, count // 10)

    async def session(index: int) -> None:
        nonlocal done
        async with limiter:
            try:
                with anyio.fail_after(SESSION_TIMEOUT_S):
                    async with connect(url) as client:
                        await client.list_tools()
                        await timed_call(client, "get_user", {"user_id": "U1"}, latencies)
                        await read_hash(client)
            except Exception as error:
                problems.append(f"session {index}: {type(error).__name__}: {error}"[:300])
            done += 1
            if done % step == 0:
                memory.append((done, rss_mb(pid)))

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(session, index)
    return problems


def describe(latencies: list[float]) -> str:
    if not latencies:
        return "no calls"
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms ({len(ordered)} calls)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--wave", type=int, default=50, help="sessions in flight in phase 2")
    parser.add_argument("--quick", action="store_true", help="10 at once, 30 in all")
    parser.add_argument(
        "--max-growth", type=float, default=5.0,
        help="MB per 1,000 closed sessions over the second half that fails a run of >= 1,000",
    )  # fmt: skip
    args = parser.parse_args()
    concurrent, sessions, wave = (
        (10, 30, 10) if args.quick else (args.concurrent, args.sessions, args.wave)
    )
    # the SDK logs each dropped connection with a traceback; they are counted per session here
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    port = free_port()
    server = start_server(port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        start_rss = rss_mb(server.pid)
        held: list[float] = []
        expected = expected_hashes(concurrent)  # compiled in process before the clock starts
        cpu = [(cpu_seconds(server.pid), time.process_time())]
        started = time.perf_counter()
        isolation = anyio.run(concurrent_phase, url, expected, held)
        phase1 = time.perf_counter() - started
        after_held = rss_mb(server.pid)
        churned: list[float] = []
        memory: list[tuple[int, float]] = [(0, after_held)]
        cpu.append((cpu_seconds(server.pid), time.process_time()))
        started = time.perf_counter()
        churn = anyio.run(churn_phase, url, sessions, wave, server.pid, churned, memory)
        phase2 = time.perf_counter() - started
        cpu.append((cpu_seconds(server.pid), time.process_time()))
        end_rss = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    half = [m for m in memory if m[0] >= sessions // 2]
    growth = (
        (half[-1][1] - half[0][1]) / max(1, half[-1][0] - half[0][0]) * 1000
        if len(half) >= 2
        else float("nan")
    )
    print(f"MCP load: {SPEC.name} task {TASK}, server pid {server.pid}")
    print(
        f"| phase 1: {concurrent} sessions held at once | {phase1:.1f} s | "
        f"{len(isolation)} failed or not isolated | calls {describe(held)} |"
    )
    print(
        f"| phase 2: {sessions} opened and closed, {wave} in flight | {phase2:.1f} s | "
        f"{sessions / phase2:.1f} sessions/s | {len(churn)} failed | calls {describe(churned)} |"
    )
    for phase, count, before, after in (
        (1, concurrent, cpu[0], cpu[1]),
        (2, sessions, cpu[1], cpu[2]),
    ):
        server_cpu, client_cpu = after[0] - before[0], after[1] - before[1]
        print(
            f"CPU in phase {phase}: server {server_cpu:.1f} s "
            f"({server_cpu / count * 1000:.1f} ms per session), clients {client_cpu:.1f} s"
        )
    print(
        f"server RSS: {start_rss:.0f} MB at start, {after_held:.0f} MB after phase 1, "
        f"{max(m[1] for m in memory):.0f} MB peak, {end_rss:.0f} MB at the end"
    )
    print(f"RSS growth over the second half of phase 2: {growth:.2f} MB per 1,000 closed sessions")
    print("RSS by sessions closed: " + ", ".join(f"{n} {mb:.0f}" for n, mb in memory))
    for problem in (isolation + churn)[:10]:
        print(f"  FAIL {problem}")
    leaking = sessions >= 1000 and not growth <= args.max_growth  # a NaN growth fails too
    if leaking:
        print(f"  FAIL the server grew more than {args.max_growth} MB per 1,000 closed sessions")
    return 1 if isolation or churn or leaking else 0


if __name__ == "__main__":
    sys.exit(main())
