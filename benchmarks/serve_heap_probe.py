"""What a churned `envdsl serve --transport http` holds: its Python heap, not only its RSS.

    python3 benchmarks/serve_heap_probe.py                # samples after 0, 250, 500, 1,000, 2,000
    python3 benchmarks/serve_heap_probe.py --quick        # after 0, 10, 30 (tests/)

RSS alone cannot tell a leak from the allocator keeping the pages of the sessions that were in
flight. This starts the server under a wrapper (this file, `--wrapped`) that traces the heap
(tracemalloc) and, on SIGUSR1, prints one JSON line on stderr: the heap now and its peak since
the last sample, the objects the collector tracks (the most common types), the server's
threads and the sessions its registry holds. The churn is bench_serve_load's (sessions
opened, used and closed, 50 in flight). A leak shows as a heap, an object count or a
registry that grows with the sessions closed; the peak is what the sessions in flight cost.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import logging
import signal
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MARK = "HEAP "


def wrapped_server(argv: list[str]) -> None:
    """`envdsl serve ARGV...` in this process, answering SIGUSR1 with a sample on stderr.
    (Run with the repository on PYTHONPATH, as start_server does.)"""
    tracemalloc.start()
    from envdsl.serve import sessions

    registries: list[Any] = []
    original = sessions.Sessions.__init__

    def remembered(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        registries.append(self)

    sessions.Sessions.__init__ = remembered  # type: ignore[method-assign]

    def sample(*_: Any) -> None:
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        types = collections.Counter(type(o).__name__ for o in gc.get_objects())
        line = {
            "heap_mb": round(current / 1e6, 1), "peak_mb": round(peak / 1e6, 1),
            "objects": sum(types.values()), "top": types.most_common(8),
            "threads": threading.active_count(), "sessions": [len(r) for r in registries],
        }  # fmt: skip
        print(MARK + json.dumps(line), file=sys.stderr, flush=True)

    signal.signal(signal.SIGUSR1, sample)
    from envdsl.cli import main

    sys.argv = ["envdsl", "serve", *argv]
    main()


def probe(points: list[int]) -> list[tuple[int, float, dict[str, Any]]]:
    sys.path.insert(0, str(HERE))
    import anyio
    import bench_serve_load as load

    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    port = load.free_port()
    server = load.start_server(port, [sys.executable, __file__, "--wrapped"])
    samples = []
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        done = 0
        for point in points:
            if point > done:
                problems = anyio.run(load.churn_phase, url, point - done, 50, server.pid, [], [])
                assert not problems, problems[:3]
                done = point
            time.sleep(0.5)  # the last sessions' DELETEs
            server.send_signal(signal.SIGUSR1)
            assert server.stderr is not None
            line = server.stderr.readline().decode()
            while not line.startswith(MARK):
                assert line, "the server exited"
                line = server.stderr.readline().decode()
            samples.append((done, load.rss_mb(server.pid), json.loads(line[len(MARK) :])))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return samples


def main() -> None:
    if sys.argv[1:2] == ["--wrapped"]:
        wrapped_server(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[0, 250, 500, 1000, 2000])
    parser.add_argument("--quick", action="store_true", help="samples after 0, 10 and 30")
    args = parser.parse_args()
    points = [0, 10, 30] if args.quick else sorted(args.points)
    print("| sessions closed | RSS MB | heap MB | heap peak MB | objects | threads | held |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for done, rss, line in probe(points):
        print(
            f"| {done} | {rss:.0f} | {line['heap_mb']} | {line['peak_mb']} | {line['objects']} "
            f"| {line['threads']} | {line['sessions']} |"
        )


if __name__ == "__main__":
    main()
