"""The OpenEnv WebSocket server's memory over many opened and closed sessions (issue 27,
point 10): a server on 127.0.0.1 in a child process, a client that opens a `/ws` session,
resets, makes one call, closes, N times (one client at a time, then many at once); the
server's resident memory (VmRSS) after a warm-up and at the end, per closed session.

    python benchmarks/bench_openenv_sessions.py [--sessions 3000] [--concurrent 48] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SLEEP = REPO / "examples" / "sleep_tracking.env"

SERVER = """
import sys, uvicorn, envdsl
from envdsl.serve.openenv import build_app
from envdsl.serve.sessions import Sessions
app = build_app(Sessions(envdsl.load(sys.argv[2]), task="reactivate_and_log"))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="critical")
"""


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def one_session(url: str) -> None:
    from websockets.sync.client import connect

    with connect(url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        json.loads(ws.recv())
        call = {"name": "get_user", "arguments": {"user_id": "U1"}}
        ws.send(json.dumps({"type": "step", "data": call}))
        assert json.loads(ws.recv())["type"] == "observation"
        ws.send(json.dumps({"type": "close", "data": {}}))


def measure(sessions: int, warmup: int, concurrent: int) -> tuple[int, int, float]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port), str(SLEEP)],
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        url = f"ws://127.0.0.1:{port}/ws"
        with ThreadPoolExecutor(max_workers=concurrent) as clients:
            list(clients.map(lambda _: one_session(url), range(warmup)))
            before = rss_kb(server.pid)
            started = time.perf_counter()
            list(clients.map(lambda _: one_session(url), range(sessions)))
            seconds = time.perf_counter() - started
        time.sleep(0.5)  # the last sessions' teardown
        return before, rss_kb(server.pid), seconds
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--concurrent", type=int, default=40, help="clients at once")
    parser.add_argument("--warmup", type=int, help="sessions before the first measure")
    parser.add_argument("--quick", action="store_true", help="200 sessions (CI)")
    args = parser.parse_args()
    sessions = 200 if args.quick else args.sessions
    warmup = args.warmup if args.warmup is not None else (50 if args.quick else 200)
    print(f"OpenEnv /ws: {sessions} sessions opened and closed (after {warmup} to warm up)\n")
    print("| clients | RSS before (MB) | RSS after (MB) | growth per session (KB) | sessions/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for concurrent in (1, args.concurrent):
        before, after, seconds = measure(sessions, warmup, concurrent)
        print(
            f"| {concurrent} at a time | {before / 1024:.1f} | {after / 1024:.1f} | "
            f"{(after - before) / sessions:.1f} | {sessions / seconds:.0f} |"
        )


if __name__ == "__main__":
    main()
