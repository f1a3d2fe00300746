"""compiled/ holds exactly what `envdsl compile examples/*.env -o compiled` generates today.

Every example is regenerated into a temporary directory and compared byte for byte with the
committed files. To keep the suite fast the regeneration reuses the session's compile of each
example (shared with the end-to-end tests) and writes the files the way `envdsl compile` does;
one test runs the real command and checks that it writes the same bytes, another runs it in
a fresh interpreter with a different hash seed.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import example_specs
from envdsl.cli import main
from test_examples_e2e import compiled, example

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
NAMES = [p.stem for p in EXAMPLES]  # the spec files; compiled/ uses the env's module name
COMPILED = REPO / "compiled"
FIX = "compiled/ is out of date; run: envdsl compile examples/*.env -o compiled"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("compiled")
    for name in NAMES:
        result = compiled(name)
        assert result.ok, f"examples/{name}.env does not compile"
        source = result.artifacts["module"]
        schemas = example(name)().tool_schemas()
        module = result.artifacts["name"]
        (target / f"{module}.py").write_text(source, encoding="utf-8")
        tools = json.dumps(schemas, indent=2, ensure_ascii=False) + "\n"
        (target / f"{module}.tools.json").write_text(tools, encoding="utf-8")
    return target


def module_name(name: str) -> str:
    return compiled(name).artifacts["name"]


def test_regeneration_matches_the_real_command(regenerated: Path, tmp_path: Path) -> None:
    spec = REPO / "examples" / "sleep_tracking.env"
    files = [str(spec), *map(str, example_specs.TASK_FILES["sleep_tracking"])]
    outcome = CliRunner().invoke(main, ["compile", *files, "-o", str(tmp_path)])
    assert outcome.exit_code == 0, outcome.output
    for suffix in (".py", ".tools.json"):
        written = (tmp_path / f"sleep_tracking{suffix}").read_bytes()
        assert written == (regenerated / f"sleep_tracking{suffix}").read_bytes()


def test_compiled_holds_no_stale_or_missing_files() -> None:
    expected = {f"{module_name(n)}{suffix}" for n in NAMES for suffix in (".py", ".tools.json")}
    present = {p.name for p in COMPILED.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert not expected - present, f"missing {sorted(expected - present)}; {FIX}"
    assert not present - expected, f"stale {sorted(present - expected)}: no such example; {FIX}"


@pytest.mark.parametrize("suffix", [".py", ".tools.json"])
@pytest.mark.parametrize("name", NAMES)
def test_compiled_file_is_current(regenerated: Path, name: str, suffix: str) -> None:
    name = module_name(name)
    fresh = (regenerated / f"{name}{suffix}").read_bytes()
    committed_path = COMPILED / f"{name}{suffix}"
    assert committed_path.exists(), f"compiled/{name}{suffix} is missing; {FIX}"
    committed = committed_path.read_bytes()
    if fresh != committed:
        diff = difflib.unified_diff(
            committed.decode("utf-8").splitlines(keepends=True),
            fresh.decode("utf-8").splitlines(keepends=True),
            f"compiled/{name}{suffix}",
            "regenerated",
        )
        shown = "".join(list(diff)[:40])
        pytest.fail(f"compiled/{name}{suffix} differs from the generated code; {FIX}\n{shown}")


def test_generation_does_not_depend_on_the_hash_seed(regenerated: Path, tmp_path: Path) -> None:
    """Sets in the compiler (transitions, effects) must not leak their order into the output."""
    env = dict(os.environ, PYTHONHASHSEED="12345")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    spec = REPO / "examples" / "library_lending.env"
    files = [str(spec), *map(str, example_specs.TASK_FILES["library_lending"])]
    done = subprocess.run(
        [sys.executable, "-m", "envdsl", "compile", *files, "-o", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for suffix in (".py", ".tools.json"):
        again = (tmp_path / f"library_lending{suffix}").read_bytes()
        assert again == (regenerated / f"library_lending{suffix}").read_bytes()
