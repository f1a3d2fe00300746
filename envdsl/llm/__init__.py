"""LLM authoring: write a spec with a chat model, check it, repair it from the diagnostics.

`envdsl synth` drives this package. Only `client` imports `openai`, and only when a client is
made, so the rest of envdsl never loads it.
"""
