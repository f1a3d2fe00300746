"""An internal error (E9001) points at the construct the compiler was processing, not at line 1.

The compiler is made to fail on purpose (a stage's method replaced by one that raises), once in
the checker and once in the code generator.
"""

from __future__ import annotations

import pytest

from envdsl.codegen.translate import Translator
from envdsl.pipeline import compile_source
from envdsl.semantics.check_expr import ExprChecker
from envdsl.util.source import SourceFile

SPEC = '''env Sums {
  """Sums."""
  query total(a: int, b: int) -> int {
    """The total."""
    let doubled = a * 2
    return doubled + b
  }
}
'''


def broken(*args: object) -> str:
    raise RuntimeError("broken on purpose")


@pytest.mark.parametrize(
    "owner, method", [(ExprChecker, "visit_Binary"), (Translator, "visit_Binary")]
)
def test_an_internal_error_points_at_the_construct(
    monkeypatch: pytest.MonkeyPatch, owner: type, method: str
) -> None:
    monkeypatch.setattr(owner, method, broken)
    result = compile_source(SourceFile("sums.env", SPEC))
    [diagnostic] = result.diagnostics
    assert diagnostic.code.code == "E9001"
    start = result.sources.get("sums.env").position(diagnostic.span.start)
    assert start.line == 5  # `a * 2`, the first binary expression
