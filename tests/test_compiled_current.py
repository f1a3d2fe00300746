"""compiled/ holds exactly what `envdsl compile examples/*.env -o compiled` generates today.

The examples are regenerated into a temporary directory with the real command (in process)
and compared byte for byte with the committed files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from envdsl.cli import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.env"))
COMPILED = REPO / "compiled"
FIX = "compiled/ is out of date; run: envdsl compile examples/*.env -o compiled"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("compiled")
    outcome = CliRunner().invoke(
        main, ["compile", *[str(p) for p in EXAMPLES], "-o", str(target)], catch_exceptions=False
    )
    assert outcome.exit_code == 0, outcome.output
    return target


def test_every_example_was_regenerated(regenerated: Path) -> None:
    expected = {f"{p.stem}{suffix}" for p in EXAMPLES for suffix in (".py", ".tools.json")}
    assert {p.name for p in regenerated.iterdir()} == expected


def test_compiled_holds_no_stale_files() -> None:
    expected = {f"{p.stem}{suffix}" for p in EXAMPLES for suffix in (".py", ".tools.json")}
    present = {p.name for p in COMPILED.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert present == expected, f"{FIX} (and delete files of removed examples)"


@pytest.mark.parametrize("suffix", [".py", ".tools.json"])
@pytest.mark.parametrize("name", [p.stem for p in EXAMPLES])
def test_compiled_file_is_current(regenerated: Path, name: str, suffix: str) -> None:
    fresh = (regenerated / f"{name}{suffix}").read_bytes()
    committed_path = COMPILED / f"{name}{suffix}"
    assert committed_path.exists(), f"compiled/{name}{suffix} is missing; {FIX}"
    committed = committed_path.read_bytes()
    if fresh != committed:
        import difflib

        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.decode("utf-8").splitlines(keepends=True),
                    fresh.decode("utf-8").splitlines(keepends=True),
                    f"compiled/{name}{suffix}",
                    "regenerated",
                )
            )[:40]
        )
        pytest.fail(f"compiled/{name}{suffix} differs from the generated code; {FIX}\n{diff}")


def test_generation_is_deterministic(regenerated: Path, tmp_path: Path) -> None:
    """A second run gives the same bytes (no timestamps, no set order, no object ids)."""
    spec = REPO / "examples" / "sleep_tracking.env"
    outcome = CliRunner().invoke(main, ["compile", str(spec), "-o", str(tmp_path)])
    assert outcome.exit_code == 0, outcome.output
    for suffix in (".py", ".tools.json"):
        again = (tmp_path / f"sleep_tracking{suffix}").read_bytes()
        assert again == (regenerated / f"sleep_tracking{suffix}").read_bytes()


def test_generation_does_not_depend_on_the_hash_seed(regenerated: Path, tmp_path: Path) -> None:
    """Sets in the compiler (transitions, effects) must not leak their order into the output."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONHASHSEED="12345")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    spec = REPO / "examples" / "library_lending.env"
    done = subprocess.run(
        [sys.executable, "-m", "envdsl", "compile", str(spec), "-o", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for suffix in (".py", ".tools.json"):
        again = (tmp_path / f"library_lending{suffix}").read_bytes()
        assert again == (regenerated / f"library_lending{suffix}").read_bytes()
