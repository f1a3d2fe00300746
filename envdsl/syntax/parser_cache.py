"""The built lark parser, pickled whole: a cold start loads it in a third of the time that
lark's own cache takes.

lark's cache (`cache=`) holds a serialised form that lark turns back into some 8,000 objects
one by one in Python on every load (30-40 ms of each cold `envdsl check`). Here the parser
lark built is pickled as it is, except its tree-building callbacks (closures, which pickle
cannot hold): they are made again after loading, as lark's own loading does. The file lives
next to lark's cache, in the directory envdsl.util.private_dirs checks is this user's alone (a
pickle runs code when it is loaded), and its name is keyed by what it was built from: the
grammar, the options, the post-lexer's source, lark's and Python's versions. Whatever goes
wrong loading or saving it, the parser is built the usual way.
"""

from __future__ import annotations

import functools
import io
import os
import pickle
import tempfile
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

from envdsl.util.private_dirs import grammar_cache_file

if TYPE_CHECKING:
    from lark import Lark

_CALLBACKS = "callbacks"
_MODULES = frozenset({"re", "regex"})  # lark's lexer keeps the regular expression module


@functools.cache
def _singletons() -> dict[str, object]:
    """Objects lark compares by identity (`action is Shift`): the loaded table must hold
    these ones. (Imported here: checking a spec never needs lark's parser, nor lark.)"""
    from lark.parsers.lalr_analysis import Reduce, Shift

    return {"Shift": Shift, "Reduce": Reduce}


def _singleton(name: str) -> object:
    return _singletons()[name]


class _Pickler(pickle.Pickler):
    def __init__(self, file: IO[bytes], callbacks: object) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.callbacks = callbacks

    def reducer_override(self, obj: Any) -> Any:
        # a call of `_singleton`, which pickle makes once and then refers to (12,000 actions)
        for name, singleton in _singletons().items():
            if obj is singleton:
                return (_singleton, (name,))
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        if obj is self.callbacks:
            return _CALLBACKS
        if isinstance(obj, ModuleType):
            return ("module", obj.__name__)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file)
        self.callbacks: dict[Any, Any] = {}  # every reference to lark's callbacks is this one

    def persistent_load(self, pid: Any) -> Any:
        if pid == _CALLBACKS:
            return self.callbacks
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "module" and pid[1] in _MODULES:
            return __import__(pid[1])
        raise pickle.UnpicklingError(f"unknown reference in the parser cache: {pid!r}")


def cache_file(key: str) -> str | None:
    """Where the parser built from `key` (the grammar and all it depends on) is kept."""
    return grammar_cache_file(key, kind="parser")


def load(path: str) -> Lark | None:
    """The parser pickled at `path`, ready to parse; None if there is none or it is unusable."""
    from lark import Lark

    try:
        with open(path, "rb") as file:
            unpickler = _Unpickler(file)
            parser = unpickler.load()
        if not isinstance(parser, Lark):
            return None
        parser._prepare_callbacks()  # lark's own step after loading its cache
        unpickler.callbacks.update(parser._callbacks)
        parser._callbacks = unpickler.callbacks
        return parser
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a damaged or outdated cache is built again
        return None


def save(parser: Lark, path: str) -> None:
    """Pickle `parser` to `path` (write and rename: a parallel process never reads half a
    file); silently nothing when it cannot be pickled or written."""
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, parser._callbacks).dump(parser)
    except Exception:  # noqa: BLE001 - a lark whose parser does not pickle: no cache
        return
    _write(buffer, path)


# what a pickle of envdsl.syntax.lalr.Tables may name: nothing else is ever loaded from it
_TABLE_GLOBALS = frozenset(
    {
        ("envdsl.syntax.lalr", "Tables"),
        ("envdsl.syntax.lalr", "_Scanner"),
        ("envdsl.syntax.postlex", "NewlinePostLexer"),
        ("re", "_compile"),
    }
)


class _TablesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _TABLE_GLOBALS:
            raise pickle.UnpicklingError(f"unexpected {module}.{name} in the parse tables")
        return super().find_class(module, name)


def tables_file(key: str) -> str | None:
    """Where the parse tables (envdsl.syntax.lalr.Tables) built from `key` are kept."""
    return grammar_cache_file(key, kind="tables")


def load_tables(path: str) -> Any:
    """The tables pickled at `path`, or None if there are none or they are unusable."""
    try:
        with open(path, "rb") as file:
            return _TablesUnpickler(file).load()
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - damaged or outdated: built again
        return None


def save_tables(tables: object, path: str) -> None:
    """Pickle the tables to `path` as `save` does a parser; nothing if that fails."""
    buffer = io.BytesIO()
    try:
        pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(tables)
    except Exception:  # noqa: BLE001 - no cache
        return
    _write(buffer, path)


def _write(buffer: io.BytesIO, path: str) -> None:
    try:
        handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(buffer.getvalue())
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
