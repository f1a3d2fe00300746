"""The content-addressed cache of generated modules behind `envdsl.cached` (see there)."""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
from pathlib import Path

PACKAGE = "envdsl.cached"


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
    `envdsl.cached` looks there; False when the directory cannot be written."""
    import envdsl.cached as package

    directory = cache_dir()
    target = directory / (full_name.rsplit(".", 1)[1] + ".py")
    try:
        # the name says what the file must hold: a file that holds anything else (changed by
        # hand, or planted) is replaced, never imported
        if not target.exists() or target.read_text(encoding="utf-8") != source:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # private to the user
            # write then rename: parallel workers must never import a half-written file
            handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(source)
            os.replace(temporary, target)
            importlib.invalidate_caches()  # a finder may have listed the directory before
    except (OSError, UnicodeDecodeError):
        return False
    if str(directory) not in package.__path__:
        package.__path__.append(str(directory))
    return True
