"""The language server: pygls over stdio, each request answered from an `Analysis`.

Diagnostics are published when a document opens, changes or is saved: as you type the static
stages run (fast); on open and save the tasks are run too, as `envdsl check` runs them.
A diagnostic's machine fixes are offered as quick-fix code actions. Formatting gives the
`envdsl fmt` layout; rename rewrites a name in the spec and its task files (rename.py), with
the text of open editors where a file is open.
"""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from envdsl import __version__
from envdsl.diagnostics.codes import Severity
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.lsp.analysis import Analysis, Symbol, analyse
from envdsl.lsp.bundle import spec_path, task_files_for
from envdsl.lsp.positions import to_line_col, to_offset, utf16_length
from envdsl.lsp.rename import Occurrences, RenameError, bundle_analysis, occurrences, rename
from envdsl.util.source import SourceFile, Span

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
}
_COMPLETION_KIND = {
    "field": lsp.CompletionItemKind.Field,
    "member": lsp.CompletionItemKind.EnumMember,
    "method": lsp.CompletionItemKind.Method,
    "tool": lsp.CompletionItemKind.Function,
}
_SYMBOL_KIND = {
    "env": lsp.SymbolKind.Module,
    "module": lsp.SymbolKind.Module,
    "enum": lsp.SymbolKind.Enum,
    "member": lsp.SymbolKind.EnumMember,
    "entity": lsp.SymbolKind.Class,
    "record": lsp.SymbolKind.Struct,
    "variant": lsp.SymbolKind.Enum,
    "field": lsp.SymbolKind.Field,
    "namespace": lsp.SymbolKind.Namespace,
    "state": lsp.SymbolKind.Variable,
    "const": lsp.SymbolKind.Constant,
    "fn": lsp.SymbolKind.Function,
    "tool": lsp.SymbolKind.Method,
    "task": lsp.SymbolKind.Event,
    "invariant": lsp.SymbolKind.Boolean,
}


class EnvdslServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "envdsl", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full
        )
        self.analyses: dict[str, Analysis] = {}
        self.uris: dict[str, str] = {}  # file path -> the URI the client gave for it

    def analysis(self, uri: str, *, verify: bool = False) -> Analysis:
        """The analysis of the document's current text (computed again only when it changed)."""
        text = self.workspace.get_text_document(uri).source
        known = self.analyses.get(uri)
        if known is None or known.source.text != SourceFile(known.source.path, text).text or verify:
            known = analyse(to_fs_path(uri) or uri, text, verify=verify)
            self.analyses[uri] = known
        return known

    def text_of(self, path: str) -> str | None:
        """A file's text: the open editor's, else the disk's (None when it cannot be read)."""
        uri = self.uris.get(path) or from_fs_path(path) or path
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            return str(document.source)
        try:
            return Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def bundle(self, uri: str) -> tuple[SourceFile, list[SourceFile], str]:
        """The document's spec and the spec's task files, as sources, and the document's path
        among them."""
        path = to_fs_path(uri) or uri
        self.uris[path] = uri
        text = self.workspace.get_text_document(uri).source
        spec = spec_path(path, text)
        roots = [to_fs_path(folder.uri) or folder.uri for folder in self.workspace.folders.values()]
        paths = [spec, *task_files_for(spec, self.text_of, roots)]
        sources = []
        for name in paths:
            known = text if name == path else self.text_of(name)
            if known is None:
                raise JsonRpcException(f"cannot read '{name}'", lsp.LSPErrorCodes.RequestFailed)
            sources.append(SourceFile(name, known))
        return sources[0], sources[1:], path

    def uri_of(self, path: str) -> str:
        return self.uris.get(path) or from_fs_path(path) or path

    def publish(self, uri: str, *, verify: bool) -> None:
        analysis = self.analysis(uri, verify=verify)
        diagnostics = [to_lsp_diagnostic(analysis.source, d) for d in analysis.diagnostics]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )


def to_range(source: SourceFile, span: Span) -> lsp.Range:
    start, end = to_line_col(source, span.start), to_line_col(source, span.end)
    return lsp.Range(lsp.Position(*start), lsp.Position(*end))


def to_lsp_diagnostic(source: SourceFile, diagnostic: Diagnostic) -> lsp.Diagnostic:
    message = diagnostic.message
    for note in diagnostic.notes:
        message += f"\nnote: {note}"
    if diagnostic.help:
        message += f"\nhelp: {diagnostic.help}"
    return lsp.Diagnostic(
        range=to_range(source, diagnostic.span),
        message=message,
        severity=_SEVERITY.get(diagnostic.severity, lsp.DiagnosticSeverity.Information),
        code=diagnostic.code.code,
        source="envdsl",
    )


def whole_document(text: str) -> lsp.Range:
    """The range of all of a document's text (LSP lines end at \\n, \\r\\n or \\r)."""
    lines = re.split(r"\r\n|\r|\n", text)
    return lsp.Range(lsp.Position(0, 0), lsp.Position(len(lines) - 1, utf16_length(lines[-1])))


def _symbol(source: SourceFile, symbol: Symbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=symbol.name,
        kind=_SYMBOL_KIND.get(symbol.kind, lsp.SymbolKind.Variable),
        range=to_range(source, symbol.span),
        selection_range=to_range(source, symbol.selection),
        children=[_symbol(source, child) for child in symbol.children],
    )


def create_server() -> EnvdslServer:
    server = EnvdslServer()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: EnvdslServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri, verify=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: EnvdslServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri, verify=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: EnvdslServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.publish(params.text_document.uri, verify=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: EnvdslServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.analyses.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: EnvdslServer, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis = ls.analysis(params.text_document.uri)
        offset = to_offset(analysis.source, params.position.line, params.position.character)
        found = analysis.hover(offset)
        if found is None:
            return None
        text, span = found
        content = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)
        return lsp.Hover(contents=content, range=to_range(analysis.source, span))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: EnvdslServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        analysis = ls.analysis(params.text_document.uri)
        offset = to_offset(analysis.source, params.position.line, params.position.character)
        span = analysis.definition(offset)
        if span is None:
            return None
        if span.file == analysis.source.path:
            return lsp.Location(params.text_document.uri, to_range(analysis.source, span))
        return _location_elsewhere(span)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["."]))
    def completion(ls: EnvdslServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        analysis = ls.analysis(params.text_document.uri)
        offset = to_offset(analysis.source, params.position.line, params.position.character)
        items = [
            lsp.CompletionItem(
                label=item.label,
                kind=_COMPLETION_KIND.get(item.kind, lsp.CompletionItemKind.Text),
                detail=item.detail or None,
            )
            for item in analysis.completions(offset)
        ]
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: EnvdslServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        analysis = ls.analysis(params.text_document.uri)
        return [_symbol(analysis.source, symbol) for symbol in analysis.symbols()]

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
    )
    def code_actions(ls: EnvdslServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        analysis = ls.analysis(uri)
        source = analysis.source
        start = to_offset(source, params.range.start.line, params.range.start.character)
        end = to_offset(source, params.range.end.line, params.range.end.character)
        actions = []
        for diagnostic in analysis.diagnostics:
            if diagnostic.span.start > end or diagnostic.span.end < start:
                continue
            for fix in diagnostic.fixes:
                if any(edit.span.file != source.path for edit in fix.edits):
                    continue
                edits = [lsp.TextEdit(to_range(source, e.span), e.replacement) for e in fix.edits]
                actions.append(
                    lsp.CodeAction(
                        title=fix.message,
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[to_lsp_diagnostic(source, diagnostic)],
                        edit=lsp.WorkspaceEdit(changes={uri: edits}),
                        is_preferred=len(diagnostic.fixes) == 1,
                    )
                )
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(
        ls: EnvdslServer, params: lsp.DocumentFormattingParams
    ) -> list[lsp.TextEdit] | None:
        """The `envdsl fmt` layout; nothing for a spec with errors (its diagnostics say why)."""
        from envdsl.fmt import format_source

        uri = params.text_document.uri
        text = ls.workspace.get_text_document(uri).source
        formatted = format_source(SourceFile(to_fs_path(uri) or uri, text)).text
        if formatted is None:
            return None
        return [] if formatted == text else [lsp.TextEdit(whole_document(text), formatted)]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(
        ls: EnvdslServer, params: lsp.PrepareRenameParams
    ) -> lsp.PrepareRenamePlaceholder | None:
        spec, task_files, path = ls.bundle(params.text_document.uri)
        here = next(source for source in (spec, *task_files) if source.path == path)
        offset = to_offset(here, params.position.line, params.position.character)
        found = occurrences(bundle_analysis(spec, task_files), path, offset)
        word = _word_at(found, path, offset) if found is not None else None
        if found is None or word is None:
            return None
        return lsp.PrepareRenamePlaceholder(to_range(here, word), found.name)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename_name(ls: EnvdslServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit:
        spec, task_files, path = ls.bundle(params.text_document.uri)
        sources = {source.path: source for source in (spec, *task_files)}
        here = sources[path]
        offset = to_offset(here, params.position.line, params.position.character)
        try:
            edits = rename(spec, task_files, path, offset, params.new_name)
        except RenameError as error:
            raise JsonRpcException(str(error), lsp.LSPErrorCodes.RequestFailed) from None
        changes = {
            ls.uri_of(file): [
                lsp.TextEdit(to_range(sources[file], span), text) for span, text in file_edits
            ]
            for file, file_edits in edits.items()
        }
        return lsp.WorkspaceEdit(changes=changes)

    return server


def _word_at(found: Occurrences, path: str, offset: int) -> Span | None:
    return next(
        (s for s in found.spans if s.file == path and s.start <= offset <= s.end),
        None,
    )


def _location_elsewhere(span: Span) -> lsp.Location | None:
    """A declaration in another file (a stdlib module)."""
    from pathlib import Path

    path = Path(span.file)
    try:
        source = SourceFile(span.file, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return lsp.Location(path.resolve().as_uri(), to_range(source, span))


def serve() -> None:
    create_server().start_io()
