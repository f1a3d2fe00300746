"""Servers for tests: bound to 127.0.0.1 on a free port, stopped when the block ends."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from typing import Any, Iterator


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(process: subprocess.Popen[bytes], port: int, seconds: float = 120) -> None:
    """Until the process accepts connections on the port (its stderr if it dies first)."""
    deadline = time.monotonic() + seconds
    while True:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"the server did not start in {seconds} s"
            time.sleep(0.1)


@contextlib.contextmanager
def uvicorn_in_thread(app: Any) -> Iterator[int]:
    """An ASGI app served by uvicorn in a thread of this process; yields its port."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)
