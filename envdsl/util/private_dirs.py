"""Where envdsl may keep caches that are code: lark's parse tables and the built parser
(pickles) and jinja2's compiled template (marshalled bytecode).  Whoever can write such a
file runs code in every envdsl process that loads it.

lark's default (`cache=True`) is a predictable name in the shared temporary directory, which
any local user can create first.  The caches live instead in `$XDG_CACHE_HOME/envdsl` (or
`~/.cache/envdsl`), created with mode 0700 and used only if it really is a directory of this
user that no one else may write into.  Otherwise there is no cache: slower starts, never unsafe.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import stat
import sys
from pathlib import Path


def private_dir(name: str) -> str | None:
    """`<user cache>/envdsl/<name>`, created if needed; None when it is not safely ours."""
    try:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    except RuntimeError:  # no home directory
        return None
    directory = os.path.join(base, "envdsl")
    for path in (directory, os.path.join(directory, name)):
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:  # a read-only file system
            return None
        if not is_private(path):
            return None
    return os.path.join(directory, name)


def is_private(path: str) -> bool:
    """Whether `path` is a directory (not a symlink) of this user that no one else may write
    into (0755 is fine)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
        return False
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


def grammar_cache_file(grammar: str, kind: str = "grammar") -> str | None:
    """lark's cache file for this grammar, lark and Python version; None when unsafe.
    `kind` names another cache of the same key (envdsl.syntax.parser_cache: "parser",
    "tables")."""
    version = _lark_version()
    directory = private_dir("lark")
    if directory is None or version is None:
        return None
    key = f"{grammar}\0{version}\0{sys.version}".encode()
    return os.path.join(directory, f"{kind}-{hashlib.sha256(key).hexdigest()[:32]}.pickle")


_VERSION = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE)


def _lark_version() -> str | None:
    """lark's `__version__`, read from its `__init__.py` when lark is not imported yet: the
    cached parse tables spare a check importing lark at all (a third of a cold start)."""
    module = sys.modules.get("lark")
    if module is not None:
        return str(module.__version__)
    try:
        spec = importlib.util.find_spec("lark")
        if spec is None or spec.origin is None:
            return None
        found = _VERSION.search(Path(spec.origin).read_text(encoding="utf-8"))
    except (ImportError, OSError, ValueError):
        return None
    return found.group(1) if found is not None else None
