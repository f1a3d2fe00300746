"""The content-addressed cache of generated modules behind `envdsl.generated.cached` (see there).

Whoever can write into this directory (or its `__pycache__`) runs code in every process that
loads an environment from it, so, like the parse-table caches (envdsl.util.private_dirs), it is
used only while it is a directory of this user that no one else may write into; otherwise
modules run in memory (they then pickle only within the process). It holds at most
MAX_MODULES modules: storing a new one removes the oldest, so loading thousands of distinct
specs does not fill the disk. A removed module is written again when it is next loaded.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

from envdsl.util.private_dirs import is_private

PACKAGE = "envdsl.generated.cached"
MAX_MODULES = 512  # about 30 MiB of sources and as much bytecode for specs of examples' size
_STALE_TEMPORARY_SECONDS = 3600  # a write older than this was left by a process that died


def cache_dir() -> Path:
    configured = os.environ.get("ENVDSL_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "envdsl" / "generated"


def module_name(source: str, name: str) -> str:
    """The importable name of a generated module: its content, not its file, decides it, so
    two specs with the same file stem never replace each other in sys.modules."""
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    return f"{PACKAGE}.{name}_{digest}"


def store(full_name: str, source: str) -> bool:
    """Write a module's source into the cache (once: the name is its content) and make sure
    `envdsl.generated.cached` looks there; False when the directory cannot be written."""
    directory = cache_dir()
    target = directory / (full_name.rsplit(".", 1)[1] + ".py")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # private to the user
        if not usable(directory):
            return False
        # the name says what the file must hold: a file that holds anything else (changed by
        # hand, or planted) is replaced, never imported
        if not target.exists() or target.read_text(encoding="utf-8") != source:
            # write then rename: parallel workers must never import a half-written file
            handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(source)
            os.replace(temporary, target)
            importlib.invalidate_caches()  # a finder may have listed the directory before
            prune(directory, keep=target.name)
    except (OSError, UnicodeDecodeError):
        return False
    # the package computes its path from cache_dir() when first imported; once imported, it
    # learns a new directory here (looked up, not imported: the package imports this module)
    package = sys.modules.get(PACKAGE)
    if package is not None and str(directory) not in package.__path__:
        package.__path__.append(str(directory))
    return True


def usable(directory: Path) -> bool:
    """Whether modules may be imported from `directory`: it and its bytecode directory (when
    there is one) are this user's alone."""
    bytecode = directory / "__pycache__"
    return is_private(str(directory)) and (not bytecode.exists() or is_private(str(bytecode)))


def prune(directory: Path, keep: str) -> None:
    """Remove the oldest modules (and their bytecode) beyond MAX_MODULES, never `keep`, and
    temporary files that writers which died left behind. Another process pruning at the same
    time removes some of the same files: whatever is gone already is skipped."""
    modules: list[tuple[float, str]] = []
    stale = time.time() - _STALE_TEMPORARY_SECONDS
    with os.scandir(directory) as entries:
        for entry in entries:
            if not entry.is_file(follow_symlinks=False):
                continue
            modified = entry.stat(follow_symlinks=False).st_mtime
            if entry.name.endswith(".py") and entry.name != keep:
                modules.append((modified, entry.name))
            elif entry.name.endswith(".tmp") and modified < stale:
                _remove(directory / entry.name)
    excess = len(modules) + 1 - MAX_MODULES
    if excess <= 0:
        return
    modules.sort()
    for _, name in modules[:excess]:
        _remove(directory / name)
        stem = name[: -len(".py")]
        for compiled in (directory / "__pycache__").glob(f"{stem}.*.pyc"):
            _remove(compiled)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
