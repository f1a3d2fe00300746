"""The examples end to end: compile, import, solve every task, scripted agent sessions, schemas.

Each example is compiled once per test session (in memory, the way `envdsl.load` does it). A
scripted session per example mixes successful and failing calls; every failing call must
leave `state_hash()` unchanged.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import example_specs
import jsonschema
import pytest

import envdsl
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import CompileResult, check_file, compile_file
from envdsl.runtime import Environment
from envdsl.syntax import ast
from envdsl.tasks.task_validity import tasks_of as declared_tasks

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
NAMES = [path.stem for path in EXAMPLES]


@functools.lru_cache(maxsize=None)
def compiled(name: str) -> CompileResult:
    """The example compiled once per session; test_codegen and test_compiled_current import
    this cache (compiling every example takes seconds)."""
    spec = REPO / "examples" / f"{name}.env"
    return compile_file(spec, task_files=example_specs.TASK_FILES[name])


@functools.lru_cache(maxsize=None)
def example(name: str) -> type[Environment]:
    result = compiled(name)
    assert result.ok, [str(d.message) for d in result.diagnostics]
    return environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))


@functools.lru_cache(maxsize=None)
def tasks_of(name: str) -> list[str]:
    """The example's tasks (its own, then its task files'), read without compiling: every
    worker collects this module, and compiling the examples there took 20 s of each worker's
    start. test_example_compiles_without_errors_and_imports checks they are the module's
    TASKS."""
    spec = REPO / "examples" / f"{name}.env"
    checked = check_file(spec, verify=False, task_files=example_specs.TASK_FILES[name])
    return [] if checked.spec is None else [t.name.text for t in declared_tasks(checked.spec)]


ALL_TASKS = [(name, task) for name in NAMES for task in tasks_of(name)]


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 4
    assert len(ALL_TASKS) >= len(EXAMPLES)


@pytest.mark.parametrize("name", NAMES)
def test_example_compiles_without_errors_and_imports(name: str) -> None:
    result = compiled(name)
    assert result.ok
    assert not [d for d in result.diagnostics if d.is_error]
    assert result.artifacts["name"].isidentifier()
    env_class = example(name)
    assert issubclass(env_class, Environment)
    assert env_class.TOOLS and env_class.TASKS
    assert list(env_class.TASKS) == tasks_of(name)  # the tasks the tests below are given
    env_class()  # constructible without arguments


def test_envdsl_load_returns_the_environment_class() -> None:
    env_class = envdsl.load(REPO / "examples" / "sleep_tracking.env")
    assert issubclass(env_class, Environment)
    assert env_class.NAME == "SleepTracking"
    assert set(env_class.TOOLS) == set(example("sleep_tracking").TOOLS)


@pytest.mark.parametrize("name, task", ALL_TASKS)
def test_solution_solves_the_task(name: str, task: str) -> None:
    env = example(name)()
    results = env.solve(task)
    refusal = bool(env.TASKS[task].counterexamples)  # its reference is doing nothing
    assert results or refusal, "every example task but a refusal has a solution"
    assert all(r["success"] for r in results), results
    evaluation = env.evaluate(answer=env.TASKS[task].answer or "")
    assert evaluation["task"] == task
    assert evaluation["success"] is True, evaluation
    assert evaluation["reward"] == 1.0
    assert all(c["passed"] for c in evaluation["checks"])
    assert len(evaluation["checks"]) == len(example(name).TASKS[task].checks)
    assert env.last_exception is None


@pytest.mark.parametrize("name, task", ALL_TASKS)
def test_doing_nothing_does_not_solve_the_task(name: str, task: str) -> None:
    env = example(name)()
    env.reset(task=task)
    evaluation = env.evaluate()
    assert all(isinstance(c["passed"], bool) for c in evaluation["checks"])
    if env.TASKS[task].counterexamples:  # a refusal: doing nothing is right, each harm is not
        assert evaluation["success"] is True and evaluation["reward"] == 1.0
        for index in range(len(env.TASKS[task].counterexamples)):
            harmful = example(name)()
            harmful.run_counterexample(task, index)
            assert harmful.evaluate()["reward"] == 0.0
        return
    assert evaluation["success"] is False
    assert evaluation["reward"] == 0.0  # guards give no credit


@pytest.mark.parametrize("name, task", ALL_TASKS)
def test_solution_replayed_as_json_calls_gives_the_same_state(name: str, task: str) -> None:
    """The typed solution and the same calls sent as JSON text (as an agent would) agree."""
    solved = example(name)()
    solved.solve(task)
    replayed = example(name)()
    replayed.reset(task=task)
    for entry in solved.trace:
        outcome = replayed.call(entry.name, json.dumps(entry.arguments))
        assert outcome["success"], (entry.name, outcome)
    assert replayed.state_hash() == solved.state_hash()
    assert replayed.evaluate(answer=solved.TASKS[task].answer or "")["success"] is True


@pytest.mark.parametrize("name, task", ALL_TASKS)
def test_task_state_round_trips_through_json(name: str, task: str) -> None:
    env = example(name)()
    env.solve(task)
    copy = example(name)()
    copy.reset(state=json.loads(json.dumps(env.state_json())))
    assert copy.state_hash() == env.state_hash()


# ---- scripted agent sessions -------------------------------------------------------------------

OK = True


@dataclass(frozen=True)
class Step:
    tool: str
    arguments: dict[str, Any]
    expect: bool | str  # OK, or a part of the expected error message
    data: dict[str, Any] | None = None  # fields the result's data must have


SESSIONS: dict[str, tuple[str, list[Step]]] = {
    "sleep_tracking": (
        "reactivate_and_log",
        [
            Step("get_user", {"user_id": "U9"}, "user not found"),
            Step(
                "add_sleep_log",
                {
                    "user_id": "U2",
                    "start": "2024-05-21T22:45:00Z",
                    "end": "2024-05-22T06:10:00Z",
                    "quality": "good",
                },
                "account is not active",
            ),
            Step("set_status", {"user_id": "U2", "status": "sleeping"}, "invalid argument status"),
            Step("set_status", {"user_id": "U2", "status": "active"}, OK, {"status": "active"}),
            Step(
                "add_sleep_log",
                {
                    "user_id": "U2",
                    "start": "2024-05-21T22:45:00Z",
                    "end": "2024-05-22T06:10:00Z",
                    "quality": "good",
                },
                OK,
                {"log_id": "LOG-0001", "minutes": 445, "user": "U2"},
            ),
            Step(
                "add_sleep_log",
                {
                    "user_id": "U2",
                    "start": "2024-05-22T06:00:00Z",
                    "end": "2024-05-21T23:00:00Z",
                    "quality": "fair",
                },
                "end must be after start",
            ),
            Step(
                "add_sleep_log",
                {
                    "user_id": "U1",
                    "start": "2024-05-22T23:00:00Z",
                    "end": "2024-05-23T07:00:00Z",
                    "quality": "fair",
                },
                "a night cannot end in the future",
            ),
            Step("delete_sleep_log", {"log_id": "LOG-0001", "user_id": "U1"}, "not your log"),
            Step("delete_sleep_log", {"log_id": "LOG-0001"}, "missing required argument"),
            Step("delete_sleep_log", {"log_id": "LOG-0001", "user_id": "U2"}, OK),
            Step("delete_sleep_log", {"log_id": "LOG-0001", "user_id": "U2"}, "log not found"),
            Step(
                "add_sleep_log",
                {
                    "user_id": "U2",
                    "start": "2024-05-21T22:00:00Z",
                    "end": "2024-05-22T06:00:00Z",
                    "quality": "poor",
                },
                OK,
                {"log_id": "LOG-0002", "minutes": 480},
            ),
        ],
    ),
    "online_shop": (
        "buy_with_coupon",
        [
            Step("add_to_cart", {"customer_id": "C1", "sku": "SKU-BAG"}, "no longer sold"),
            Step(
                "add_to_cart",
                {"customer_id": "C1", "sku": "SKU-MUG", "qty": 11},
                "at most 10 units",
            ),
            Step(
                "add_to_cart",
                {"customer_id": "C1", "sku": "SKU-MUG", "qty": 2},
                OK,
                {"subtotal_cents": 2500, "shipping_cents": 499, "total": "$29.99"},
            ),
            Step(
                "place_order",
                {"customer_id": "C1", "payment": "card", "coupon_code": "nope"},
                "coupon NOPE does not exist",
            ),
            Step(
                "place_order",
                {"customer_id": "C1", "payment": "card", "coupon_code": "spring10"},
                "needs a subtotal of at least $30.00",
            ),
            Step("add_to_cart", {"customer_id": "C1", "sku": "SKU-TEE"}, OK),
            Step(
                "place_order",
                {"customer_id": "C1", "payment": "bitcoin"},
                "invalid argument payment",
            ),
            Step(
                "place_order",
                {"customer_id": "C1", "payment": "card", "coupon_code": "spring10"},
                OK,
                {"order_id": "ORD-0001", "total_cents": 4909, "status": "pending payment"},
            ),
            Step(
                "cancel_order",
                {"order_id": "ORD-0001", "customer_id": "C2"},
                "this order belongs to another customer",
            ),
            Step(
                "ship_order",
                {"order_id": "ORD-0001", "tracking": "1Z"},
                "only paid orders can ship",
            ),
            Step("pay_order", {"order_id": "ORD-0001"}, OK, {"status": "paid"}),
            Step("pay_order", {"order_id": "ORD-0001"}, "not awaiting payment"),
            Step(
                "ship_order",
                {"order_id": "ORD-0001", "tracking": "   "},
                "a tracking number is required",
            ),
            Step("restock_product", {"sku": "SKU-MUG", "qty": "5"}, "invalid argument qty"),
            Step("set_price", {"sku": "SKU-MUG", "price_cents": 0}, "price must be positive"),
            Step("view_cart", {"customer_id": "C1"}, OK, {"total_cents": 0}),
        ],
    ),
    "library_lending": (
        "borrow_and_queue",
        [
            Step(
                "check_out",
                {"copy_id": "9780441013593-1", "member_id": "M404"},
                "member M404 not found",
            ),
            Step(
                "place_hold",
                {"isbn": "9780441013593", "member_id": "M002"},
                "a copy is on the shelf",
            ),
            Step(
                "check_out",
                {"copy_id": "9780441013593-1", "member_id": "M001"},
                OK,
                {"loan_id": "L-0001", "due": "2024-03-26", "state": "active"},
            ),
            Step(
                "check_out",
                {"copy_id": "9780441013593-1", "member_id": "M002"},
                "copy is already on loan",
            ),
            Step(
                "place_hold",
                {"isbn": "9780441013593", "member_id": "M002"},
                OK,
                {"hold_id": "H-0001", "state": "waiting"},
            ),
            Step(
                "place_hold",
                {"isbn": "9780441013593", "member_id": "M002"},
                "you already have a hold on this book",
            ),
            Step(
                "renew_loan",
                {"loan_id": "L-0001", "member_id": "M001"},
                "another member is waiting for this book",
            ),
            Step("withdraw_book", {"isbn": "9780441013593"}, "still on loan"),
            Step(
                "register_member",
                {"member_id": "M003", "name": "Cy", "email": "no-at-sign"},
                "email address is not valid",
            ),
            # the unique email clash: register_member's require answers before the unique rule
            Step(
                "register_member",
                {"member_id": "M003", "name": "Cy", "email": "ana@example.org"},
                "the email ana@example.org is already registered to another member",
            ),
            Step("advance_clock", {"to": "2024-03-01T00:00:00Z"}, "time cannot go backwards"),
            Step(
                "register_member",
                {"member_id": "M003", "name": " Cy ", "email": "CY@example.org"},
                OK,
                {"member_id": "M003", "name": "Cy", "email": "cy@example.org"},
            ),
            Step("cancel_hold", {"hold_id": "H-0001", "member_id": "M001"}, "another member"),
            Step("cancel_hold", {"hold_id": "H-0001", "member_id": "M002"}, OK),
        ],
    ),
    "ecommerce_product_review_system": (
        "review_treadmill",
        [
            Step(
                "submit_review",
                {"user_id": "U1", "product_id": "P002", "rating": 3, "comment": "ok"},
                "User has not purchased this product",
            ),
            Step(
                "submit_review",
                {"user_id": "U2", "product_id": "P001", "rating": 6, "comment": "wow"},
                "Rating must be an integer between 1 and 5",
            ),
            Step(
                "submit_review",
                {"user_id": "U2", "product_id": "P001", "rating": 4.5, "comment": "x"},
                "invalid argument rating",
            ),
            Step(
                "submit_review",
                {"user_id": "U2", "product_id": "P001", "rating": 4, "comment": "Sturdy."},
                OK,
                {"review_id": "REV-0002", "rating": 4, "timestamp": "2024-06-03T18:30:00Z"},
            ),
            Step(
                "edit_review",
                {"review_id": "REV-0001", "user_id": "U2", "new_rating": 1},
                "User not authorized",
            ),
            Step(
                "delete_review",
                {"review_id": "REV-0002", "requester_user_id": "U1"},
                "Permission denied",
            ),
            Step("increment_helpful_vote", {"review_id": "REV-0001"}, OK, {"helpful_votes": 3}),
            Step(
                "add_product",
                {
                    "product_id": "P001",
                    "name": "Dup",
                    "brand": "B",
                    "category": "c",
                    "description": "",
                },
                "Product with this product_id already exists",
            ),
            # a blank name written through a map (the product's row invariant backs this up)
            Step(
                "update_product_info",
                {"product_id": "P001", "updates": {"name": "  "}},
                "The product name cannot be empty",
            ),
            Step("get_average_rating_for_product", {}, "Either product_id or product_name"),
            Step(
                "get_average_rating_for_product",
                {"product_id": "P001"},
                OK,
                {"average_rating": 4.5},
            ),
            Step("delete_review", {"review_id": "REV-0002", "requester_user_id": "U2"}, OK),
            Step("get_review_by_id", {"review_id": "REV-0002"}, "Review not found"),
        ],
    ),
}


# Examples added later get a session derived from their first task: a few domain failures
# written here, the agent mistakes every environment must reject (a misspelled tool, a missing,
# an extra and a mistyped argument on the solution's first action), then the solution itself.
DOMAIN_FAILURES: dict[str, list[Step]] = {
    "clinic_scheduling": [
        Step("advance_clock", {"to": "2020-01-01T00:00:00Z"}, "the clock cannot go back"),
        Step("cancel_appointment", {"appointment_id": "NOPE", "reason": "x"}, "no appointment"),
        Step("get_appointment", {"appointment_id": "APT-9999"}, "no appointment APT-9999"),
    ],
    "document_management_system": [
        Step(
            "update_document",
            {"document_id": "NOPE", "user_id": "u1", "content": "x"},
            "Document does not exist",
        ),
        Step("archive_document", {"document_id": "NOPE"}, "Document not found"),
    ],
    "hris": [
        Step(
            "update_employee_salary",
            {"employee_id": "E002", "new_salary": -5.0},
            "Salary cannot be negative.",
        ),
        Step("remove_employee_record", {"employee_id": "NOPE"}, "Employee not found."),
        Step("get_employee_by_id", {"employee_id": "NOPE"}, "Employee not found"),
    ],
    "ocr_processing_service": [
        Step("start_processing_request", {"request_id": "NOPE"}, "Request not found"),
        Step("get_ocr_request_status", {"request_id": "NOPE"}, "Request not found"),
    ],
    "personal_notes": [
        Step("pin_note", {"note_id": "NOPE"}, "Note not found"),
        Step("get_note_by_id", {"note_id": "NOPE"}, "Note not found"),
    ],
    "retail_product_database": [
        Step(
            "update_inventory_level",
            {"upc": "840000000017", "new_level": -1},
            "Inventory level must be non-negative",
        ),
        Step(
            "update_product_price",
            {"upc": "840000000017", "new_price": -3.0},
            "Product price must be non-negative",
        ),
    ],
}


def derived_session(name: str) -> tuple[str, list[Step]]:
    env_class = example(name)
    task = next(iter(env_class.TASKS))
    scratch = env_class()
    scratch.solve(task)
    solution = [(entry.name, dict(entry.arguments)) for entry in scratch.trace]
    steps = list(DOMAIN_FAILURES.get(name, []))
    action = next(
        (tool, args)
        for tool, args in solution
        if env_class.TOOLS[tool].kind == "action"
        and any(p.required for p in env_class.TOOLS[tool].params)
    )
    tool, args = action
    params = env_class.TOOLS[tool].params
    required = next(p.name for p in params if p.required)
    steps.append(Step(tool[:-1], args, "unknown tool"))
    steps.append(
        Step(tool, {k: v for k, v in args.items() if k != required}, "missing required argument")
    )
    steps.append(Step(tool, {**args, "unexpected_argument": 1}, "unexpected argument"))
    text_param = next((p.name for p in params if p.spec.name == "a string"), None)
    if text_param is not None:
        steps.append(Step(tool, {**args, text_param: 12345}, f"invalid argument {text_param}"))
    steps.extend(Step(tool, args, OK) for tool, args in solution)
    return task, steps


def session(name: str) -> tuple[str, list[Step]]:
    """The example's written session, or one derived from its first task's solution (when a
    test asks: deriving compiles the example, which collection must not wait for)."""
    if name not in SESSIONS:
        SESSIONS[name] = derived_session(name)
    return SESSIONS[name]


def test_every_example_has_a_session() -> None:
    sessions = {name: session(name) for name in NAMES}
    assert set(SESSIONS) == set(NAMES)
    assert set(DOMAIN_FAILURES) <= set(NAMES)
    for _, steps in sessions.values():
        assert len(steps) >= 5
        assert any(s.expect is OK for s in steps) and any(s.expect is not OK for s in steps)


@pytest.mark.parametrize("name", NAMES)
def test_scripted_session(name: str) -> None:
    task, steps = session(name)
    env = example(name)()
    env.reset(task=task)
    for number, step in enumerate(steps, start=1):
        where = f"step {number}: {step.tool}({step.arguments})"
        before_hash = env.state_hash()
        before_json = json.dumps(env.state_json())
        result = env.call(step.tool, step.arguments)
        assert env.last_exception is None, (where, env.last_exception)
        assert json.loads(json.dumps(result)) == result, where
        if step.expect is OK:
            assert result["success"] is True, (where, result)
            for key, value in (step.data or {}).items():
                assert result["data"][key] == value, (where, key, result["data"])
            if env.TOOLS[step.tool].kind == "query":
                assert env.state_hash() == before_hash, f"{where}: a query changed the state"
        else:
            assert result["success"] is False, (where, result)
            assert isinstance(step.expect, str)
            assert step.expect in result["error"], (where, result["error"])
            assert env.state_hash() == before_hash, f"{where}: a failed call changed the state"
            assert json.dumps(env.state_json()) == before_json, where
        assert env.trace[-1].success is result["success"]
    assert len(env.trace) == len(steps)


# ---- tool schemas --------------------------------------------------------------------------------


def spec_tools(name: str) -> list[ast.ToolDecl]:
    spec = compiled(name).spec
    assert spec is not None and spec.env is not None
    return [m for m in spec.env.members if isinstance(m, ast.ToolDecl) and not m.internal]


def enum_values(name: str) -> dict[str, list[str]]:
    """JSON values of the example's own enums, by enum name."""
    spec = compiled(name).spec
    assert spec is not None and spec.env is not None
    return {
        m.name.text: [
            member.json_value.value if member.json_value else member.name.text
            for member in m.members
        ]
        for m in spec.env.members
        if isinstance(m, ast.EnumDecl)
    }


def is_nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(is_nullable(option) for option in schema.get("anyOf", []))


def enum_of(schema: dict[str, Any]) -> list[Any] | None:
    if "enum" in schema:
        return list(schema["enum"])
    for option in schema.get("anyOf", []):
        found = enum_of(option)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("name", NAMES)
def test_tool_schemas(name: str) -> None:
    schemas = example(name)().tool_schemas()
    tools = spec_tools(name)
    enums = enum_values(name)
    assert [s["function"]["name"] for s in schemas] == [t.name.text for t in tools]
    assert json.loads(json.dumps(schemas)) == schemas
    for schema, tool in zip(schemas, tools):
        assert schema["type"] == "function"
        function = schema["function"]
        assert tool.doc is not None
        assert function["description"] == tool.doc.value
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert list(parameters["properties"]) == [p.name.text for p in tool.params]
        assert parameters["required"] == [p.name.text for p in tool.params if p.default is None]
        for param in tool.params:
            prop = parameters["properties"][param.name.text]
            where = f"{tool.name.text}.{param.name.text}"
            if param.doc is not None:
                assert prop.get("description") == param.doc.value, where
            if isinstance(param.type, ast.OptionalType):
                assert is_nullable(prop), where
                inner = param.type.inner
            else:
                assert not is_nullable(prop), where
                inner = param.type
            if isinstance(inner, ast.NamedType) and inner.name.text in enums:
                assert enum_of(prop) == enums[inner.name.text], where
            if param.default is not None:
                assert "default" in prop, where


@pytest.mark.parametrize("name", NAMES)
def test_schema_examples_validate_against_the_tools(name: str) -> None:
    """The arguments the solutions send are valid instances of the advertised schemas."""
    env_class = example(name)
    schemas = {
        s["function"]["name"]: s["function"]["parameters"] for s in env_class().tool_schemas()
    }
    for task in env_class.TASKS:
        env = env_class()
        env.solve(task)
        for entry in env.trace:
            if entry.name in schemas:
                given = {k: v for k, v in entry.arguments.items() if v is not None}
                jsonschema.validate(given, schemas[entry.name])


@pytest.mark.parametrize("name", NAMES)
def test_compiled_tools_json_matches_tool_schemas(name: str) -> None:
    module = compiled(name).artifacts["name"]
    on_disk = json.loads((REPO / "compiled" / f"{module}.tools.json").read_text("utf-8"))
    assert on_disk == example(name)().tool_schemas()
