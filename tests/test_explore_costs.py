"""What an exploration run leaves to the garbage collector and to hypothesis.

Two costs explore once paid on every run without needing them: each failed call's exception
in a reference cycle (the rule's local held it, and its traceback's frames link back to the
rule's frame), so the collector, not the reference count, freed it with its tracebacks and
frames; and hypothesis's digest of the machine's source, for which `inspect` parses the whole
module a class is defined in.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import Phase

import envdsl
import example_specs
from envdsl.explore.explorer import ExploreOptions, Explorer
from envdsl.runtime.errors import Fail

ONLINE_SHOP = example_specs.REPO / "examples" / "online_shop.env"


@pytest.fixture
def collected() -> Iterator[list[Any]]:
    """What the collector finds unreachable while the test runs (kept, not freed)."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_failed_calls_leave_no_cycle(collected: list[Any]) -> None:
    explorer = Explorer(envdsl.load(ONLINE_SHOP), ExploreOptions(max_calls=300, seed=0))
    gc.collect()
    collected.clear()  # (the environments that worked out the starts, left behind)
    assert explorer.run_machine(6, (Phase.generate,)) is None
    failed = sum(count for (_, outcome, _), count in explorer.outcomes.items() if outcome)
    assert failed > 50  # (calls that raised a Fail inside the tool, among them)
    gc.collect()
    # nor does an environment that is let go (a determinism twin) with its last failure: the
    # environment keeps no traceback of it (Environment._failed), whose frames held it
    assert [o for o in collected if isinstance(o, Fail)] == []


def test_a_machine_run_parses_no_module(monkeypatch: pytest.MonkeyPatch) -> None:
    # (hypothesis parses the source of its own test function, a few lines, on every run)
    explorer = Explorer(envdsl.load(ONLINE_SHOP), ExploreOptions(max_calls=100, seed=0))
    explorer.run_machine(1, (Phase.generate,))  # (anything imported on first use, imported)
    parsed: list[str] = []
    parse = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(str(source))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    assert explorer.run_machine(2, (Phase.generate,)) is None
    assert parsed and not [source for source in parsed if "class ExploreReport" in source]
