"""The τ-bench airline port (benchmarks/taubench_airline): the spec checks clean, the committed
gold calls are what the extraction script gets from the vendored tasks file, every test task
ends in the state τ-bench's own tools leave, and altered calls (wrong ids, short balances, a
certificate where none is taken, flights not found or not available, counts that do not match,
...) succeed or fail as on τ-bench, with the same message and the same rows after them."""

from __future__ import annotations

import copy
import gzip
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import envdsl
from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
PORT = BENCHMARKS / "taubench_airline"
sys.path.insert(0, str(BENCHMARKS))

import bench_airline  # noqa: E402
from taubench_replay import comparable  # noqa: E402

AIRLINE = bench_airline.AIRLINE
TASKS = AIRLINE.gold_tasks()
BOOKED_IDS = ("HATHAT", "HATHAU", "HATHAV")


def load_extractor() -> Any:
    """The port's extract_gold_calls.py under its own name (retail's has the same file name)."""
    spec = importlib.util.spec_from_file_location(
        "airline_extract_gold_calls", PORT / "extract_gold_calls.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_spec_checks_without_diagnostics() -> None:
    path = PORT / "airline.env"
    result = check_source(SourceFile(str(path), path.read_text(encoding="utf-8")))
    assert result.ok and result.diagnostics == []


def test_gold_calls_are_current() -> None:
    extractor = load_extractor()
    source = gzip.decompress(extractor.TASKS.read_bytes()).decode("utf-8")
    tasks, calls = extractor.gold_calls(source)
    committed = extractor.OUTPUT.read_text(encoding="utf-8").splitlines()
    assert (tasks, len(calls)) == (50, 158)
    assert [json.loads(line) for line in committed] == calls


@pytest.fixture(scope="module")
def text() -> str:
    return AIRLINE.data_text()


@pytest.fixture(scope="module")
def loaded(text: str) -> tuple[Any, Any]:
    """The port with τ-bench's data loaded once, and a snapshot to start each task from."""
    env = envdsl.load(str(AIRLINE.spec))()
    env.reset(state=text)
    return env, env.snapshot()


def test_every_task_ends_in_taubenchs_state(loaded: tuple[Any, Any], text: str) -> None:
    env, fresh = loaded
    for index, calls in TASKS:
        env.restore(fresh)
        data = json.loads(text)
        for name, kwargs in calls:
            tau = AIRLINE.tau_as_result(
                name, kwargs, AIRLINE.tau_step(data, name, copy.deepcopy(kwargs))
            )
            assert env.call(name, kwargs)["success"] == tau["success"], (index, name)
        # as JSON text, not only as values: a float keeps τ-bench's `100` as `100`
        ours = json.dumps(comparable(env.state_json()), sort_keys=True)
        theirs = json.dumps(comparable(AIRLINE.tau_state(data)), sort_keys=True)
        assert ours == theirs, f"task {index}"


# --- altered calls -----------------------------------------------------------------------


def methods_of(data: dict[str, Any], user_id: str) -> list[str]:
    """The user's payment method ids, one of each kind first (the data holds them by id)."""
    user = data["users"].get(user_id)
    return sorted(user["payment_methods"]) if user else []


def user_of(data: dict[str, Any], kwargs: dict[str, Any]) -> str:
    reservation = data["reservations"].get(kwargs.get("reservation_id", ""))
    return str(reservation["user_id"]) if reservation else str(kwargs.get("user_id", ""))


def not_available_date(data: dict[str, Any], flight_number: str) -> str | None:
    dates = data["flights"].get(flight_number, {}).get("dates", {})
    return next((d for d, v in dates.items() if v["status"] != "available"), None)


def altered(data: dict[str, Any], name: str, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Calls near a gold call, on the state the gold call meets."""

    def but(**changes: Any) -> dict[str, Any]:
        return {**copy.deepcopy(kwargs), **changes}

    user_id = user_of(data, kwargs)
    for key in ("reservation_id", "user_id"):
        if key in kwargs:
            yield but(**{key: "ZZZ999"})
            yield but(**{key: kwargs[key].lower() + " "})
    if name in ("update_reservation_flights", "update_reservation_baggages"):
        yield but(payment_id="gift_card_0000000")
        for method in methods_of(data, user_id):  # every kind: certificate, gift card, card
            yield but(payment_id=method)
    if name == "update_reservation_baggages":
        for extra in (1, 3, 40, 400):
            yield but(nonfree_baggages=kwargs["nonfree_baggages"] + extra)
        yield but(nonfree_baggages=0, total_baggages=0)
    if name in ("update_reservation_flights", "book_reservation"):
        for cabin in ("basic_economy", "economy", "business"):
            yield but(cabin=cabin)
        flights = kwargs["flights"]
        yield but(flights=[])
        yield but(flights=flights[:1])
        yield but(flights=flights + flights[:1])
        for position, flight in enumerate(flights):
            landed = not_available_date(data, flight["flight_number"])
            for change in ({"flight_number": "HAT999"}, {"date": "2024-06-01"}, {"date": landed}):
                if None not in change.values():  # a new list each: the calls are made later
                    changed = [dict(f) for f in flights]
                    changed[position] = {**flight, **change}
                    yield but(flights=changed)
    if name == "book_reservation":
        payments = kwargs["payment_methods"]
        yield but(payment_methods=[{**p, "amount": p["amount"] + 1} for p in payments])
        yield but(payment_methods=[{**p, "amount": p["amount"] * 100} for p in payments])
        yield but(payment_methods=payments[:1] + payments[:1] + payments[1:])
        for method in methods_of(data, user_id):
            total = sum(p["amount"] for p in payments)
            yield but(payment_methods=[{"payment_id": method, "amount": total}])
            yield but(payment_methods=[{"payment_id": method, "amount": total + 0.5}])
        yield but(insurance="no" if kwargs["insurance"] == "yes" else "yes")
        yield but(nonfree_baggages=kwargs["nonfree_baggages"] + 1)
        yield but(passengers=kwargs["passengers"] * 40)  # more than the seats left
        yield but(user_id="sophia_silva_7557")  # another user: not her payment methods
    if name == "update_reservation_passengers":
        passengers = kwargs["passengers"]
        yield but(passengers=passengers[:-1])
        yield but(passengers=passengers + passengers[:1])
        yield but(passengers=list(reversed(passengers)))
    if name == "send_certificate":
        yield but(amount=0.5)
        yield but(amount=kwargs["amount"] * 3)
    if name == "search_direct_flight":
        for date in ("2024-05-01", "2024-05-16", "2024-05-30", "2024-06-01", "x"):
            yield but(date=date)
        yield but(origin=kwargs["destination"], destination=kwargs["origin"])
    if name in ("cancel_reservation", "send_certificate"):
        yield but()  # made again and again (REPEATED)


def one_stop_searches() -> list[dict[str, Any]]:
    """search_onestop_flight has no gold call: the direct searches' routes, and more dates."""
    routes = {
        (k["origin"], k["destination"])
        for _, calls in TASKS
        for name, k in calls
        if name == "search_direct_flight"
    }
    dates = ["2024-05-05", "2024-05-09", "2024-05-16", "2024-05-29", "2024-05-30", "x", "5"]
    return [
        {"origin": o, "destination": d, "date": date} for o, d in sorted(routes) for date in dates
    ]


def tau_copy(data: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """τ-bench's data for one altered call: shared, but for the rows the call may write (its
    reservation and user, and the reservations table a booking adds to)."""
    reservations, users = dict(data["reservations"]), dict(data["users"])
    for key in (kwargs.get("reservation_id"), *BOOKED_IDS):
        if isinstance(key, str) and key in reservations:
            reservations[key] = copy.deepcopy(reservations[key])
            users[reservations[key]["user_id"]] = copy.deepcopy(users[reservations[key]["user_id"]])
    user_id = kwargs.get("user_id")
    if isinstance(user_id, str) and user_id in users:
        users[user_id] = copy.deepcopy(users[user_id])
    return {"flights": data["flights"], "reservations": reservations, "users": users}


def touched_rows(data: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The rows a call may write on τ-bench's side, in the port's state shape."""
    ids = [kwargs.get("reservation_id"), *BOOKED_IDS]
    reservations = {r: data["reservations"][r] for r in ids if r in data["reservations"]}
    user_ids = {kwargs.get("user_id")} | {r["user_id"] for r in reservations.values()}
    users = {u: {**data["users"][u], "user_id": u} for u in user_ids if u in data["users"]}
    rows: dict[str, Any] = comparable({"reservations": reservations, "users": users})
    return rows


def touched_rows_of(env: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The same rows on the port's side, read with its queries (its whole state_json() is a
    5 MB value: too slow to build after each of two thousand calls)."""
    reservations: dict[str, Any] = {}
    for r in (kwargs.get("reservation_id"), *BOOKED_IDS):
        found = env.call("get_reservation_details", {"reservation_id": r}) if r else None
        if isinstance(r, str) and found is not None and found["success"]:
            reservations[r] = found["data"]
    users: dict[str, Any] = {}
    for u in {kwargs.get("user_id")} | {r["user_id"] for r in reservations.values()}:
        found = env.call("get_user_details", {"user_id": u}) if isinstance(u, str) else None
        if isinstance(u, str) and found is not None and found["success"]:
            users[u] = found["data"]
    rows: dict[str, Any] = comparable({"reservations": reservations, "users": users})
    return rows


def agree(
    env: Any, data: dict[str, Any], name: str, kwargs: dict[str, Any], seen: set[str] | None = None
) -> str | None:
    """Run one call on both sides (on τ-bench's `data`, in place): None when they agree. τ-bench's
    failure messages go to `seen`, their ids and numbers as `#`."""
    before = env.state_hash()
    tau = AIRLINE.tau_as_result(name, kwargs, AIRLINE.tau_step(data, name, copy.deepcopy(kwargs)))
    ours = env.call(name, kwargs)
    if seen is not None and not tau["success"]:
        seen.add(f"{name}: " + re.sub(r"HAT\d+|[\d-]+|\w+_\d{7}|\d+", "#", tau["error"]))
    if tau["success"] != ours["success"]:
        return f"success: τ-bench {tau}, envdsl {ours}"
    if not tau["success"]:
        # calculate's messages, and int()'s of a malformed date in search_onestop_flight, are
        # Python's exception texts on τ-bench's side (airline.env's header)
        python_text = name == "calculate" or tau["error"].startswith("invalid literal for int()")
        if not python_text and tau["error"] != ours["error"]:
            return f"message: τ-bench {tau['error']!r}, envdsl {ours['error']!r}"
        if env.state_hash() != before:
            return "a failed call changed the state"
    elif comparable(tau["data"]) != comparable(ours["data"]):
        return "value differs"
    if touched_rows_of(env, kwargs) != touched_rows(data, kwargs):
        return "rows differ"
    return None


# calls that go on differently when made again: a second cancellation refunds again, a fourth
# booking writes over HATHAV, a fourth certificate finds no free id (τ-bench returns None)
REPEATED = {"cancel_reservation": 2, "book_reservation": 4, "send_certificate": 4}


def replay_altered(
    env: Any, fresh: Any, text: str, seen: set[str]
) -> tuple[int, list[str], set[str]]:
    """Each task's gold calls in turn; before each, its altered calls (each made up to
    REPEATED times) on the state it meets, on both sides. The count of calls made, the
    disagreements, the tools called; τ-bench's failure messages go to `seen`."""
    tried = 0
    problems: list[str] = []
    kinds: set[str] = set()
    one_stop = one_stop_searches()
    for index, calls in TASKS:
        env.restore(fresh)
        data = json.loads(text)
        for position, (name, kwargs) in enumerate(calls):
            here = env.snapshot()
            variants = [(name, args) for args in altered(data, name, kwargs)]
            if name == "search_direct_flight" and one_stop:  # once, on the first task's state
                variants += [("search_onestop_flight", args) for args in one_stop]
                one_stop = []
            for called, args in variants:
                env.restore(here)
                tau_data = tau_copy(data, args)
                for _ in range(REPEATED.get(called, 1)):
                    problem = agree(env, tau_data, called, args, seen)
                    tried += 1
                    if problem is not None:
                        where = f"task {index} call {position + 1}"
                        problems.append(f"{where} {called}({args}): {problem}")
                        break
                kinds.add(called)
            env.restore(here)
            assert agree(env, data, name, kwargs) is None  # the gold call itself, then on
    return tried, problems, kinds


def test_altered_calls_agree_with_taubench(loaded: tuple[Any, Any], text: str) -> None:
    env, fresh = loaded
    seen: set[str] = set()
    tried, problems, kinds = replay_altered(env, fresh, text, seen)
    assert problems == []
    assert tried >= 2000
    assert {"book_reservation", "search_onestop_flight", "update_reservation_flights"} <= kinds
    assert seen >= EVERY_FAILURE, sorted(EVERY_FAILURE - seen)


# each `return "Error: ..."` of τ-bench's airline tools, reached by the altered calls
EVERY_FAILURE = {
    "book_reservation: user not found",
    "book_reservation: flight # not found",
    "book_reservation: flight # not found on date #",
    "book_reservation: flight # not available on date #",
    "book_reservation: not enough seats on flight #",
    "book_reservation: payment method # not found",
    "book_reservation: not enough balance in payment method #",
    "book_reservation: payment amount does not add up, total price is #, but paid #",
    "cancel_reservation: reservation not found",
    "get_reservation_details: user not found",
    "get_user_details: user not found",
    "send_certificate: user not found",
    "update_reservation_baggages: reservation not found",
    "update_reservation_baggages: payment method not found",
    "update_reservation_baggages: certificate cannot be used to update reservation",
    "update_reservation_baggages: gift card balance is not enough",
    "update_reservation_flights: reservation not found",
    "update_reservation_flights: flight # not found",
    "update_reservation_flights: flight # not found on date #",
    "update_reservation_flights: flight # not available on date #",
    "update_reservation_flights: not enough seats on flight #",
    "update_reservation_flights: payment method not found",
    "update_reservation_flights: certificate cannot be used to update reservation",
    "update_reservation_flights: gift card balance is not enough",
    "update_reservation_passengers: reservation not found",
    "update_reservation_passengers: number of passengers does not match",
}


def test_a_failed_booking_changes_nothing_where_taubench_loses_a_certificate(
    loaded: tuple[Any, Any], text: str
) -> None:
    """One certificate named twice, the total right: τ-bench's second removal raises after the
    first one, so its failed call has taken the certificate; the port's call fails whole."""
    env, fresh = loaded
    env.restore(fresh)
    before = env.state_hash()
    data = json.loads(text)
    (first_task,) = [calls for index, calls in TASKS if index == 0]
    name, kwargs = first_task[0]
    half = {"payment_id": "certificate_7504069", "amount": 127.5}  # 255 in all, 250 each held
    kwargs = {**kwargs, "payment_methods": [half, half]}
    assert AIRLINE.tau_step(data, name, copy.deepcopy(kwargs)) == "Error: 'certificate_7504069'"
    assert "certificate_7504069" not in data["users"]["mia_li_3668"]["payment_methods"]
    ours = env.call(name, kwargs)
    assert ours == {"success": False, "error": "key 'certificate_7504069' not found"}
    assert env.state_hash() == before
