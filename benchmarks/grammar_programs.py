"""Random programs for the grammar fuzzer (benchmarks/fuzz_grammar.py): two generators.

`derive(rng)`: a random derivation of `env_decl` from the grammar itself (grammar/envdsl.lark,
as lark expands it into BNF rules): every rule can be chosen, bounded in depth by taking, past
a depth, the alternative that ends soonest. Such programs follow the grammar (the post-lexer
may still reject a few: a newline where the grammar has none) and almost never type-check:
they exercise the parser, the builder and the name and type checkers on shapes no example has.

`typed_spec(rng)`: a random well-typed env built from the same constructs, type-directed:
enums, entities with keys, refs, optional and list fields, defaults, row and env invariants,
state scalars, queries and actions with let-else, require, if/elif/else, for loops with
break/continue, `+=`, comprehensions, conditional expressions, f-strings, builtins, inserts,
deletes and field writes, and a task with init and a solution. Most of them are clean, so the
semantic oracle can call their tools.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# ---- 1. derivations of the grammar ------------------------------------------------------------

NAMES = ["a", "b", "n", "x", "Item", "items", "item_id", "count", "get", "status", "total"]
SOFT_KEYWORDS = ["state", "key", "table", "check", "from", "on", "delete", "answer", "task"]
STRINGS = ['"ok"', '"not found"', "'x'", '""', '"a\\nb"', '"2024-05-01T09:00:00Z"']
TERMINALS = {
    "INT": ["0", "1", "7", "42", "1_000", "9223372036854775807", "10"],
    "FLOAT": ["0.5", "1.0", "2.5e3", "1e-3"],
    "STRING": STRINGS,
    "LONG_STRING": ['"""Doc."""', '"""Two\nlines."""'],
    "FSTRING": ['f"n={n}"', "f'{a}-{b}'", 'f"{x:>4}"'],
    "_NL": ["\n"],
    "NONE": ["none"],
    "LBRACE": ["{"],
    "RBRACE": ["}"],
    "MAP_LBRACE": ["{"],
}


@lru_cache(maxsize=1)
def _grammar() -> tuple[dict[str, list[list[tuple[bool, str]]]], dict[str, str]]:
    """Rules by name (each alternative a list of (is_terminal, name)) and literal terminals."""
    from envdsl.syntax.parse import _parser

    parser = _parser()
    rules: dict[str, list[list[tuple[bool, str]]]] = {}
    for rule in parser.rules:
        rules.setdefault(rule.origin.name, []).append(
            [(symbol.is_term, symbol.name) for symbol in rule.expansion]
        )
    literals = {t.name: t.pattern.value for t in parser.terminals if t.pattern.type == "str"}
    return rules, literals


@lru_cache(maxsize=1)
def _ends() -> dict[str, int]:
    """The fewest derivation steps each rule needs to end (a fixed point over the rules)."""
    rules, _ = _grammar()
    cost = {name: 10**9 for name in rules}
    changed = True
    while changed:
        changed = False
        for name, alternatives in rules.items():
            for alternative in alternatives:
                total = 1 + sum(0 if term else cost[symbol] for term, symbol in alternative)
                if total < cost[name]:
                    cost[name], changed = total, True
    return cost


def _terminal(rng: random.Random, name: str, literals: dict[str, str]) -> str:
    if name == "NAME":
        return rng.choice(NAMES if rng.random() < 0.85 else SOFT_KEYWORDS)
    if name in TERMINALS:
        return rng.choice(TERMINALS[name])
    return literals[name]


def derive(rng: random.Random, start: str = "env_decl", budget: int = 400) -> str:
    """A random sentence of the grammar; `budget` bounds the rules expanded freely."""
    rules, literals = _grammar()
    ends = _ends()
    tokens: list[str] = []
    stack: list[tuple[bool, str, int]] = [(False, start, 0)]
    expanded = 0
    while stack:
        is_terminal, name, depth = stack.pop()
        if is_terminal:
            tokens.append(_terminal(rng, name, literals))
            continue
        alternatives = rules[name]
        expanded += 1
        if depth > 12 or expanded > budget:  # end as soon as possible
            choice = min(alternatives, key=lambda a: sum(ends[s] for t, s in a if not t))
        else:
            choice = rng.choice(alternatives)
        stack.extend((term, symbol, depth + 1) for term, symbol in reversed(choice))
    return _join(tokens)


def _join(tokens: list[str]) -> str:
    text = []
    for token in tokens:
        if token == "\n" or (text and text[-1] == "\n"):
            text.append(token)
        else:
            text.append(" " + token if text else token)
    return "".join(text) + "\n"


# ---- 2. well-typed envs --------------------------------------------------------------------------

PRIMS = ["int", "float", "bool", "str"]


@dataclass
class Entity:
    name: str
    table: str
    fields: dict[str, str]  # name -> type (not the key `id`)
    defaults: dict[str, str]
    refs: dict[str, str] = field(default_factory=dict)  # field -> entity name
    invariant: str | None = None  # a row invariant over an int field: `f >= 0`


@dataclass
class Spec:
    enums: dict[str, list[str]]
    entities: list[Entity]
    scalars: dict[str, str]
    lines: list[str] = field(default_factory=list)


class Typed:
    """Type-directed expressions over a scope of (name, type) pairs."""

    def __init__(self, rng: random.Random, spec: Spec) -> None:
        self.rng = rng
        self.spec = spec

    def literal(self, kind: str) -> str:
        rng = self.rng
        if kind == "int":
            return str(rng.choice([0, 1, 2, 3, 7, 10, 100, -1, 2**31, 9223372036854775807]))
        if kind == "float":
            return rng.choice(["0.0", "0.5", "1.5", "2.0", "100.25", "1e10"])
        if kind == "bool":
            return rng.choice(["true", "false"])
        if kind == "str":
            return rng.choice(['"a"', '"b"', '""', '"x y"', '"A,B"', '"  pad "'])
        if kind in self.spec.enums:
            return f"{kind}.{rng.choice(self.spec.enums[kind])}"
        if kind.endswith("?"):
            return "none" if rng.random() < 0.5 else self.literal(kind[:-1])
        if kind == "list[str]":
            return rng.choice(["[]", '["a"]', '["a", "b"]'])
        raise ValueError(kind)

    def expr(self, kind: str, scope: list[tuple[str, str]], depth: int = 0) -> str:
        rng = self.rng
        names = [name for name, k in scope if k == kind]
        if depth > 2 or rng.random() < 0.3:
            if names and rng.random() < 0.7:
                return rng.choice(names)
            return self.literal(kind)
        sub = depth + 1
        if kind == "int":
            choice = rng.randrange(9)
            a, b = self.expr("int", scope, sub), self.expr("int", scope, sub)
            if choice == 0:
                return f"({a} {rng.choice(['+', '-', '*'])} {b})"
            if choice == 1:
                return f"({a} {rng.choice(['//', '%'])} {b})"
            if choice == 2:
                return f"len({self.expr('str', scope, sub)})"
            if choice == 3:
                return f"{rng.choice(['min', 'max'])}({a}, {b})"
            if choice == 4:
                return f"abs({a})"
            if choice == 5:
                return f"({a} if {self.expr('bool', scope, sub)} else {b})"
            if choice == 6:
                return f"({a} ** {rng.choice(['0', '1', '2', '3', '64', b])})"
            if choice == 7:
                return f'len({self.expr("str", scope, sub)}.split(","))'
            return f"int({self.expr('float', scope, sub)})"
        if kind == "float":
            choice = rng.randrange(4)
            a, b = self.expr("float", scope, sub), self.expr("float", scope, sub)
            if choice == 0:
                return f"({a} {rng.choice(['+', '-', '*', '/'])} {b})"
            if choice == 1:
                return f"({self.expr('int', scope, sub)} / {b})"
            if choice == 2:
                return f"round({a}, 2)"
            return f"({a} if {self.expr('bool', scope, sub)} else {b})"
        if kind == "bool":
            choice = rng.randrange(6)
            if choice == 0:
                op = rng.choice(["<", "<=", "==", "!=", ">", ">="])
                return f"({self.expr('int', scope, sub)} {op} {self.expr('int', scope, sub)})"
            if choice == 1:
                op = rng.choice(["and", "or"])
                return f"({self.expr('bool', scope, sub)} {op} {self.expr('bool', scope, sub)})"
            if choice == 2:
                return f"(not {self.expr('bool', scope, sub)})"
            if choice == 3:
                return f"({self.expr('str', scope, sub)} in {self.expr('str', scope, sub)})"
            if choice == 4:
                method = rng.choice(["startswith", "endswith"])
                return f"{self.expr('str', scope, sub)}.{method}({self.expr('str', scope, sub)})"
            return f"({self.expr('str', scope, sub)} == {self.expr('str', scope, sub)})"
        if kind == "str":
            choice = rng.randrange(7)
            a = self.expr("str", scope, sub)
            if choice == 0:
                return f"({a} + {self.expr('str', scope, sub)})"
            if choice == 1:
                return f"{a}.{rng.choice(['upper', 'lower', 'strip'])}()"
            if choice == 2:  # holes without string literals: their quotes would end it
                ints = [n for n, k in scope if k == "int"] or ["7"]
                strs = [n for n, k in scope if k == "str"] or ["total"]
                return f'f"{{{rng.choice(ints)}}}-{{{rng.choice(strs)}}}"'
            if choice == 3:
                return f"str({self.expr('int', scope, sub)})"
            if choice == 4:
                return f"{a}.lower()"
            if choice == 5:
                return f'{a}.replace("a", {self.expr("str", scope, sub)})'
            return f"({a} if {self.expr('bool', scope, sub)} else {self.expr('str', scope, sub)})"
        return self.literal(kind)


def _schema(rng: random.Random) -> Spec:
    enums = {"Level": ["low", "mid", "high"]} if rng.random() < 0.7 else {}
    entities: list[Entity] = []
    for index in range(rng.randint(1, 2)):
        name = ["Item", "Order"][index]
        kinds = PRIMS + list(enums) + ["str?", "int?", "list[str]"]
        fields: dict[str, str] = {}
        defaults: dict[str, str] = {}
        for number in range(rng.randint(1, 4)):
            kind = rng.choice(kinds)
            fields[f"f{number}"] = kind
        entity = Entity(name, name.lower() + "s", fields, defaults)
        typed = Typed(rng, Spec(enums, [], {}))
        for field_name, kind in fields.items():
            if rng.random() < 0.5:
                defaults[field_name] = typed.literal(kind)
        if index == 1 and rng.random() < 0.7:
            entity.refs["item"] = "Item"
        ints = [f for f, k in fields.items() if k == "int"]
        if ints and rng.random() < 0.5:
            entity.invariant = ints[0]
            defaults[ints[0]] = "0"
        entities.append(entity)
    scalars = {"total": "int"}
    if rng.random() < 0.5:
        scalars["label"] = "str"
    return Spec(enums, entities, scalars)


def _declarations(spec: Spec, rng: random.Random) -> list[str]:
    out = []
    for enum, members in spec.enums.items():
        out.append(f"  enum {enum} {{ {', '.join(members)} }}")
    for entity in spec.entities:
        out.append(f"  entity {entity.name} {{")
        out.append("    key id: str")
        for name, kind in entity.fields.items():
            default = f" = {entity.defaults[name]}" if name in entity.defaults else ""
            out.append(f"    {name}: {kind}{default}")
        for name, target in entity.refs.items():
            mode = rng.choice(["", " on delete cascade", " on delete restrict"])
            out.append(f"    {name}: ref {target}{mode}")
        if entity.invariant:
            out.append(
                f'    invariant "{entity.invariant} is never negative": {entity.invariant} >= 0'
            )
        out.append("  }")
    out.append("  state {")
    for entity in spec.entities:
        out.append(f"    {entity.table}: table {entity.name}")
    for name, kind in spec.scalars.items():
        out.append(f"    {name}: {kind} = {'0' if kind == 'int' else chr(34) * 2}")
    out.append("  }")
    if rng.random() < 0.5:
        out.append('  invariant "the total is never negative": total >= 0')
    return out


def _constructor(entity: Entity, typed: Typed, scope: list[tuple[str, str]]) -> str:
    args = [f"id={typed.expr('str', scope)}" if not scope else "id=id"]
    for name, kind in entity.fields.items():
        if name not in entity.defaults or typed.rng.random() < 0.3:
            if name == entity.invariant:
                args.append(f"{name}=abs({typed.expr('int', scope)})")
            else:
                args.append(
                    f"{name}={typed.expr(kind, scope) if kind in PRIMS else typed.literal(kind)}"
                )
    for name in entity.refs:
        args.append(f"{name}={name}")
    return f"{entity.name}({', '.join(args)})"


def _tools(spec: Spec, rng: random.Random) -> list[str]:
    typed = Typed(rng, spec)
    out: list[str] = []
    for entity in spec.entities:
        e, table = entity.name, entity.table
        lower = e.lower()
        params = [("id", "str")] + [(f"p{i}", rng.choice(PRIMS)) for i in range(rng.randint(0, 2))]
        ref_params = [(name, "str") for name in entity.refs]
        signature = ", ".join(f"{n}: {k}" for n, k in params + ref_params)
        scope = params + [("total", "int")]
        out.append(f"  action add_{lower}({signature}) -> {e} {{")
        out.append(f'    """Add one {lower}."""')
        out.append(f"    require {typed.expr('bool', scope)} else \"refused\"")
        for name, target in entity.refs.items():
            other = next(x for x in spec.entities if x.name == target)
            out.append(f'    require {name} in {other.table} else "no such {target.lower()}"')
        out.append(f"    total += {rng.choice(['1', typed.expr('int', scope)])}")
        out.append(f"    return {table}.insert({_constructor(entity, typed, scope)})")
        out.append("  }")
        # a query with let-else and a conditional result
        out.append(f"  query get_{lower}(id: str) -> {e} {{")
        out.append(f'    """Return one {lower}."""')
        out.append(f'    let row = {table}.get(id) else "{lower} not found"')
        out.append("    return row")
        out.append("  }")
        # an update with if/elif/else and field writes
        writable = [(n, k) for n, k in entity.fields.items() if k in PRIMS]
        p_kind = rng.choice(PRIMS)
        out.append(f"  action change_{lower}(id: str, value: {p_kind}) -> {e} {{")
        out.append(f'    """Change one {lower}."""')
        out.append(f'    let row = {table}.get(id) else "{lower} not found"')
        scope = [("id", "str"), ("value", p_kind), ("total", "int")] + [
            (f"row.{n}", k) for n, k in writable
        ]
        out.append(f"    if {typed.expr('bool', scope)} {{")
        for name, kind in writable[:2]:
            value = typed.expr(kind, scope)
            if name == entity.invariant:
                value = f"abs({value})"
            out.append(f"      row.{name} = {value}")
        out.append(f"    }} elif {typed.expr('bool', scope)} {{")
        out.append(f'      fail "not now"')
        out.append("    } else {")
        out.append(f"      total {rng.choice(['+=', '-='])} {typed.expr('int', scope)}")
        out.append("    }")
        out.append("    return row")
        out.append("  }")
        # a loop with continue and break, over the table
        ints = [n for n, k in entity.fields.items() if k == "int"]
        out.append(f"  query count_{lower}s(limit: int) -> int {{")
        out.append(f'    """Count {lower}s up to a limit."""')
        out.append("    let seen = 0")
        out.append(f"    for row in {table} {{")
        out.append("      if seen >= limit {")
        out.append("        break")
        out.append("      }")
        if ints:
            out.append(f"      if row.{ints[0]} < 0 {{")
            out.append("        continue")
            out.append("      }")
        out.append("      seen += 1")
        out.append("    }")
        out.append("    return seen")
        out.append("  }")
        # a comprehension, sorted
        out.append(f"  query list_{lower}s(prefix: str) -> list[str] {{")
        out.append(f'    """Keys of the {lower}s, sorted."""')
        key = rng.choice(["lambda r: r.id", "lambda r: len(r.id)"])
        out.append(
            f"    return [r.id for r in sorted({table}, key={key}) if r.id.startswith(prefix)]"
        )
        out.append("  }")
        out.append(f"  action remove_{lower}(id: str) -> int {{")
        out.append(f'    """Delete one {lower}."""')
        out.append(f'    require id in {table} else "{lower} not found"')
        out.append(f"    {table}.delete(id)")
        out.append(f"    return len({table})")
        out.append("  }")
    # free expressions over parameters
    for number in range(rng.randint(1, 3)):
        kinds = [rng.choice(PRIMS) for _ in range(rng.randint(0, 3))]
        result = rng.choice(PRIMS)
        params = [(f"a{i}", k) for i, k in enumerate(kinds)]
        signature = ", ".join(f"{n}: {k}" for n, k in params)
        scope = params + [("total", "int")]
        out.append(f"  query compute{number}({signature}) -> {result} {{")
        out.append('    """Compute a value."""')
        if rng.random() < 0.5:
            out.append(f"    let v = {typed.expr(result, scope)}")
            scope = scope + [("v", result)]
        out.append(f"    return {typed.expr(result, scope)}")
        out.append("  }")
    return out


def _task(spec: Spec, rng: random.Random) -> list[str]:
    first = spec.entities[0]
    typed = Typed(rng, spec)
    out = ["  task first_add {", f'    """Add a {first.name.lower()} with id k9."""', "    init {"]
    rows = []
    for number in range(rng.randint(0, 2)):
        args = [f'id="k{number}"']
        for name, kind in first.fields.items():
            if name not in first.defaults:
                literal = typed.literal(kind)
                args.append(f"{name}={'0' if name == first.invariant else literal}")
        rows.append(f"{first.name}({', '.join(args)})")
    out.append(f"      {first.table} = [{', '.join(rows)}]")
    for entity in spec.entities[1:]:
        out.append(f"      {entity.table} = []")
    out.append("    }")
    out.append(f'    check "k9 exists": "k9" in {first.table}')
    out.append("  }")
    return out


def typed_spec(rng: random.Random) -> str:
    spec = _schema(rng)
    lines = ["env Generated {", '  """A generated environment."""']
    lines += _declarations(spec, rng)
    lines += _tools(spec, rng)
    if rng.random() < 0.5:
        lines += _task(spec, rng)
    lines.append("}")
    return "\n".join(lines) + "\n"


def arguments(rng: random.Random, tool: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """Arguments for a tool from its JSON schema: existing keys, small and edge values."""
    values: dict[str, Any] = {}
    properties = tool.get("parameters", {}).get("properties", {})
    for name, schema in properties.items():
        kind = schema.get("type")
        if kind == "string" or (isinstance(kind, list) and "string" in kind):
            pool = keys + ["k9", "", "a", "x,y", "A" * 50]
            values[name] = rng.choice(pool) if pool else "k9"
        elif kind == "integer":
            values[name] = rng.choice([0, 1, 2, -1, 3, 64, 2**62, -(2**63)])
        elif kind == "number":
            values[name] = rng.choice([0.0, 0.5, -2.5, 1e300, 3])
        elif kind == "boolean":
            values[name] = rng.choice([True, False])
        else:
            values[name] = None
        if rng.random() < 0.03:
            values.pop(name)  # a missing argument
    return values
