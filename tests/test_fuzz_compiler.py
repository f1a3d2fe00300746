"""Bounded fuzzing of the compiler with adversarial mutants of the examples (tests/spec_mutations.py):
deep nesting, huge literals, adversarial renamings, odd characters and line ends, escaping
`init from` paths.  Every mutant is answered within the time limit, with no internal error, no
escaped exception, and a clean one yields a module that imports.

Derandomized for CI; ENVDSL_FUZZ_MUTANTS sets the count, benchmarks/fuzz_compiler.py is the
long run.
"""

from __future__ import annotations

import os
import random

import pytest

from spec_mutations import MUTATIONS, mutant, run_one

COUNT = int(os.environ.get("ENVDSL_FUZZ_MUTANTS", "40"))


@pytest.mark.parametrize("seed", range(COUNT))
def test_a_mutant_is_answered_quickly_and_cleanly(seed: int) -> None:
    example, mutations, text = mutant(random.Random(f"fuzz:{seed}"))
    outcome = run_one(text, limit=20.0)
    assert not outcome.failure, (example, mutations, outcome.failure)
    assert outcome.seconds < 10.0, (example, mutations, outcome.seconds)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_changes_the_spec(name: str) -> None:
    rng = random.Random(name)
    text = mutant(rng)[2]  # any example
    changed = sum(MUTATIONS[name](text, random.Random(i)) != text for i in range(5))
    assert changed >= 1


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_accepts_an_emptied_spec(name: str) -> None:
    """A truncation may leave nothing for the next mutation to work on."""
    for text in ("", "\n", "x"):
        assert isinstance(MUTATIONS[name](text, random.Random(1)), str)
