"""`init from` reads only small regular JSON files inside the spec's directory, never blocks.

A spec is untrusted (an LLM writes it) and the file's content goes into the compiled module and
the agent's state: before these checks `init from "/etc/..."` or `"../.."` pulled in any file,
`"/dev/stdin"` hung `envdsl check` and `"/dev/zero"` ate memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from envdsl.pipeline import check_file
from envdsl.tasks.init_files import MAX_INIT_BYTES, read_init_file

SPEC = """env Counter {
  \"\"\"A counter.\"\"\"
  state {
    count: int = 0
  }
  action add(n: int) {
    \"\"\"Add n to the counter.\"\"\"
    count += n
  }
  task add_five {
    \"\"\"Add five to the counter.\"\"\"
    init from PATH
    solution { add(n=5) }
    check "the counter is five": count == 5
  }
}
"""


def codes_for(spec_dir: Path, path: str) -> list[str]:
    spec = spec_dir / "counter.env"
    spec.write_text(SPEC.replace("PATH", json.dumps(path)), encoding="utf-8")
    return [d.code.code for d in check_file(spec).diagnostics]


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    inside = tmp_path / "spec"
    inside.mkdir()
    (inside / "data").mkdir()
    (inside / "data" / "ok.json").write_text('{"count": 0}', encoding="utf-8")
    (tmp_path / "secret.json").write_text('{"count": 0}', encoding="utf-8")
    return inside


def test_a_file_inside_the_spec_directory_is_read(spec_dir: Path) -> None:
    assert codes_for(spec_dir, "data/ok.json") == []
    assert codes_for(spec_dir, "./data/../data/ok.json") == []


@pytest.mark.parametrize("path", ["/etc/hostname", "/dev/stdin", "/dev/zero", "~/x.json"])
def test_absolute_paths_are_refused(spec_dir: Path, path: str) -> None:
    assert codes_for(spec_dir, path) == ["E4020"]


def test_climbing_out_is_refused(spec_dir: Path) -> None:
    assert codes_for(spec_dir, "../secret.json") == ["E4020"]
    assert codes_for(spec_dir, "data/../../secret.json") == ["E4020"]


def test_a_symlink_out_is_refused(spec_dir: Path) -> None:
    (spec_dir / "link.json").symlink_to(spec_dir.parent / "secret.json")
    (spec_dir / "zero.json").symlink_to("/dev/zero")
    assert codes_for(spec_dir, "link.json") == ["E4020"]
    assert codes_for(spec_dir, "zero.json") == ["E4020"]


def test_a_symlink_inside_is_followed(spec_dir: Path) -> None:
    (spec_dir / "alias.json").symlink_to(spec_dir / "data" / "ok.json")
    assert codes_for(spec_dir, "alias.json") == []


def test_a_fifo_is_refused_without_blocking(spec_dir: Path) -> None:
    os.mkfifo(spec_dir / "pipe.json")
    assert codes_for(spec_dir, "pipe.json") == ["E4021"]


def test_a_directory_is_refused(spec_dir: Path) -> None:
    assert codes_for(spec_dir, "data") == ["E4021"]


def test_a_file_over_the_size_limit_is_refused_without_reading_it_all(spec_dir: Path) -> None:
    big = spec_dir / "big.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_INIT_BYTES * 4)  # sparse: no disk used
    loaded = read_init_file(str(spec_dir / "counter.env"), "big.json")
    assert loaded.code is not None and loaded.code.code == "E4021"
    assert "larger than" in loaded.problem


def test_a_deeply_nested_file_is_a_diagnostic(spec_dir: Path) -> None:
    (spec_dir / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert codes_for(spec_dir, "deep.json") == ["E4002"]
