"""Semantic stages: resolve names and imports, type-check, effects, lints."""
