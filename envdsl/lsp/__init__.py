"""`envdsl lsp`: a language server (pygls, stdio) over the checker's own results.

analysis.py answers questions about one document by offset and needs no LSP library;
server.py speaks the protocol (pygls is imported only there, only by `envdsl lsp`).
"""
