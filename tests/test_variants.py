"""Variant records (tagged unions): parsing, checking with narrowing, generated code, the
runtime's strict tagged JSON and the schemas, on a spec in τ-bench airline's payment shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.fmt import format_source
from envdsl.generated.loader import environment_class, load_module
from envdsl.lsp.analysis import analyse
from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment, InvalidState
from envdsl.syntax import ast
from envdsl.util.source import SourceFile

SPEC = Path(__file__).parent / "variant_specs" / "airline_payments.env"

# a user of τ-bench airline's users.json: payment methods of three sources, by id
TAU_USER = {
    "payment_methods": {
        "certificate_7504069": {
            "amount": 250.0,
            "id": "certificate_7504069",
            "source": "certificate",
        },
        "credit_card_4421486": {
            "brand": "visa",
            "id": "credit_card_4421486",
            "last_four": "5259",
            "source": "credit_card",
        },
        "gift_card_1234567": {"amount": 128.0, "id": "gift_card_1234567", "source": "gift_card"},
    },
    "user_id": "mia_li_3668",
}
TAU_STATE = {
    "reservations": {
        "4WQ150": {"payment_history": [], "reservation_id": "4WQ150", "user": "mia_li_3668"}
    },
    "users": {"mia_li_3668": TAU_USER},
}


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    result = compile_source(SourceFile(str(SPEC), SPEC.read_text(encoding="utf-8")))
    assert result.ok, render_text(result.diagnostics, result.sources)
    return result.artifacts


@pytest.fixture()
def env(compiled: dict[str, Any]) -> Environment:
    cls = environment_class(load_module(compiled["module"], compiled["name"]))
    environment = cls()
    environment.reset(state=json.loads(json.dumps(TAU_STATE)))
    return environment


def diagnostics_of(text: str) -> list[tuple[str, str, str]]:
    """(code, the text of the span, help) of each diagnostic of a spec."""
    result = check_source(SourceFile("spec.env", text))
    return [
        (d.code.code, text[d.span.start : d.span.end], d.help or "") for d in result.diagnostics
    ]


def spec_with(body: str) -> str:
    return (
        'env V {\n  """A variant test."""\n'
        "  variant Pay by source {\n"
        "    card { id: str, brand: str }\n"
        "    gift { id: str, amount: float }\n"
        "    voucher { id: str, amount: float }\n"
        "  }\n"
        '  state { p: Pay = Pay.gift(id="g", amount=1.0) }\n' + body + "}\n"
    )


# ---- parse and build -------------------------------------------------------------------------
def test_the_variant_declaration_builds_its_cases_as_records() -> None:
    result = check_source(SourceFile(str(SPEC), SPEC.read_text(encoding="utf-8")))
    assert result.spec is not None and result.spec.env is not None
    (variant,) = result.spec.env.of_type(ast.VariantDecl)
    assert (variant.name.text, variant.tag.text) == ("PaymentMethod", "source")
    assert [c.name.text for c in variant.cases] == ["credit_card", "gift_card", "certificate"]
    assert [f.name.text for f in variant.cases[0].fields] == ["brand", "id", "last_four"]
    assert variant.doc is not None and "tagged by `source`" in variant.doc.value
    assert result.checked is not None
    info = result.checked.variants["PaymentMethod"]
    assert info.cases["gift_card"].name == "PaymentMethod.gift_card"
    assert info.shared_field("id") is not None and info.shared_field("amount") is None


def test_a_case_without_fields_needs_no_braces() -> None:
    text = 'env V {\n  """x"""\n  variant K by kind { empty\n full { n: int } }\n  state { k: K = K.empty() }\n}\n'
    assert diagnostics_of(text) == []


# ---- checking and narrowing ------------------------------------------------------------------
def test_a_case_field_read_without_narrowing_is_an_error_that_says_how_to_narrow() -> None:
    found = diagnostics_of(
        spec_with('  query q() -> float {\n    """q"""\n    return p.amount\n  }\n')
    )
    assert [(code, text) for code, text, _ in found] == [("E2099", "amount")]
    help = found[0][2]
    assert "if p is Pay.gift" in help and "require p is Pay.gift" in help


@pytest.mark.parametrize(
    "body",
    [
        "if p is Pay.gift { return p.amount }\n    return 0.0",
        'require p is Pay.voucher else "no voucher"\n    return p.amount',
        "return p.amount if p is Pay.gift else 0.0",
        "if p is Pay.card { return 0.0 } elif p is Pay.gift { return 1.0 } else { return p.amount }",
        "if p is not Pay.card and p is not Pay.gift { return p.amount }\n    return 0.0",
        'let ps = [p, Pay.card(id="c", brand="visa")]\n'
        "    return sum(x.amount for x in ps if x is Pay.gift)",
    ],
)
def test_narrowing_makes_the_case_fields_readable(body: str) -> None:
    spec = spec_with(f'  query q() -> float {{\n    """q"""\n    {body}\n  }}\n')
    assert diagnostics_of(spec) == []


@pytest.mark.parametrize(
    "body, code, text",
    [
        # two cases are left after ruling one out: neither one's own field is readable
        ("if p is not Pay.card { return p.amount }\n    return 0.0", "E2099", "amount"),
        # an assignment forgets what the test proved
        (
            'if p is Pay.gift {\n      p = Pay.card(id="c", brand="b")\n      return p.amount\n    }\n    return 0.0',
            "E2099",
            "amount",
        ),
        ('let x = Pay.paypal(id="z")\n    return 0.0', "E1099", "paypal"),
        ("return p.colour", "E1003", "colour"),
        ('let n = 3\n    require n is Pay.gift else "x"\n    return 0.0', "E2002", "n is Pay.gift"),
    ],
)
def test_what_narrowing_does_not_prove(body: str, code: str, text: str) -> None:
    found = diagnostics_of(spec_with(f'  action q() -> float {{\n    """q"""\n    {body}\n  }}\n'))
    assert code in [c for c, _, _ in found], found
    if text:
        assert text in [t for c, t, _ in found if c == code]


def test_the_tag_and_shared_fields_read_without_narrowing() -> None:
    body = '  query q() -> str {\n    """q"""\n    return f"{p.source} {p.id}"\n  }\n'
    assert diagnostics_of(spec_with(body)) == []


def test_a_case_field_named_like_the_tag_is_rejected() -> None:
    text = spec_with("").replace("card { id: str, brand: str }", "card { id: str, source: str }")
    assert [(c, t) for c, t, _ in diagnostics_of(text)] == [("E2098", "source")]


def test_values_of_another_variant_or_case_do_not_fit() -> None:
    body = '  action q() {\n    """q"""\n    p = Pay.card(id="c", brand="b")\n    let g: Pay = Pay.gift(id="g", amount=2.0)\n    let n: int = Pay.gift(id="g", amount=2.0)\n  }\n'
    found = diagnostics_of(spec_with(body))
    errors = [(c, t) for c, t, _ in found if c.startswith("E")]
    assert errors == [("E2001", 'Pay.gift(id="g", amount=2.0)')]


# ---- generated code and runtime --------------------------------------------------------------
def test_the_state_json_of_tau_bench_data_is_the_data_itself(env: Environment) -> None:
    assert env.state_json() == TAU_STATE
    assert json.dumps(env.state_json(), sort_keys=True) == json.dumps(TAU_STATE, sort_keys=True)
    text = json.dumps(env.state_json())
    assert "null" not in text  # no field of another case, no nulls


def test_a_tool_writes_a_narrowed_field_in_place(env: Environment) -> None:
    result = env.call(
        "pay", {"reservation_id": "4WQ150", "payment_id": "gift_card_1234567", "total": 100.0}
    )
    assert result["success"], result
    assert result["data"] == {"amount": 28.0, "id": "gift_card_1234567", "source": "gift_card"}
    methods = env.state_json()["users"]["mia_li_3668"]["payment_methods"]
    assert methods["gift_card_1234567"]["amount"] == 28.0
    history = env.state_json()["reservations"]["4WQ150"]["payment_history"]
    assert history == [{"amount": 100.0, "payment_id": "gift_card_1234567"}]
    assert env.call("gift_card_balance", {"user_id": "mia_li_3668"})["data"] == 28.0


def test_a_failing_write_of_a_narrowed_field_is_undone(env: Environment) -> None:
    before = env.state_hash()
    result = env.call(
        "pay", {"reservation_id": "4WQ150", "payment_id": "gift_card_1234567", "total": 500.0}
    )
    assert result == {"success": False, "error": "not enough balance on the gift card"}
    assert env.state_hash() == before


def test_the_case_left_after_ruling_others_out(env: Environment) -> None:
    result = env.call(
        "pay", {"reservation_id": "4WQ150", "payment_id": "certificate_7504069", "total": 200.0}
    )
    assert result["success"], result
    assert "certificate_7504069" not in env.state_json()["users"]["mia_li_3668"]["payment_methods"]
    brand = env.call("card_brand", {"user_id": "mia_li_3668", "payment_id": "credit_card_4421486"})
    assert brand == {"success": True, "data": "visa"}
    not_card = env.call("card_brand", {"user_id": "mia_li_3668", "payment_id": "gift_card_1234567"})
    assert not_card == {
        "success": False,
        "error": "gift_card gift_card_1234567 is not a credit card",
    }


@pytest.mark.parametrize(
    "method, message",
    [
        ({"source": "paypal", "id": "P1"}, "method.source: 'paypal' is no case of PaymentMethod"),
        ({"id": "P1", "amount": 1.0}, "method.source: missing the tag of PaymentMethod"),
        ({"source": 3, "id": "P1"}, "method.source: the number 3 is no case of PaymentMethod"),
        (
            {"source": "gift_card", "id": "P1", "amount": 5.0, "brand": None},
            "PaymentMethod.gift_card has no field 'brand'",
        ),
        (
            {"source": "certificate", "id": "P1"},
            "method.amount: missing required field of " "PaymentMethod.certificate",
        ),
        ("gift_card", "expected a PaymentMethod object"),
    ],
)
def test_a_bad_variant_argument_is_rejected_with_state_untouched(
    env: Environment, method: Any, message: str
) -> None:
    before = env.state_hash()
    result = env.call("add_method", {"user_id": "mia_li_3668", "method": method})
    assert result["success"] is False
    assert message in result["error"], result["error"]
    assert env.state_hash() == before


def test_a_good_variant_argument_is_stored(env: Environment) -> None:
    card = {"source": "credit_card", "id": "cc9", "brand": "amex", "last_four": "0005"}
    assert env.call("add_method", {"user_id": "mia_li_3668", "method": card})["data"] == 4
    methods = env.call("methods", {"user_id": "mia_li_3668"})["data"]
    assert {"brand": "amex", "id": "cc9", "last_four": "0005", "source": "credit_card"} in methods


def test_a_state_with_a_bad_tag_is_invalid(compiled: dict[str, Any]) -> None:
    cls = environment_class(load_module(compiled["module"], compiled["name"]))
    bad = json.loads(json.dumps(TAU_STATE))
    bad["users"]["mia_li_3668"]["payment_methods"]["gift_card_1234567"]["source"] = "giftcard"
    with pytest.raises(InvalidState, match="'giftcard' is no case of PaymentMethod"):
        cls().reset(state=bad)


def test_a_snapshot_restores_a_variant_written_in_place(env: Environment) -> None:
    snapshot = env.snapshot()
    env.call("pay", {"reservation_id": "4WQ150", "payment_id": "gift_card_1234567", "total": 1.0})
    assert env.state_json() != TAU_STATE
    env.restore(snapshot)
    assert env.state_json() == TAU_STATE


def test_the_task_checks_compare_variant_values(compiled: dict[str, Any]) -> None:
    cls = environment_class(load_module(compiled["module"], compiled["name"]))
    environment = cls()
    environment.reset(task="pay_with_gift_card")
    assert environment.evaluate()["reward"] == 0.0
    environment.call("pay", {"reservation_id": "R1", "payment_id": "G1", "total": 100.0})
    assert environment.evaluate()["reward"] == 1.0


# ---- schemas ---------------------------------------------------------------------------------
def test_tool_and_state_schemas_have_one_of_with_a_discriminator(
    env: Environment, compiled: dict[str, Any]
) -> None:
    schemas = {s["function"]["name"]: s["function"] for s in env.tool_schemas()}
    method = schemas["add_method"]["parameters"]["properties"]["method"]
    assert method["discriminator"] == {"propertyName": "source"}
    assert method["description"] == "The method to store"
    cases = {case["properties"]["source"]["const"]: case for case in method["oneOf"]}
    assert set(cases) == {"credit_card", "gift_card", "certificate"}
    assert cases["gift_card"]["required"] == ["source", "amount", "id"]
    assert set(cases["gift_card"]["properties"]) == {"source", "amount", "id"}
    assert cases["gift_card"]["additionalProperties"] is False
    row = type(env).TABLES["users"].row.schema()
    assert row["properties"]["payment_methods"]["additionalProperties"]["discriminator"] == {
        "propertyName": "source"
    }


def test_the_generated_module_is_mypy_strict_clean(
    compiled: dict[str, Any], tmp_path: Path
) -> None:
    module = tmp_path / "airline_payments.py"
    module.write_text(compiled["module"], encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(module)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "class PaymentMethod_gift_card(rt.Value):" in compiled["module"]
    assert (
        "PaymentMethod = PaymentMethod_credit_card | PaymentMethod_gift_card | "
        "PaymentMethod_certificate" in compiled["module"]
    )


# ---- tools -----------------------------------------------------------------------------------
def test_fmt_lays_out_a_variant_and_is_stable() -> None:
    messy = (
        'env V {\n"""x"""\nvariant K by kind {\n   """Kinds."""\n  a {n: int,\n m: str}\n'
        '  b {}\n  c { n: int = 1 }\n  d="d d"{n:int}\n}\nstate { k: K = K.b() }\n}\n'
    )
    formatted = format_source(SourceFile("spec.env", messy)).text
    assert formatted is not None
    assert '  variant K by kind {\n    """Kinds."""\n    a { n: int, m: str }\n    b\n' in formatted
    assert '    c {\n      n: int = 1\n    }\n    d = "d d" { n: int }\n' in formatted
    assert format_source(SourceFile("spec.env", formatted)).text == formatted


def test_lsp_hover_and_completion_know_cases_and_the_tag() -> None:
    text = SPEC.read_text(encoding="utf-8")
    analysis = analyse(str(SPEC), text)
    at = text.index("m is PaymentMethod.gift_card") + len("m is PaymentMethod.")
    hover = analysis.hover(at)
    assert hover is not None and "case PaymentMethod.gift_card" in hover[0]
    source = analysis.hover(text.index("m.source}") + 2)
    assert source is not None and "(tag) PaymentMethod.source: str" in source[0]
    labels = [c.label for c in analysis.completions(at)]
    assert labels == ["credit_card", "gift_card", "certificate"]
    narrowed = text.index("m.amount -= total") + 2
    assert [c.label for c in analysis.completions(narrowed)] == ["source", "amount", "id"]


OPTIONAL_SPEC = '''env Z {
  """An optional variant, a case without fields and a variant without cases."""
  variant Never by kind { }
  variant Opt by kind { some { n: int }, empty }
  state { o: Opt? = none, never: list[Never] = [] }
  action set_o(v: Opt?) -> int {
    """Set o."""
    o = v
    if o is Opt.some { return o.n }
    if o == Opt.empty() { return -1 }
    return 0
  }
}
'''


def test_optional_variants_empty_cases_and_typed_calls() -> None:
    result = compile_source(SourceFile("z.env", OPTIONAL_SPEC))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    env = environment_class(module)()
    env.reset()
    assert env.call("set_o", {"v": {"kind": "some", "n": 4}}) == {"success": True, "data": 4}
    assert env.call("set_o", {"v": {"kind": "empty"}}) == {"success": True, "data": -1}
    assert env.call("set_o", {"v": None}) == {"success": True, "data": 0}
    assert env.state_json() == {"o": None, "never": []}
    typed = env.set_o(v=module.Opt_some(n=9))  # type: ignore[attr-defined]
    assert typed == {"success": True, "data": 9}
    assert env.state_json() == {"o": {"kind": "some", "n": 9}, "never": []}
    refused = env.call("set_o", {"v": {"kind": "empty", "n": 3}})
    assert refused["success"] is False and "Opt.empty has no field 'n'" in refused["error"]


def test_the_tag_cannot_be_assigned_and_a_shared_field_can() -> None:
    retag = '  action q() {\n    """q"""\n    p.source = "card"\n  }\n'
    assert [(c, t) for c, t, _ in diagnostics_of(spec_with(retag))] == [("E3009", "p.source")]
    rename = spec_with('  action q(new: str) {\n    """q"""\n    p.id = new\n  }\n')
    result = compile_source(SourceFile("spec.env", rename))
    assert result.ok, render_text(result.diagnostics, result.sources)
    env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
    env.reset()
    assert env.call("q", {"new": "h"})["success"]
    assert env.state_json() == {"p": {"amount": 1.0, "id": "h", "source": "gift"}}


REF_SPEC = '''env R {
  """Refs inside variant cases are kept whole, as inside records."""
  entity U { key id: str }
  variant P by kind { a { id: str, owner: ref U }, b { id: str } }
  entity H { key hid: str, ps: list[P] = [] }
  state { us: table U, hs: table H }
  action drop(id: str) {
    """Delete a user."""
    us.delete(id)
  }
}
'''


def test_refs_inside_a_case_must_point_at_rows() -> None:
    result = compile_source(SourceFile("r.env", REF_SPEC))
    assert result.ok, render_text(result.diagnostics, result.sources)
    env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
    dangling = {"us": [], "hs": [{"hid": "h", "ps": [{"kind": "a", "id": "x", "owner": "U9"}]}]}
    with pytest.raises(InvalidState, match="ps\\[0\\].owner: U 'U9' does not exist"):
        env.reset(state=dangling)
    held = [{"kind": "b", "id": "y"}, {"kind": "a", "id": "x", "owner": "U1"}]
    env.reset(state={"us": [{"id": "U1"}], "hs": [{"hid": "h", "ps": held}]})
    refused = env.call("drop", {"id": "U1"})
    assert refused == {
        "success": False,
        "error": "cannot delete U 'U1': H 'h' refers to it (ps[1].owner)",
    }


def test_case_tests_inside_and_or_chains_run() -> None:
    body = (
        '  query q() -> float {\n    """q"""\n'
        "    return 2.0 if p is Pay.card or p is Pay.gift and p.amount > 0.5 else -1.0\n"
        "  }\n"
        '  query r() -> int {\n    """r"""\n'
        '    return count(x for x in [p] if x is not Pay.card and x.id == "g")\n  }\n'
    )
    result = compile_source(SourceFile("spec.env", spec_with(body)))
    assert result.ok, render_text(result.diagnostics, result.sources)
    env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
    env.reset()
    assert env.call("q")["data"] == 2.0
    assert env.call("r")["data"] == 1


FLIGHTS_SPEC = '''env Flights {
  """Flights and their status per date, as τ-bench airline's flights.json has them."""
  variant FlightDate by status {
    available { available_seats: map[str, int], prices: map[str, float] }
    on_time = "on time" { estimated_arrival_time_est: str, estimated_departure_time_est: str }
    landed { actual_arrival_time_est: str, actual_departure_time_est: str }
    cancelled
  }
  entity Flight {
    key flight_number: str
    dates: map[str, FlightDate] = {}
  }
  state { flights: table Flight }
  query seats(flight_number: str, date: str, cabin: str) -> int {
    """Free seats in a cabin."""
    let f = flights.get(flight_number) else "no such flight"
    let d = f.dates.get(date) else "the flight does not fly that day"
    require d is FlightDate.available else f"the flight is {d.status}"
    return d.available_seats[cabin]
  }
}
'''
FLIGHTS_STATE = {
    "flights": {
        "HAT001": {
            "dates": {
                "2024-05-16": {
                    "actual_arrival_time_est": "2024-05-16T09:31:00",
                    "actual_departure_time_est": "2024-05-16T06:04:00",
                    "status": "landed",
                },
                "2024-05-17": {
                    "estimated_arrival_time_est": "2024-05-17T09:31:00",
                    "estimated_departure_time_est": "2024-05-17T06:04:00",
                    "status": "on time",
                },
                "2024-05-18": {"status": "cancelled"},
                "2024-05-20": {
                    "available_seats": {"basic_economy": 16, "business": 13, "economy": 10},
                    "prices": {"basic_economy": 87.0, "business": 471.0, "economy": 122.0},
                    "status": "available",
                },
            },
            "flight_number": "HAT001",
        }
    }
}


def test_a_case_with_its_own_json_tag_round_trips() -> None:
    result = compile_source(SourceFile("flights.env", FLIGHTS_SPEC))
    assert result.ok, render_text(result.diagnostics, result.sources)
    env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
    env.reset(state=json.loads(json.dumps(FLIGHTS_STATE)))
    assert json.dumps(env.state_json(), sort_keys=True) == json.dumps(FLIGHTS_STATE, sort_keys=True)
    args = {"flight_number": "HAT001", "cabin": "economy"}
    assert env.call("seats", {**args, "date": "2024-05-20"}) == {"success": True, "data": 10}
    on_time = env.call("seats", {**args, "date": "2024-05-17"})
    assert on_time == {"success": False, "error": "the flight is on time"}
    schema = type(env).TABLES["flights"].row.schema()
    cases = schema["properties"]["dates"]["additionalProperties"]["oneOf"]
    assert [c["properties"]["status"]["const"] for c in cases] == [
        "available",
        "on time",
        "landed",
        "cancelled",
    ]
    text = FLIGHTS_SPEC.replace("    cancelled\n", '    cancelled\n    gone = "on time"\n')
    found = diagnostics_of(text)
    assert [(c, t) for c, t, _ in found] == [("E1010", '"on time"')]
