"""The pickled parser (envdsl/syntax/parser_cache.py) parses as the parser lark builds: the
same trees, the same positions, the same errors; a damaged cache file is built again; the
file is private to the user."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from envdsl.syntax import parse, parser_cache

REPO = Path(__file__).resolve().parent.parent
# every example and every third fixture (sorted, so each kind of diagnostic is met): the two
# parsers share their tables, so what differs would differ on most texts, and lark's own parse
# of these twice over was a minute of a loaded machine's suite
FIXTURES = sorted(REPO.glob("tests/fixtures/**/*.env"))
TEXTS = sorted([*REPO.glob("examples/*.env"), *FIXTURES[::3]])


def _shape(node: Any) -> Any:
    """A tree with every position lark propagated (the spans the builder reads)."""
    if isinstance(node, Token):
        return (node.type, str(node), node.start_pos, node.end_pos)
    if isinstance(node, Tree):
        meta = node.meta
        where = None if meta.empty else (meta.start_pos, meta.end_pos, meta.line, meta.column)
        return (str(node.data), where, tuple(_shape(child) for child in node.children))
    return node


def _outcome(parser: Lark, text: str, start: str = "start") -> Any:
    try:
        return _shape(parser.parse(text, start=start))
    except UnexpectedInput as error:
        return (type(error).__name__, str(error), getattr(error, "pos_in_stream", None))


@pytest.fixture()
def pickled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Lark, Lark, str]:
    """(the parser loaded from the pickle, the one lark built, the pickle's path)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = parse._parser.__wrapped__()  # builds with lark and writes the pickle
    files = list((tmp_path / "envdsl" / "lark").glob("parser-*.pickle"))
    assert len(files) == 1
    loaded = parser_cache.load(str(files[0]))
    assert loaded is not None and loaded is not built
    return loaded, built, str(files[0])


def test_the_loaded_parser_parses_as_the_built_one(pickled: tuple[Lark, Lark, str]) -> None:
    loaded, built, _ = pickled
    assert len(TEXTS) > 60
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        assert _outcome(loaded, text) == _outcome(built, text), path
        broken = text[: len(text) // 2]  # an error in the middle of a declaration
        assert _outcome(loaded, broken) == _outcome(built, broken), path
    for expression in ("a.b[c] + f(x, y=2) * -3 ** 2", "x if y else z", "[k for k in ks if k]"):
        assert _outcome(loaded, expression, "expr") == _outcome(built, expression, "expr")
    assert [(t.type, t.start_pos) for t in loaded.lex("env E {\n}\n")] == [
        (t.type, t.start_pos) for t in built.lex("env E {\n}\n")
    ]


def test_the_pickle_is_private_and_a_damaged_one_is_built_again(
    pickled: tuple[Lark, Lark, str],
) -> None:
    _, _, path = pickled
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0
    Path(path).write_bytes(b"not a pickle")
    assert parser_cache.load(path) is None
    assert (
        parse._parser.__wrapped__().parse("env E {\n}\n", start="start") is not None
    )  # rebuilt, re-saved
    assert parser_cache.load(path) is not None


def test_no_pickle_where_others_may_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "envdsl").mkdir()
    os.chmod(tmp_path / "envdsl", 0o777)
    assert parser_cache.cache_file("grammar") is None
    assert parse._parser.__wrapped__().parse("env E {\n}\n", start="start") is not None
    assert not list(tmp_path.rglob("*.pickle"))


def test_the_pickled_tables_parse_as_the_built_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast parse's tables (envdsl/syntax/lalr.py) are pickled apart from lark's parser,
    so that a cold start loads no lark objects: loaded, they build the same trees."""
    from envdsl.syntax import lalr
    from test_lalr import _fast_error, _fast_shape

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = parse._tables.__wrapped__()  # builds and writes the pickle
    (path,) = (tmp_path / "envdsl" / "lark").glob("tables-*.pickle")
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0
    loaded = parser_cache.load_tables(str(path))
    assert isinstance(loaded, lalr.Tables) and loaded is not built
    assert parse._tables.__wrapped__() is not built  # a second start reads the pickle
    for text_path in TEXTS:
        text = text_path.read_text(encoding="utf-8")
        for part in (text, text[: len(text) // 2]):
            fast, slow = lalr.parse(loaded, part, "start"), lalr.parse(built, part, "start")
            if isinstance(fast, lalr.Rejected) or isinstance(slow, lalr.Rejected):
                assert _fast_error(fast) == _fast_error(slow), text_path  # type: ignore[arg-type]
            else:
                assert _fast_shape(fast[0]) == _fast_shape(slow[0]), text_path
    path.write_bytes(b"not a pickle")
    assert parser_cache.load_tables(str(path)) is None
    assert isinstance(parse._tables.__wrapped__(), lalr.Tables)  # built again


def test_the_tables_pickle_may_name_only_the_tables_classes(tmp_path: Path) -> None:
    import pickle

    path = tmp_path / "tables.pickle"
    path.write_bytes(pickle.dumps(os.system))
    assert parser_cache.load_tables(str(path)) is None
