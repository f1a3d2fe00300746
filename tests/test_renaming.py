"""Alpha-equivalence: random renamings of every identifier in every example behave the same.

For each example, a consistent renaming of its declared names (a mix of random names and names
of Python machinery: `class`, `mro`, `_tmp1`, `C_RATE`, `SITES`...) must compile with the same
diagnostic codes, and each task's solution must give the same results, the same final state and
the same check outcomes, once the renamed names are mapped back.  A difference is a name that
captured another in the generated code.  ENVDSL_RENAMINGS sets the renamings per example.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path
from typing import Any

import example_specs
import pytest
from renaming import canonical, rename, renaming

from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.tasks.task_files import is_task_file
from envdsl.util.source import SourceFile

TESTS = Path(__file__).resolve().parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
# every fourth fixture (each holds one mistake); not those whose diagnostics depend on how close
# a wrong name is to a right one (a typo gets "did you mean", a random name a second report)
SIMILARITY_BASED = {"unknown_argument_in_constructor"}
FIXTURES = [
    path
    for path in sorted(TESTS.glob("fixtures/*/*.env"))[::4]
    if path.stem not in SIMILARITY_BASED and not is_task_file(path)  # renamed without its env
]
RENAMINGS = int(os.environ.get("ENVDSL_RENAMINGS", "1"))


def behaviour(
    text: str, path: Path, inverse: dict[str, str], formatted: bool = True
) -> dict[str, Any]:
    """Diagnostic codes, and per task: the solution's results, final state and checks."""
    result = compile_source(SourceFile(str(path), text), formatted=formatted)
    codes = sorted(d.code.code for d in result.diagnostics)
    if not result.ok:
        return {"codes": codes}
    env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
    tasks = {}
    for task in sorted(type(env).TASKS):
        results = env.solve(task)
        tasks[inverse.get(task, task)] = {
            "results": canonical(results, inverse),
            "state": canonical(env.state_json(), inverse),
            "evaluation": canonical(env.evaluate(), inverse),
        }
    return {"codes": codes, "tasks": tasks}


@pytest.mark.parametrize("seed", range(RENAMINGS))
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_renaming_preserves_behaviour(path: Path, seed: int) -> None:
    text = path.read_text(encoding="utf-8")
    mapping = renaming(text, path.parent, random.Random(f"{path.stem}:{seed}"))
    assert len(mapping) > 20  # the renaming reaches most of the spec's names
    inverse = {new: old for old, new in mapping.items()}
    renamed_path = path.with_name(f"renamed_{path.name}")  # same directory: `init from` works
    # black runs on the renamed module (it must take the names a renaming gives); the original
    # is only executed, as envdsl.load does (black changes no behaviour, and formatting an
    # example's module was a third of this file's time)
    original = behaviour(text, path, {}, formatted=False)
    renamed = behaviour(rename(text, mapping), renamed_path, inverse)
    assert renamed == original, {k: v for k, v in mapping.items()}


@pytest.mark.parametrize("path", FIXTURES, ids=[f"{p.parent.name}/{p.stem}" for p in FIXTURES])
def test_renaming_a_fixture_gives_the_same_diagnostics(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    mapping = renaming(text, path.parent, random.Random(path.stem))
    for tool in re.findall(r"\b(?:query|action)\s+(\w+)", text):
        mapping.pop(tool, None)  # W5002 reads a query's name: `delete_user` must stay a verb
    renamed = path.with_name(f"renamed_{path.name}")
    original = compile_source(SourceFile(str(path), text)).diagnostics
    after = compile_source(SourceFile(str(renamed), rename(text, mapping))).diagnostics
    assert sorted(d.code.code for d in after) == sorted(d.code.code for d in original), mapping
