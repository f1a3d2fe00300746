"""Syntax: the lark parser, the post-lexer, the typed AST and the tree-to-AST builder."""
