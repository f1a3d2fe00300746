"""The module cache behind `envdsl.generated.cached` (envdsl/generated/module_cache.py): used only while it is this
user's alone, and bounded.

Whoever can write into it runs code in every process that loads an environment, as with the
parse-table caches (tests/test_private_cache.py). And `envdsl.load`, `explore` and `run` write
one module per distinct spec: a loop over thousands of generated specs must not fill the disk.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from envdsl.generated import module_cache as cache
from envdsl.generated.modules import load_module

SOURCE = "VALUE = {}\n"


def _stored_name(value: int) -> str:
    return cache.module_name(SOURCE.format(value), "cached")


def _file(directory: Path, full_name: str) -> Path:
    return directory / (full_name.rsplit(".", 1)[1] + ".py")


@pytest.fixture
def directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "generated"
    monkeypatch.setenv("ENVDSL_CACHE_DIR", str(path))
    return path


def test_the_cache_directory_is_created_private(directory: Path) -> None:
    assert cache.store(_stored_name(1), SOURCE.format(1))
    assert directory.stat().st_mode & 0o077 == 0
    assert _file(directory, _stored_name(1)).read_text(encoding="utf-8") == SOURCE.format(1)


@pytest.mark.parametrize("where", ["directory", "bytecode directory"])
def test_a_directory_others_can_write_into_is_not_used(directory: Path, where: str) -> None:
    directory.mkdir()
    shared = directory if where == "directory" else directory / "__pycache__"
    shared.mkdir(exist_ok=True)
    os.chmod(shared, 0o777)
    source = "VALUE = 'ours'\n"
    name = cache.module_name(source, "shared")
    # what another user could have put there under the name the source will have
    _file(directory, name).write_text("VALUE = 'planted'\n", encoding="utf-8")
    assert not cache.store(name, source)
    assert _file(directory, name).read_text(encoding="utf-8") == "VALUE = 'planted'\n"
    module = load_module(source, "shared")  # runs in memory instead
    try:
        assert module.VALUE == "ours"
    finally:
        sys.modules.pop(module.__name__, None)


def test_a_symlinked_directory_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "generated").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("ENVDSL_CACHE_DIR", str(tmp_path / "generated"))
    assert not cache.store(_stored_name(1), SOURCE.format(1))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_storing_past_the_limit_removes_the_oldest_modules_and_their_bytecode(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_MODULES", 3)
    for value in range(3):
        assert cache.store(_stored_name(value), SOURCE.format(value))
        os.utime(_file(directory, _stored_name(value)), (1_000 + value, 1_000 + value))
    bytecode = directory / "__pycache__"
    bytecode.mkdir()
    oldest = _file(directory, _stored_name(0)).stem
    (bytecode / f"{oldest}.cpython-311.pyc").write_bytes(b"")
    (bytecode / f"{_file(directory, _stored_name(1)).stem}.cpython-311.pyc").write_bytes(b"")

    assert cache.store(_stored_name(3), SOURCE.format(3))

    left = sorted(path.name for path in directory.glob("*.py"))
    assert left == sorted(_file(directory, _stored_name(v)).name for v in (1, 2, 3))
    assert [path.name for path in bytecode.iterdir()] == [
        f"{_file(directory, _stored_name(1)).stem}.cpython-311.pyc"
    ]


def test_storing_a_module_already_there_removes_nothing(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_MODULES", 2)
    for value in range(2):
        assert cache.store(_stored_name(value), SOURCE.format(value))
    assert cache.store(_stored_name(0), SOURCE.format(0))
    assert len(list(directory.glob("*.py"))) == 2


def test_a_removed_module_is_written_again_when_it_is_loaded(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_MODULES", 1)
    first = cache.module_name("VALUE = 'first'\n", "again")
    assert cache.store(first, "VALUE = 'first'\n")
    assert cache.store(_stored_name(1), SOURCE.format(1))
    assert not _file(directory, first).exists()
    module = load_module("VALUE = 'first'\n", "again")
    try:
        assert module.VALUE == "first" and _file(directory, first).exists()
    finally:
        sys.modules.pop(module.__name__, None)


def test_temporary_files_left_by_dead_writers_are_removed(directory: Path) -> None:
    directory.mkdir(mode=0o700)
    stale, fresh = directory / "dead.tmp", directory / "writing.tmp"
    for path in (stale, fresh):
        path.write_text("VALUE = ", encoding="utf-8")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    assert cache.store(_stored_name(1), SOURCE.format(1))
    assert not stale.exists() and fresh.exists()  # another process may be writing that one
