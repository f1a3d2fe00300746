"""The lark parse-table cache (a pickle) and jinja2's bytecode cache must live where only this
user can write.

lark's default put it at a predictable name in the shared temporary directory, so whoever
created that file first ran code in every later envdsl process on the machine.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from envdsl.syntax.parse import _parser
from envdsl.util.private_dirs import grammar_cache_file as cache_file


def test_the_cache_is_a_private_directory_of_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = cache_file("grammar text")
    assert path is not None and Path(path).parent == tmp_path / "envdsl" / "lark"
    assert stat.S_IMODE(os.stat(tmp_path / "envdsl").st_mode) & 0o077 == 0
    assert stat.S_IMODE(os.stat(tmp_path / "envdsl" / "lark").st_mode) & 0o077 == 0
    assert cache_file("another grammar") != path  # keyed by the grammar


def test_a_directory_others_can_write_into_disables_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "envdsl").mkdir()
    os.chmod(tmp_path / "envdsl", 0o777)
    assert cache_file("grammar text") is None


def test_a_symlinked_directory_disables_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "envdsl").symlink_to(tmp_path / "elsewhere")
    assert cache_file("grammar text") is None


def test_the_parser_never_uses_the_shared_temporary_directory() -> None:
    cache = _parser().options.cache
    assert cache is False or (
        isinstance(cache, str)
        and not os.path.dirname(cache) == tempfile.gettempdir()
        and "lark_cache" not in cache
    )


def test_the_template_cache_is_private_too() -> None:
    from envdsl.codegen.emit import _templates

    cache = _templates().bytecode_cache
    directory = getattr(cache, "directory", None)
    assert cache is None or (
        directory is not None and os.path.dirname(directory) != tempfile.gettempdir()
    )
