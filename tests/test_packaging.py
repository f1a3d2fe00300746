"""Packaging that users hit: pickling loaded environments, module names, typed methods,
the py.typed marker and the install's dependencies (issue 11, item 6)."""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_places import ALIASES, assert_well_owned
from test_runtime import build, canonical

import envdsl
from envdsl.runtime import Environment

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"


def _in_a_spawned_worker(blob: bytes) -> tuple[str, bool, float]:
    """Runs in a fresh interpreter: it has never loaded the spec, it imports it by name."""
    env = pickle.loads(blob)
    result = env.call(
        "add_sleep_log",
        {
            "user_id": "U2",
            "start": "2024-05-21T22:45:00Z",
            "end": "2024-05-22T06:10:00Z",
            "quality": "good",
        },
    )
    return env.state_hash(), bool(result["success"]), float(env.evaluate()["reward"])


def test_a_loaded_environment_pickles_into_a_spawn_worker() -> None:
    env = envdsl.load(SLEEP)()
    env.reset(task="reactivate_and_log")
    assert env.call("set_status", {"user_id": "U2", "status": "active"})["success"]
    blob = pickle.dumps(env)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        worker_hash, ok, reward = pool.apply(_in_a_spawned_worker, (blob,))
    assert ok and reward == 1.0
    # the same call here gives the same state: the worker ran the same environment
    assert _in_a_spawned_worker(blob)[0] == worker_hash


def test_pickled_state_keeps_its_places_and_rolls_back() -> None:
    aliases = build(ALIASES)
    env = aliases()
    env.reset(task="start")
    assert env.call("act", {"modes": ["first", "nested path"]})["success"]
    copy: Any = pickle.loads(pickle.dumps(env))
    assert type(copy) is aliases and canonical(copy) == canonical(env)
    assert_well_owned(copy)
    # a write through an alias in the copy is journaled against the copy's own rows
    before = canonical(copy)
    assert not copy.call("act", {"modes": ["loop variable"], "fail_after": True})["success"]
    assert canonical(copy) == before and canonical(env) == before
    assert copy.call("act", {"modes": ["loop variable"]})["success"]
    assert canonical(copy) != canonical(env)
    assert copy.evaluate() == copy.evaluate()  # `initial.` still resolves after the copy


def test_snapshots_pickle_and_restore() -> None:
    env = envdsl.load(SLEEP)()
    env.reset(task="reactivate_and_log")
    snap = pickle.loads(pickle.dumps(env.snapshot()))
    env.call("set_status", {"user_id": "U2", "status": "active"})
    env.restore(snap)
    fresh = envdsl.load(SLEEP)()
    fresh.reset(task="reactivate_and_log")
    assert env.state_hash() == fresh.state_hash() and env.trace == []


def test_specs_with_the_same_stem_do_not_replace_each_other(tmp_path: Path) -> None:
    text = SLEEP.read_text("utf-8")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = tmp_path / "a" / "shop.env"
    second = tmp_path / "b" / "shop.env"
    first.write_text(text, "utf-8")
    second.write_text(text.replace('"""Return one user\'s profile."""', '"""Changed."""'), "utf-8")
    one, two = envdsl.load(first), envdsl.load(second)
    assert one.__module__ != two.__module__
    assert sys.modules[one.__module__].__dict__[one.__name__] is one
    assert sys.modules[two.__module__].__dict__[two.__name__] is two
    assert one.TOOLS["get_user"].description != two.TOOLS["get_user"].description
    # the same content is the same module: loading again gives the same class
    assert envdsl.load(first) is one


def _fresh(env_class: type[Environment]) -> Any:
    env = env_class()
    env.reset(task="reactivate_and_log")
    return env


def test_typed_methods_validate_like_call() -> None:
    sleep = envdsl.load(SLEEP)
    status = sleep.TOOLS["set_status"].params[1].spec.cls  # type: ignore[attr-defined]
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"user_id": "U2", "status": "bogus"}, {"user_id": "U2", "status": "bogus"}),
        ({"user_id": 5, "status": status.active}, {"user_id": 5, "status": "active"}),
        ({"user_id": None, "status": status.active}, {"user_id": None, "status": "active"}),
    ]
    for typed, as_json in cases:
        by_method, by_call = _fresh(sleep), _fresh(sleep)
        before = by_method.state_hash()
        result = by_method.set_status(**typed)
        assert result == by_call.call("set_status", as_json)
        assert result["success"] is False and "invalid argument" in result["error"]
        assert by_method.state_hash() == before and by_method.trace[-1].success is False
    # a member's JSON value is accepted as `call` accepts it
    env = _fresh(sleep)
    assert env.set_status(user_id="U2", status="active")["success"]
    assert env.t_users.row("U2").status is status.active


def test_typed_methods_reject_a_member_of_another_enum() -> None:
    sleep = envdsl.load(SLEEP)
    quality = sleep.TOOLS["add_sleep_log"].params[3].spec.cls  # type: ignore[attr-defined]
    env = _fresh(sleep)
    result = env.set_status(user_id="U2", status=quality.good)
    assert result["success"] is False and "invalid argument status" in result["error"]
    assert env.t_users.row("U2").status.value == "suspended"


def test_typed_dates_and_records_convert_and_a_datetime_is_not_a_date() -> None:
    sleep = envdsl.load(SLEEP)
    env = _fresh(sleep)
    env.set_status(user_id="U2", status="active")
    good = sleep.TOOLS["add_sleep_log"].params[3].spec.cls.good  # type: ignore[attr-defined]
    from datetime import datetime, timezone

    start = datetime(2024, 5, 21, 22, 45, tzinfo=timezone.utc)
    end = datetime(2024, 5, 22, 6, 10, tzinfo=timezone.utc)
    result = env.add_sleep_log(user_id="U2", start=start, end=end, quality=good)
    assert result["success"] and result["data"]["minutes"] == 445
    assert env.evaluate()["success"]


def test_py_typed_marker_and_install_dependencies() -> None:
    assert (ROOT / "envdsl" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert "hypothesis" in names  # `envdsl explore` needs it after a plain install
    extras = project["optional-dependencies"]
    # the README's `pip install -e '.[dev]'` must set up every adapter's tests
    (self_reference,) = [d for d in extras["dev"] if d.startswith("envdsl[")]
    pulled = set(self_reference[len("envdsl[") : -1].split(","))
    assert pulled == set(extras) - {"dev"}


def test_a_cache_file_that_does_not_hold_its_source_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module name is its content's hash: a file under that name holding something else
    (edited, or planted) must not be imported."""
    from envdsl.generated import module_cache as cache

    monkeypatch.setenv("ENVDSL_CACHE_DIR", str(tmp_path))
    source = "VALUE = 1\n"
    name = cache.module_name(source, "planted")
    target = tmp_path / (name.rsplit(".", 1)[1] + ".py")
    target.write_text("VALUE = 'planted'\n", encoding="utf-8")
    assert cache.store(name, source)
    assert target.read_text(encoding="utf-8") == source
