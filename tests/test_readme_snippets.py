"""Every Python snippet of README.md runs (issue 25, point 9): the in-process ones as they
are, the servers' against a server this test starts on a free port of 127.0.0.1 (the port the
snippet names is replaced), and the TRL one is the passing test's own code, copied."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest
from servers import free_port, wait_until_listening

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)


def _snippet(marker: str) -> str:
    [found] = [s for s in SNIPPETS if marker in s]
    return found


def _run(code: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    return out.getvalue()


def test_every_snippet_is_covered_here() -> None:
    markers = ["envdsl.load(", "from mcp import Client", "GenericEnvClient", "envdsl.gym.make",
               "SleepEnv = environment_factory"]  # fmt: skip
    assert len(SNIPPETS) == len(markers)
    assert all(any(m in s for s in SNIPPETS) for m in markers)


def test_the_python_api_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    _run(_snippet("envdsl.load("), monkeypatch)


def test_the_gymnasium_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    _run(_snippet("envdsl.gym.make"), monkeypatch)


def test_the_trl_snippet_is_the_passing_tests_code() -> None:
    test = (ROOT / "tests" / "test_trl_training.py").read_text("utf-8")
    assert textwrap.indent(_snippet("SleepEnv = environment_factory"), "    ") in test


@contextlib.contextmanager
def _serving(*arguments: str) -> Iterator[int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    server = subprocess.Popen(
        [sys.executable, "-m", "envdsl", "serve", "examples/sleep_tracking.env",
         "--task", "reactivate_and_log", *arguments, "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_until_listening(server, port)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_mcp_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    with _serving("--transport", "http") as port:
        out = _run(_snippet("from mcp import Client").replace("8000", str(port)), monkeypatch)
    assert "reactivate_and_log" in out and '"success": true' in out


def test_the_openenv_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    with _serving("--transport", "openenv") as port:
        out = _run(_snippet("GenericEnvClient").replace("8001", str(port)), monkeypatch)
    assert "Reactivate" in out and "'checks'" in out
