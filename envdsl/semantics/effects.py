"""Stage 5: effects: what each fn, tool and invariant reads and writes, closed over calls.

The type checker records each body's own reads, writes and calls (and rejects writes where
they are not allowed); this stage adds what callees do, so a tool's summary is complete,
and rejects recursion, which would let a call run without bound.
"""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.model import CheckedSpec, Effects


def close_effects(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    callables = checked.callables
    reported: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        for callee in sorted(checked.effects.get(name, Effects()).calls):
            if callee not in callables:
                continue
            if callee in path:
                cycle = path[path.index(callee) :] + [callee]
                first = cycle[0]
                if first not in reported:
                    reported.add(first)
                    decl = callables[first].decl
                    sink.report(
                        codes.RECURSIVE_CALL,
                        (
                            f"'{first}' calls itself"
                            if len(cycle) == 2
                            else f"recursive calls: {' -> '.join(cycle)}"
                        ),
                        decl.name.span,
                        help="there is no recursion, so that every call terminates; "
                        "use a `for` loop over a collection",
                    )
                continue
            visit(callee, path + [callee])

    for name in callables:
        visit(name, [name])

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
