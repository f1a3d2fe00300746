"""`envdsl lsp`: the server started as `python -m envdsl lsp`, driven by pygls's own
LanguageClient over its stdin/stdout pipe. Every wait has a timeout, so a broken server fails
the test instead of hanging it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import pytest

lsp = pytest.importorskip("lsprotocol.types")
from pygls.lsp.client import LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0
T = TypeVar("T")

SPEC = '''env Shop {
  """A tiny shop."""
  enum Color { red, green }
  entity Item {
    key id: str
    qty: int "units in stock"
    color: Color = Color.red
  }
  state {
    items: table Item
  }
  query total() -> int {
    """Units in stock."""
    let n = 0
    for i in items {
      n += i.qty
    }
    return n
  }
  action add(id: str "the new item's id", qty: int) -> Item {
    """Add an item."""
    return items.insert(Item(id=id, qty=qty))
  }
  task one {
    """Add one item."""
    init {
      items = []
    }
    solution {
      add(id="a", qty=1)
    }
    check "one item": len(items) == 1 and items["a"].qty == 1
  }
}
'''


def _position(text: str, needle: str, extra: int = 0) -> Any:
    offset = text.index(needle) + extra
    line = text.count("\n", 0, offset)
    return lsp.Position(line, offset - (text.rfind("\n", 0, offset) + 1))


class Session:
    def __init__(self, client: LanguageClient, uri: str) -> None:
        self.client = client
        self.uri = uri
        self.diagnostics: asyncio.Queue[list[Any]] = asyncio.Queue()
        self.version = 1

    async def wait(self, awaitable: Awaitable[T]) -> T:
        return await asyncio.wait_for(awaitable, TIMEOUT)

    async def next_diagnostics(self) -> list[Any]:
        return await self.wait(self.diagnostics.get())

    def change(self, text: str) -> None:
        self.version += 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    version=self.version, uri=self.uri
                ),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def document(self) -> Any:
        return lsp.TextDocumentIdentifier(self.uri)


def _run(
    tmp_path: Path,
    scenario: Callable[[Session], Awaitable[None]],
    *,
    files: dict[str, str] | None = None,
    capabilities: Any = None,
) -> None:
    """Start the server, open shop.env (written with SPEC and `files` into tmp_path) and run
    the scenario."""

    async def main() -> None:
        client = LanguageClient("envdsl-test", "1")
        spec = tmp_path / "shop.env"
        spec.write_text(SPEC, encoding="utf-8")
        for name, text in (files or {}).items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        session = Session(client, spec.resolve().as_uri())

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: Any) -> None:
            session.diagnostics.put_nowait(params.diagnostics)

        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        await client.start_io(sys.executable, "-m", "envdsl", "lsp", env=environment)
        try:
            await session.wait(
                client.initialize_async(
                    lsp.InitializeParams(
                        capabilities=capabilities or lsp.ClientCapabilities(),
                        root_uri=tmp_path.as_uri(),
                    )
                )
            )
            client.initialized(lsp.InitializedParams())
            client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(session.uri, "envdsl", 1, SPEC))
            )
            await scenario(session)
        finally:  # also after a failure: a server left running would keep the test waiting
            await session.wait(client.shutdown_async(None))
            client.exit(None)
            await session.wait(client.stop())

    asyncio.run(main())


def test_diagnostics_and_their_fixes_as_code_actions(tmp_path: Path) -> None:
    async def scenario(session: Session) -> None:
        assert list(await session.next_diagnostics()) == []  # the spec and its task are fine
        broken = SPEC.replace("for i in items", "for i in itmes")
        session.change(broken)
        found = await session.next_diagnostics()
        assert [d.code for d in found] == ["E1001"]
        assert found[0].range.start == _position(broken, "itmes")
        actions = await session.wait(
            session.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    text_document=session.document(),
                    range=found[0].range,
                    context=lsp.CodeActionContext(diagnostics=found),
                )
            )
        )
        assert actions is not None and len(actions) == 1
        edit = actions[0].edit.changes[session.uri][0]
        assert (edit.new_text, edit.range) == ("items", found[0].range)

    _run(tmp_path, scenario)


def test_hover_definition_completion_and_symbols(tmp_path: Path) -> None:
    async def scenario(session: Session) -> None:
        await session.next_diagnostics()
        client, document = session.client, session.document()

        hover = await session.wait(
            client.text_document_hover_async(lsp.HoverParams(document, _position(SPEC, "i.qty", 3)))
        )
        assert hover is not None and "(field) Item.qty: int" in hover.contents.value
        assert "units in stock" in hover.contents.value

        tool = await session.wait(
            client.text_document_hover_async(
                lsp.HoverParams(document, _position(SPEC, 'add(id="a"'))
            )
        )
        assert "action add(id: str, qty: int) -> Item" in tool.contents.value
        assert "Add an item." in tool.contents.value

        for needle, extra, declared in [
            ("i.qty", 3, "qty: int"),  # a field
            ('add(id="a"', 0, "add(id: str"),  # a tool
            ("Color.red\n", 0, "Color { red"),  # an enum
            ("Color.red\n", 6, "red, green"),  # an enum member
            ("table Item", 6, "Item {"),  # an entity
            ("n += i", 0, "n = 0"),  # a local
        ]:
            location = await session.wait(
                client.text_document_definition_async(
                    lsp.DefinitionParams(document, _position(SPEC, needle, extra))
                )
            )
            assert isinstance(location, lsp.Location), needle
            assert location.range.start == _position(SPEC, declared), needle

        typing = SPEC.replace("      n += i.qty\n", "      n += i.\n")
        session.change(typing)
        await session.next_diagnostics()
        fields = await session.wait(
            client.text_document_completion_async(
                lsp.CompletionParams(document, _position(typing, "n += i.", 7))
            )
        )
        assert [item.label for item in fields.items] == ["id", "qty", "color"]

        in_solution = SPEC.replace(
            '      add(id="a", qty=1)\n', '      add(id="a", qty=1)\n      a\n'
        )
        session.change(in_solution)
        await session.next_diagnostics()
        tools = await session.wait(
            client.text_document_completion_async(
                lsp.CompletionParams(document, _position(in_solution, "      a\n", 7))
            )
        )
        assert sorted(item.label for item in tools.items) == ["add", "total"]

        session.change(SPEC)
        await session.next_diagnostics()
        symbols = await session.wait(
            client.text_document_document_symbol_async(lsp.DocumentSymbolParams(document))
        )
        (env,) = symbols
        assert env.name == "Shop"
        assert [s.name for s in env.children] == ["Color", "Item", "state", "total", "add", "one"]
        item = env.children[1]
        assert item.kind == lsp.SymbolKind.Class
        assert [f.name for f in item.children] == ["id", "qty", "color"]

    _run(tmp_path, scenario)


# ---- formatting and rename ----------------------------------------------------------------

TASKS = '''tasks for "shop.env" {
  task two {
    """Add two items."""
    init {
      items = []
    }
    solution {
      add(id="a", qty=1)
      add(id="b", qty=2)
    }
    check "two items": len(items) == 2 and items["a"].qty == 1 and items["b"].qty == 2
    check "added twice": calls("add") == 2 and called("add", qty=2)
  }
}
'''
RENAME_CAPABILITIES = lsp.ClientCapabilities(
    text_document=lsp.TextDocumentClientCapabilities(
        rename=lsp.RenameClientCapabilities(prepare_support=True)
    )
)


def _offset(text: str, position: Any) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: position.line]) + position.character


def _apply(text: str, edits: list[Any]) -> str:
    """The client's side of a TextEdit list (ASCII text: columns are characters)."""
    spans = [(_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _clean(spec: str, tasks: str) -> list[tuple[str, str]]:
    from envdsl.pipeline import check_source
    from envdsl.util.source import SourceFile

    result = check_source(SourceFile("shop.env", spec), task_files=[SourceFile("t.env", tasks)])
    return [(d.code.code, d.message) for d in result.diagnostics]


def test_formatting_gives_the_fmt_layout(tmp_path: Path) -> None:
    from envdsl.fmt import format_source
    from envdsl.util.source import SourceFile

    expected = format_source(SourceFile("shop.env", SPEC)).text
    assert expected is not None and expected != SPEC

    async def scenario(session: Session) -> None:
        await session.next_diagnostics()
        client, options = session.client, lsp.FormattingOptions(tab_size=2, insert_spaces=True)
        request = lsp.DocumentFormattingParams(session.document(), options)
        edits = await session.wait(client.text_document_formatting_async(request))
        assert edits is not None and len(edits) == 1
        assert edits[0].range.start == lsp.Position(0, 0)
        assert edits[0].range.end == lsp.Position(SPEC.count("\n"), 0)  # the whole text
        assert _apply(SPEC, edits) == expected
        session.change(expected)  # formatted already: nothing to do
        await session.next_diagnostics()
        assert list(await session.wait(client.text_document_formatting_async(request))) == []
        messy = expected.replace("    qty: int", "qty:int").replace("  state {", "\tstate{")
        session.change(messy)
        await session.next_diagnostics()
        assert _apply(messy, await session.wait(client.text_document_formatting_async(request)))
        session.change(SPEC.replace("for i in items", "for i in"))  # a syntax error
        await session.next_diagnostics()
        assert await session.wait(client.text_document_formatting_async(request)) is None

    _run(tmp_path, scenario)


def test_rename_across_the_spec_and_its_task_file(tmp_path: Path) -> None:
    task_uri = (tmp_path / "shop.tasks.env").resolve().as_uri()
    (tmp_path / "other.env").write_text(SPEC.replace("Shop", "Other"), encoding="utf-8")

    async def rename(
        session: Session, uri: str, text: str, needle: str, extra: int, new: str
    ) -> Any:
        request = lsp.RenameParams(
            lsp.TextDocumentIdentifier(uri), _position(text, needle, extra), new
        )
        return await session.wait(session.client.text_document_rename_async(request))

    async def scenario(session: Session) -> None:
        await session.next_diagnostics()
        client, uri = session.client, session.uri

        # the field qty, from the spec: not the parameter of the same name
        edit = await rename(session, uri, SPEC, "i.qty", 3, "stock")
        assert set(edit.changes) == {uri, task_uri}  # other.env is another env
        spec, tasks = _apply(SPEC, edit.changes[uri]), _apply(TASKS, edit.changes[task_uri])
        assert len(edit.changes[uri]) == 4 and len(edit.changes[task_uri]) == 2
        assert 'stock: int "units in stock"' in spec and "n += i.stock" in spec
        assert "Item(id=id, stock=qty)" in spec and 'items["a"].stock' in spec
        assert "qty: int) -> Item" in spec and 'items["b"].stock == 2' in tasks
        assert 'called("add", qty=2)' in tasks and _clean(spec, tasks) == []

        # the parameter qty, from the task file's solution (the file is not open: read from disk)
        edit = await rename(session, task_uri, TASKS, "qty=2)\n", 0, "count")
        spec, tasks = _apply(SPEC, edit.changes[uri]), _apply(TASKS, edit.changes[task_uri])
        assert "count: int) -> Item" in spec and "Item(id=id, qty=count)" in spec
        assert 'add(id="a", count=1)' in spec and 'add(id="b", count=2)' in tasks
        assert 'called("add", count=2)' in tasks and "i.qty" in spec
        assert _clean(spec, tasks) == []

        # the tool add, from the task file, with the names checks give as strings
        edit = await rename(session, task_uri, TASKS, 'calls("add")', 7, "stock_item")
        spec, tasks = _apply(SPEC, edit.changes[uri]), _apply(TASKS, edit.changes[task_uri])
        assert "action stock_item(" in spec and 'stock_item(id="a", qty=1)' in spec
        assert 'calls("stock_item")' in tasks and 'called("stock_item", qty=2)' in tasks
        assert _clean(spec, tasks) == []

        # prepareRename: the word and its name, or nothing where nothing can be renamed
        async def prepare(text: str, needle: str, extra: int = 0, target: str = uri) -> Any:
            request = lsp.PrepareRenameParams(
                lsp.TextDocumentIdentifier(target), _position(text, needle, extra)
            )
            return await session.wait(client.text_document_prepare_rename_async(request))

        found = await prepare(SPEC, "Color.red\n", 6)
        assert found.placeholder == "red"
        assert found.range == lsp.Range(
            _position(SPEC, "Color.red\n", 6), _position(SPEC, "Color.red\n", 9)
        )
        assert (await prepare(TASKS, "two {", 0, task_uri)).placeholder == "two"
        for needle in ("let n", "len(items)", "table Item", 'int "units'):
            assert await prepare(SPEC, needle) is None, needle

        # refused: a clash, a reserved word, no name at all
        for needle, extra, new, why in [
            ("i.qty", 3, "color", "would break the spec"),
            ("i.qty", 3, "for", "would break the spec"),
            ("i.qty", 3, "2x", "is not a name"),
            ("let n", 0, "m", "no name of this spec here"),
        ]:
            with pytest.raises(Exception, match=why):
                await rename(session, uri, SPEC, needle, extra, new)

    _run(
        tmp_path,
        scenario,
        files={"shop.tasks.env": TASKS},
        capabilities=RENAME_CAPABILITIES,
    )


# ---- the analysis behind the server, without the protocol -------------------------------------


def _analysis(text: str) -> Any:
    from envdsl.lsp.analysis import analyse

    return analyse("shop.env", text)


def test_a_keyword_argument_of_a_row_constructor_is_its_field() -> None:
    analysis = _analysis(SPEC)
    offset = SPEC.index("Item(id=id") + len("Item(")
    hover = analysis.hover(offset)
    assert hover is not None and hover[0].startswith("```envdsl\n(field) Item.id: str")
    assert analysis.definition(offset).start == SPEC.index("id: str")


def test_completion_of_enum_members_methods_and_initial_state() -> None:
    members = SPEC.replace("color: Color = Color.red", "color: Color = Color.")
    offset = members.index("Color.\n") + len("Color.")
    assert [c.label for c in _analysis(members).completions(offset)] == ["red", "green"]
    methods = SPEC.replace("      n += i.qty\n", "      n += i.qty\n      items.\n")
    offset = methods.index("items.\n") + len("items.")
    labels = [c.label for c in _analysis(methods).completions(offset)]
    assert "insert" in labels and "get" in labels
    initial = SPEC.replace('items["a"].qty == 1', 'items["a"].qty == initial.')
    offset = initial.index("initial.") + len("initial.")
    assert [c.label for c in _analysis(initial).completions(offset)] == ["items"]


def test_nothing_is_offered_where_nothing_fits() -> None:
    analysis = _analysis(SPEC)
    assert analysis.completions(SPEC.index("let n") + 2) == []
    assert analysis.hover(SPEC.index('"""A tiny')) is None
    assert analysis.definition(0) is None
