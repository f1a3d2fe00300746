"""`--backend ray` for `envdsl rollout`, `envdsl check` and `envdsl synth --batch`, on a real
local Ray (`ray.init(num_cpus=2)`, started once for the module: it is slow to start).

Each test runs the same work on the local backend and on Ray and compares the outputs, which
must be the same records in the same (input) order.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from chat_server import ChatServer, tool_calls
from envdsl.cli import main

ray = pytest.importorskip("ray")

SPECS = Path(__file__).parent / "rollout_specs"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    yield chat
    chat.close()


def bump_agent(body: dict[str, Any]) -> Any:
    if body["messages"][-1]["role"] == "tool":
        return "Done."
    return tool_calls(("bump", {"item_id": "A"}), ("bump", '{"item_id": '))


def test_rollouts_on_ray_match_the_local_backend(server: ChatServer, tmp_path: Path) -> None:
    server.responder = bump_agent
    outputs = {}
    for backend in ("local", "ray"):
        out = tmp_path / f"{backend}.jsonl"
        arguments = ["rollout", str(SPECS / "counter.env"), "--tasks", "bump_once", "-n", "3"]
        arguments += ["--model", "m", "--base-url", server.url, "--out", str(out)]
        result = CliRunner().invoke(main, [*arguments, "--backend", backend])
        assert result.exit_code == 0, result.output
        outputs[backend] = [
            {k: v for k, v in json.loads(line).items() if k != "timings"}
            for line in out.read_text("utf-8").splitlines()
        ]
    assert outputs["ray"] == outputs["local"]
    assert [r["sample"] for r in outputs["ray"]] == [0, 1, 2]
    assert all(r["success"] and r["failed_calls"] == 1 for r in outputs["ray"])


def test_check_on_ray_streams_the_same_records(tmp_path: Path) -> None:
    for name in ("sleep_tracking.env", "online_shop.env"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "broken.env").write_text("env X {", encoding="utf-8")
    lines = {}
    for backend in ("local", "ray"):
        arguments = ["check", str(tmp_path), "--format", "jsonl", "--backend", backend]
        result = CliRunner().invoke(main, arguments)
        assert result.exit_code == 1, result.output
        lines[backend] = result.stdout.splitlines()[:-1]  # the summary has timings
    assert lines["ray"] == lines["local"]
    assert [json.loads(line)["file"].rsplit("/", 1)[1] for line in lines["ray"]] == [
        "broken.env",
        "online_shop.env",
        "sleep_tracking.env",
    ]


def test_synth_batch_on_ray(server: ChatServer, tmp_path: Path) -> None:
    spec = (SPECS / "counter.env").read_text("utf-8")
    server.responder = lambda body: f"```envdsl\n{spec}```\n"
    topics = tmp_path / "topics.jsonl"
    topics.write_text(
        "".join(json.dumps({"id": f"t{i}", "topic": f"counter {i}"}) + "\n" for i in range(3)),
        encoding="utf-8",
    )
    arguments = ["synth", "--batch", str(topics), "--out-dir", str(tmp_path / "specs")]
    arguments += ["--log", str(tmp_path / "log.jsonl"), "--model", "m"]
    arguments += ["--base-url", server.url, "--backend", "ray"]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    assert "3 done (0 from earlier runs): 3 accepted" in result.output
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text("utf-8").splitlines()]
    assert [(r["id"], r["phase"]) for r in log] == [
        (f"t{i}", phase) for i in range(3) for phase in ("spec", "done")
    ]
    assert (tmp_path / "specs" / "t2.env").read_text("utf-8") == spec
