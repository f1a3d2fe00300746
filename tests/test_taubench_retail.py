"""The τ-bench retail port (benchmarks/taubench_retail): the spec checks clean, the committed
gold calls are what the extraction script gets from the vendored tasks file, and the port gives
τ-bench's results on calls the gold calls do not make (benchmarks/bench_retail.py compares the
gold calls themselves)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import envdsl
from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile

PORT = Path(__file__).resolve().parent.parent / "benchmarks" / "taubench_retail"
sys.path.insert(0, str(PORT))
sys.path.insert(0, str(PORT.parent))

import bench_retail  # noqa: E402
import extract_gold_calls  # noqa: E402


def test_spec_checks_without_diagnostics() -> None:
    path = PORT / "retail.env"
    result = check_source(SourceFile(str(path), path.read_text(encoding="utf-8")))
    assert result.ok and result.diagnostics == []


def test_gold_calls_are_current() -> None:
    source = gzip.decompress(extract_gold_calls.TASKS.read_bytes()).decode("utf-8")
    tasks, calls = extract_gold_calls.gold_calls(source)
    committed = extract_gold_calls.OUTPUT.read_text(encoding="utf-8").splitlines()
    assert (tasks, len(calls)) == (115, 582)
    assert [json.loads(line) for line in committed] == calls


@pytest.fixture(scope="module")
def text() -> str:
    return bench_retail.data_text()


@pytest.fixture(scope="module")
def loaded(text: str) -> tuple[Any, Any]:
    """The port with τ-bench's data loaded once, and a snapshot to start each test from."""
    env = envdsl.load(str(PORT / "retail.env"))()
    env.reset(state=text)
    return env, env.snapshot()


# Calls off the gold path: each fails or succeeds as on τ-bench, with the same message and the
# same final state
OFF_PATH = [
    ("find_user_id_by_email", {"email": "NOAH.BROWN7922@example.com"}),
    ("find_user_id_by_email", {"email": "nobody@example.com"}),
    ("get_user_details", {"user_id": "nobody"}),
    ("cancel_pending_order", {"order_id": "#W2611340", "reason": "no longer needed"}),
    ("cancel_pending_order", {"order_id": "#W6779827", "reason": "changed my mind"}),
    ("cancel_pending_order", {"order_id": "#W6779827", "reason": "ordered by mistake"}),
    ("modify_pending_order_payment", {"order_id": "#W2611340", "payment_method_id": "x"}),
    (
        "modify_pending_order_payment",
        {"order_id": "#W9318778", "payment_method_id": "credit_card_7862034"},
    ),
    (
        "modify_pending_order_items",
        {
            "order_id": "#W9318778",
            "item_ids": ["2143041831", "2143041831"],
            "new_item_ids": ["x", "y"],
            "payment_method_id": "gift_card_7728021",
        },
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W2611340", "item_ids": [], "payment_method_id": "x"},
    ),
    ("calculate", {"expression": "2 ** -1 * (3 - -4) // 2"}),
    ("calculate", {"expression": "1 / 0"}),
    ("calculate", {"expression": "2 + x"}),
    ("think", {"thought": "hm"}),
]


@pytest.mark.parametrize(
    "name, kwargs", OFF_PATH, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OFF_PATH)]
)
def test_off_path_calls_match_taubench(
    loaded: tuple[Any, Any], text: str, name: str, kwargs: dict[str, Any]
) -> None:
    env, fresh = loaded
    env.restore(fresh)
    before = env.state_hash()
    data = json.loads(text)
    tau = bench_retail.tau_as_result(name, kwargs, bench_retail.tau_step(data, name, kwargs))
    ours = env.call(name, kwargs)
    assert tau["success"] == ours["success"]
    if tau["success"]:
        assert bench_retail.comparable(ours["data"]) == bench_retail.comparable(tau["data"])
    elif name != "calculate":  # calculate's messages are Python's exceptions on τ-bench's side
        assert ours["error"] == tau["error"]
    if not ours["success"]:
        assert env.state_hash() == before
    state = bench_retail.comparable(env.state_json())
    assert state == bench_retail.comparable(bench_retail.tau_state(data))
