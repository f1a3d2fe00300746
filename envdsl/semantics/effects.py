"""Stage 5: effects: what each fn, tool and invariant reads and writes, closed over calls.

The type checker records each body's own reads, writes and calls (and rejects writes where
they are not allowed); this stage adds what callees do, so a tool's summary is complete,
and rejects recursion, which would let a call run without bound.
"""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, Effects


def close_effects(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    callables = checked.callables
    reported: set[frozenset[str]] = set()
    done: set[str] = set()  # fully explored: no cycle through them is left to find

    def visit(name: str, path: list[str]) -> None:
        for callee in sorted(checked.effects.get(name, Effects()).calls):
            if callee not in callables or callee in done:
                continue
            if callee in path:
                cycle = path[path.index(callee) :] + [callee]
                if frozenset(cycle) in reported:
                    continue
                reported.add(frozenset(cycle))
                # one report per cycle, at the member declared first in the file
                first = min(cycle[:-1], key=lambda n: callables[n].decl.span.start)
                sink.report(
                    codes.RECURSIVE_CALL,
                    (
                        f"'{first}' calls itself"
                        if len(cycle) == 2
                        else f"recursive calls: {' -> '.join(cycle)}"
                    ),
                    callables[first].decl.name.span,
                    help="there is no recursion, so that every call terminates; "
                    "use a `for` loop over a collection",
                )
                continue
            visit(callee, path + [callee])
        done.add(name)

    for name in callables:
        if name not in done:
            visit(name, [name])
    # `visit` refers to itself through its closure: a cycle that would hold `checked` (the
    # whole spec) until the cyclic garbage collector finds it; without it, the spec is freed
    # as soon as its last reference goes
    del visit

    # Transitive closure of reads and writes (bounded: the call graph is finite).
    changed = True
    while changed:
        changed = False
        for name in callables:
            own = checked.effects.setdefault(name, Effects())
            for callee in list(own.calls):
                other = checked.effects.get(callee)
                if other is None or callee == name:
                    continue
                before = (len(own.reads), len(own.writes), len(own.calls))
                own.reads |= other.reads
                own.writes |= other.writes
                own.calls |= other.calls
                if (len(own.reads), len(own.writes), len(own.calls)) != before:
                    changed = True
    # Invariants, checks and defaults have effect entries too: what the fns they call read
    # is what they read (an invariant `total() < 10` depends on the table `total` sums).
    for name, own in checked.effects.items():
        if name in callables:
            continue
        for callee in list(own.calls):
            other = checked.effects.get(callee)
            if other is not None:
                own.reads |= other.reads
                own.writes |= other.writes
    for name in callables:
        own = checked.effects.setdefault(name, Effects())
        own.writes = add_cascades(checked, own.writes)


def add_cascades(checked: CheckedSpec, writes: set[str]) -> set[str]:
    """Writes plus what deleting rows cascades to: the tables of `on delete cascade` refs
    (recursively) and the fields of `on delete none` refs.  A table-level write may be an
    insert, which cascades nowhere: the result over-approximates, which is safe for deciding
    what to re-check."""
    result = set(writes)
    frontier = [w for w in writes if "." not in w]
    while frontier:
        table = frontier.pop()
        for info in checked.records.values():
            if info.table is None:
                continue
            for field in info.fields.values():
                target = t.strip_optional(field.type)
                if (
                    not isinstance(target, t.RefType)
                    or checked.records[target.entity].table != table
                ):
                    continue
                policy = field.decl.on_delete.text if field.decl.on_delete else "restrict"
                if policy == "cascade" and info.table not in result:
                    result.add(info.table)
                    frontier.append(info.table)
                elif policy == "none":
                    result.add(f"{info.table}.{field.name}")
    return result
