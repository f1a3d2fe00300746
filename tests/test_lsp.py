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


def _run(tmp_path: Path, scenario: Callable[[Session], Awaitable[None]]) -> None:
    async def main() -> None:
        client = LanguageClient("envdsl-test", "1")
        spec = tmp_path / "shop.env"
        spec.write_text(SPEC, encoding="utf-8")
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
                        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()
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
