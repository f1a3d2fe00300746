"""Refs held in scalar state fields (`current: ref Req?`, `queue: list[ref Req]`, a record or a
map holding them) point at existing rows, as rows' refs do: a state that breaks it does not
load, and an action that would leave one dangling (by writing it, or by deleting its row)
fails with the state untouched, on the generated call and on the reference path alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import envdsl
from envdsl.runtime import Environment
from envdsl.runtime.environment import InvalidState

SPEC = '''env Queue {
  """Requests, a queue of them and the one being worked on."""
  entity Req {
    key id: str
  }
  record Pick { req: ref Req, note: str }
  state {
    reqs: table Req
    queue: list[ref Req] = []
    current: ref Req?
    picks: map[str, Pick] = {}
  }
  query size() -> int {
    """How many requests are queued."""
    return len(queue)
  }
  action drop(id: str) -> bool {
    """Delete a request."""
    let r = reqs.get(id) else "no such request"
    reqs.delete(r)
    return true
  }
  action enqueue(id: ref Req) -> bool {
    """Queue a request and work on it."""
    current = id
    queue.append(id)
    return true
  }
  action pick(name: str, id: ref Req) -> bool {
    """Remember a request under a name."""
    picks[name] = Pick(req=id, note="picked")
    return true
  }
}
'''


@pytest.fixture(scope="module", params=["generated", "reference"])
def queue(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("scalar_refs") / "queue.env"
    path.write_text(SPEC, encoding="utf-8")
    loaded: type[Environment] = envdsl.load(path)
    if request.param == "reference":
        loaded = type("ReferenceQueue", (loaded,), {"_CALL_FUNCTIONS": False})
    return loaded


def state(**scalars: Any) -> dict[str, Any]:
    return {"reqs": [{"id": "r1"}, {"id": "r2"}], **scalars}


@pytest.mark.parametrize(
    "scalars, message",
    [
        ({"queue": ["r1", "r9"]}, "queue[1]: Req 'r9' does not exist"),
        ({"current": "r9"}, "current: Req 'r9' does not exist"),
        ({"picks": {"a": {"req": "r9", "note": "x"}}}, "picks.a.req: Req 'r9' does not exist"),
    ],
)
def test_a_state_with_a_dangling_scalar_ref_does_not_load(
    queue: type[Environment], scalars: dict[str, Any], message: str
) -> None:
    env = queue()
    with pytest.raises(InvalidState, match=message.replace("[", r"\[").replace("]", r"\]")):
        env.reset(state=state(**scalars))
    env.reset(state=state(queue=["r1"], current="r2", picks={"a": {"req": "r1", "note": "x"}}))
    assert env.state_json()["current"] == "r2"


def test_an_action_cannot_leave_a_scalar_ref_dangling(queue: type[Environment]) -> None:
    env = queue()
    env.reset(state=state(queue=["r1"], current="r1"))
    before, hashed = env.state_json(), env.state_hash()
    for name, arguments, message in [
        ("drop", {"id": "r1"}, "queue[0]: Req 'r1' does not exist"),  # its row deleted
        ("enqueue", {"id": "r9"}, "Req 'r9' does not exist"),  # a ref to no row written
        ("pick", {"name": "b", "id": "r9"}, "picks.b.req: Req 'r9' does not exist"),
    ]:
        result = env.call(name, arguments)
        assert not result["success"] and message in result["error"], result
        assert env.state_json() == before and env.state_hash() == hashed
    assert env.call("drop", {"id": "r2"})["success"]  # nothing refers to r2
    assert env.call("enqueue", {"id": "r1"})["success"]
    assert env.state_json()["queue"] == ["r1", "r1"]


def test_only_specs_with_ref_scalars_pay_for_the_check(tmp_path: Path) -> None:
    from envdsl.pipeline import compile_source
    from envdsl.util.source import SourceFile

    with_refs = compile_source(SourceFile("queue.env", SPEC)).artifacts["module"]
    assert with_refs.count("self._verify_scalar_refs()") == 3  # one per action
    plain = SPEC.replace("queue: list[ref Req] = []", "queue: list[str] = []")
    plain = plain.replace("current: ref Req?", "current: str?").replace("req: ref Req", "req: str")
    plain = plain.replace("id: ref Req", "id: str")
    assert (
        "_verify_scalar_refs" not in compile_source(SourceFile("q.env", plain)).artifacts["module"]
    )
