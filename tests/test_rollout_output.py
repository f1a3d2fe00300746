"""The trajectory file and the workers of `envdsl rollout` when runs are killed or overlap
(issue 27, points 11-13): real processes, a real kill -9, the scripted chat server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from chat_server import ChatServer
from test_rollout import SPEC, agent, records, rollout

from envdsl.rollout.output import OutputBusy, open_locked, repair_torn_end

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    chat.responder = agent
    yield chat
    chat.close()


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "counter.env"
    path.write_text(SPEC, encoding="utf-8")
    return path


def start_rollout(server: ChatServer, spec: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "envdsl", "rollout", str(spec), "--model", "m"]
    command += ["--base-url", server.url, "--out", str(out), "--backoff", "0", "--retries", "0"]
    command += ["--timeout", "120", "--all", *args]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


# ---- 11. workers exit with their parent ----------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_exit_when_the_rollout_is_killed(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.delay = 30.0  # every reply is slow: the workers are blocked in their requests
    run = start_rollout(server, spec, tmp_path / "traj.jsonl", "-n", "4", "--processes", "2")
    try:
        assert wait_for(lambda: len(children(run.pid)) >= 2, 60), run.stderr
        workers = children(run.pid)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
        assert wait_for(lambda: not any(alive(w) for w in workers), 10), [
            w for w in workers if alive(w)
        ]
    finally:
        run.kill()
        run.wait(10)


# ---- 12. one run per output file -------------------------------------------------------------


def test_a_second_run_on_the_same_output_fails_clearly(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    out = tmp_path / "traj.jsonl"
    server.delay = 0.5
    first = start_rollout(server, spec, out, "-n", "2")
    try:
        assert wait_for(lambda: len(server.requests) >= 1, 60)  # holds the lock by now
        second = rollout(server, spec, out, "--all", "-n", "2")
        assert second.exit_code == 2, second.output
        assert "being written by another rollout run" in second.output
        assert "Traceback" not in second.output
        first.wait(120)
        assert first.returncode == 0, first.stderr
    finally:
        first.kill()
        first.wait(10)
    made = records(out)
    keys = [r["key"] for r in made]
    assert len(keys) == 4 and len(set(keys)) == 4  # each record once
    # once the first run has ended, the file is free: a rerun skips every scored record
    server.delay = 0.0
    again = rollout(server, spec, out, "--all", "-n", "2")
    assert again.exit_code == 0, again.output
    assert "ran 0 rollouts (4 already in" in again.output


def test_the_lock_is_held_until_closed(tmp_path: Path) -> None:
    out = tmp_path / "traj.jsonl"
    with open_locked(out):
        with pytest.raises(OutputBusy):
            open_locked(out)
    with open_locked(out):  # released with the handle
        pass


# ---- 13. a cut-off last line -------------------------------------------------------------------


def test_a_cut_off_last_line_is_dropped_with_a_warning(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    out = tmp_path / "traj.jsonl"
    assert rollout(server, spec, out, "--all", "-n", "2").exit_code == 0
    lines = out.read_bytes().splitlines(keepends=True)
    cut = lines[-1][: len(lines[-1]) // 2]  # a kill in the middle of writing the last record
    out.write_bytes(b"".join(lines[:-1]) + cut)
    result = rollout(server, spec, out, "--all", "-n", "2")
    assert result.exit_code == 0, result.output
    assert "dropped a cut-off last line" in result.output and f"line {len(lines)}" in result.output
    assert result.output.index("dropped a cut-off") < result.output.index("ran 1 rollouts")
    made = records(out)  # every line parses now
    assert len(made) == 4 and len({r["key"] for r in made}) == 4


def test_a_whole_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "traj.jsonl"
    whole = json.dumps({"key": "k1", "finish": "answer"})
    out.write_text(whole + "\n" + json.dumps({"key": "k2", "finish": "answer"}))
    with open_locked(out) as handle:
        assert repair_torn_end(handle) is None
    assert out.read_text().splitlines()[1] == json.dumps({"key": "k2", "finish": "answer"})
    assert out.read_text().endswith("\n")
    # nothing but a fragment: the file is left empty
    out.write_text('{"key": "k3", "fin')
    with open_locked(out) as handle:
        assert "line 1" in (repair_torn_end(handle) or "")
    assert out.read_bytes() == b""
