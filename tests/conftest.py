"""Test-session setup shared by every suite."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable

import pytest

_created: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # Loaded environments are written to a module cache (envdsl.generated.cached); the suites load
    # thousands of generated specs, which must not pile up in the user's ~/.cache. Workers the
    # tests spawn inherit the variable, so they import from the same directory.
    if "ENVDSL_CACHE_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="envdsl-test-cache-")
        _created.append(directory)
        os.environ["ENVDSL_CACHE_DIR"] = directory
    # black is most of what compiling a spec costs (3-5 s for an example's module), and the
    # suites generate the same module many times over: in several files, and in each worker's
    # collection. Its output depends on its input alone, so every worker of the session shares
    # one store of formatted modules; what a test gets is byte for byte what black returns.
    if "ENVDSL_TEST_BLACK_STORE" not in os.environ:
        directory = tempfile.mkdtemp(prefix="envdsl-test-black-")
        _created.append(directory)
        os.environ["ENVDSL_TEST_BLACK_STORE"] = directory
    import envdsl.codegen.format as formatting

    formatting.format_python = _stored(
        formatting.format_python, os.environ["ENVDSL_TEST_BLACK_STORE"]
    )


def _stored(format_python: Callable[[str], str], directory: str) -> Callable[[str], str]:
    """format_python, run once per distinct source in the session (a worker formatting a
    source waits for another worker formatting the same one); its errors are not stored."""

    def format_once(source: str) -> str:
        key = hashlib.sha256(source.encode("utf-8")).hexdigest()
        path = os.path.join(directory, f"{key}.py")
        with open(f"{path}.lock", "ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if os.path.exists(path):
                with open(path, "rb") as stored:
                    return stored.read().decode("utf-8")
            formatted = format_python(source)
            with open(f"{path}.part", "wb") as part:
                part.write(formatted.encode("utf-8"))
            os.replace(f"{path}.part", path)
            return formatted

    return format_once


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _created:
        shutil.rmtree(directory, ignore_errors=True)
