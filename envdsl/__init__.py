"""envdsl: a typed DSL and compiler for tool-interaction environments of LLM agents."""

__version__ = "0.1.0"
