"""Test-session setup shared by every suite."""

from __future__ import annotations

import os
import shutil
import tempfile

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


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _created:
        shutil.rmtree(directory, ignore_errors=True)
